//go:build linux

package realengine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The real Ollama of ../shared/engines/ollama (0.32.11, built from its Go
// module, with its llama-server helper in lib/ollama), started on a free
// loopback port with its models and home in temporary folders, the tiny
// Qwen3 models of ../shared/engines/llama.cpp created in it from their
// GGUF files (no network: the package's README says how).

// OllamaDir is the engine package: ../shared/engines/ollama.
func OllamaDir(tb testing.TB) string {
	tb.Helper()
	return enginePackage(tb, "ollama", "ollama")
}

// OllamaOptions shape an Ollama server.
type OllamaOptions struct {
	// Models are created in it from these GGUF models (Thinker, ...),
	// each under its name without ".gguf" (Ollama lists it with the tag
	// ":latest").
	Models []string
	// Parallel and Context are OLLAMA_NUM_PARALLEL and
	// OLLAMA_CONTEXT_LENGTH (defaults 1 and 20480: the 16K fixtures need
	// 20480).
	Parallel, Context int
}

// Ollama is a running Ollama server.
type Ollama struct {
	URL string
	// LogFile is its server log: Ollama writes it to its output only, so
	// the test keeps that in a file too, for bench run --engine-log.
	LogFile string
	env     []string
	bin     string
	*process
}

// OllamaModel is the name Ollama lists a model created by StartOllama
// under.
func OllamaModel(gguf string) string { return strings.TrimSuffix(gguf, ".gguf") + ":latest" }

// StartOllama starts `ollama serve`, waits until GET /api/version answers
// 200 and creates its models. It is killed (its process group, the
// llama-server helper included) when the test ends.
func StartOllama(tb testing.TB, o OllamaOptions) *Ollama {
	tb.Helper()
	dir := OllamaDir(tb)
	parallel, ctx := o.Parallel, o.Context
	if parallel == 0 {
		parallel = 1
	}
	if ctx == 0 {
		ctx = 20480
	}
	port := FreePort(tb)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	models, home := tb.TempDir(), tb.TempDir()
	s := &Ollama{URL: "http://" + host, bin: filepath.Join(dir, "bin", "ollama"),
		env: append(os.Environ(), "OLLAMA_HOST="+host, "OLLAMA_MODELS="+models, "HOME="+home, "OLLAMA_NO_CLOUD=1",
			fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", parallel), fmt.Sprintf("OLLAMA_CONTEXT_LENGTH=%d", ctx))}
	s.LogFile = filepath.Join(tb.TempDir(), "ollama.log")
	log, err := os.Create(s.LogFile)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := log.Close(); err != nil {
			tb.Errorf("close %s: %v", s.LogFile, err)
		}
	})
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	s.process = startProcess(tb, cmd, s.URL+"/api/version", log)
	for _, m := range o.Models {
		s.Create(tb, m)
	}
	return s
}

// Create creates a model from one of ../shared/engines/llama.cpp's GGUF
// models (`ollama create NAME -f Modelfile`, FROM the file).
func (s *Ollama) Create(tb testing.TB, gguf string) {
	tb.Helper()
	modelfile := filepath.Join(tb.TempDir(), "Modelfile")
	if err := os.WriteFile(modelfile, []byte("FROM "+Model(tb, gguf)+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(s.bin, "create", strings.TrimSuffix(gguf, ".gguf"), "-f", modelfile)
	cmd.Env = s.env
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("ollama create %s: %v\n%s\n%s", gguf, err, out, s.Log())
	}
}
