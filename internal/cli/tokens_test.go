package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/tokenizer"
)

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type tokenCount struct {
	Count int   `json:"count"`
	IDs   []int `json:"ids"`
}

// TestTokensAgreesWithVectors runs the tokens command's path (stdin text, or
// a vector line given as --messages) on every line of both vector files,
// loading the tokenizer once.
func TestTokensAgreesWithVectors(t *testing.T) {
	t.Parallel()
	tokPath, tmplPath := qwenPaths(t)
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range readLines(t, sharedpath.Path(t, "vectors", "tokenizer-qwen3.jsonl")) {
		var v struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		env := procstate.State{Stdin: strings.NewReader(v.Text)}
		text, err := promptText(context.Background(), env, "", "", "", "")
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var out bytes.Buffer
		if err := writeTokens(context.Background(), &out, tok, text, true); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var got tokenCount
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Count != len(v.IDs) || !slices.Equal(got.IDs, nonNil(v.IDs)) {
			t.Errorf("tokenizer line %d: got %d ids, want %d", i+1, got.Count, len(v.IDs))
		}
	}
	dir := t.TempDir()
	lines := readLines(t, sharedpath.Path(t, "vectors", "chat-template-qwen3.jsonl"))
	for i, line := range lines {
		var v struct {
			Name       string          `json:"name"`
			Kwargs     json.RawMessage `json:"kwargs"`
			TokenCount int             `json:"token_count"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		msgFile := filepath.Join(dir, v.Name+".json")
		if err := os.WriteFile(msgFile, line, 0o644); err != nil {
			t.Fatal(err)
		}
		env := procstate.State{Dir: dir}
		text, err := promptText(context.Background(), env, msgFile, "", tmplPath, "")
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		var out bytes.Buffer
		if err := writeTokens(context.Background(), &out, tok, text, true); err != nil {
			t.Fatal(err)
		}
		var got tokenCount
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Count != v.TokenCount {
			t.Errorf("chat-template line %d (%s): %d tokens, want %d", i+1, v.Name, got.Count, v.TokenCount)
		}
	}
	if len(lines) != 48 {
		t.Fatalf("read %d chat-template lines, want 48", len(lines))
	}
}

// TestTokensCommand runs the whole command in process for the output forms.
func TestTokensCommand(t *testing.T) {
	t.Parallel()
	tokPath, tmplPath := qwenPaths(t)
	r := runIn(t, t.TempDir(), "Hello world", "tokens", "--tokenizer", tokPath)
	if r.code != 0 || r.stdout != "[9707,1879]\n2 tokens\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, t.TempDir(), "", "tokens", "--tokenizer", tokPath, "--json")
	if r.code != 0 || r.stdout != "{\"count\":0,\"ids\":[]}\n" {
		t.Fatalf("empty stdin: exit %d stdout %q", r.code, r.stdout)
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.json"), `[{"role":"user","content":"[case warmup]\nExplain how a hash table finds a value, including collisions and one small example."}]`)
	r = runIn(t, dir, "", "tokens", "--tokenizer", tokPath, "--template", tmplPath, "--messages", "m.json", "--json")
	var got tokenCount
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.Count != 30 {
		t.Fatalf("warmup messages: exit %d stdout %q stderr %q (want 30 tokens)", r.code, r.stdout, r.stderr)
	}
	// The same chat without a generation prompt loses "<|im_start|>assistant\n".
	r = runIn(t, dir, "", "tokens", "--tokenizer", tokPath, "--template", tmplPath, "--messages", "m.json",
		"--kwargs", `{"add_generation_prompt":false}`, "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.Count != 27 {
		t.Fatalf("--kwargs: exit %d stdout %q stderr %q (want 27 tokens)", r.code, r.stdout, r.stderr)
	}
	r = runIn(t, dir, "\xff\xfe", "tokens", "--tokenizer", tokPath)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "not valid UTF-8") {
		t.Fatalf("invalid UTF-8: exit %d stderr %q", r.code, r.stderr)
	}
	mustWrite(t, filepath.Join(dir, "bad.json"), `{"role":"user"}`)
	r = runIn(t, dir, "", "tokens", "--tokenizer", tokPath, "--template", tmplPath, "--messages", "bad.json")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "bad.json") {
		t.Fatalf("bad messages: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestTokensStopsOnASignal: waiting on a terminal's stdin, tokens ends at
// the first signal with the interrupted exit code.
func TestTokensStopsOnASignal(t *testing.T) {
	t.Parallel()
	tok := sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json")
	// Never written: a terminal nobody types into (a pipe's Close always
	// returns nil).
	pr, pw := io.Pipe()
	defer func() { _ = pw.Close() }()
	sigs := make(chan os.Signal, 1)
	var out, errb bytes.Buffer
	env := testEnv(t, t.TempDir(), pr, &out, &errb)
	env.Signals = sigs
	code := make(chan int)
	go func() { code <- Run(context.Background(), []string{"tokens", "--tokenizer", tok}, env) }()
	sigs <- syscall.SIGTERM
	select {
	case c := <-code:
		if c != exitcode.Interrupted || !strings.Contains(errb.String(), "SIGTERM") {
			t.Errorf("exit %d, %s", c, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("tokens did not stop on SIGTERM")
	}
}

// TestTokensRefusesAHostileTemplate: a macro that calls itself without end
// and a template of 4 MB, in a file or a GGUF's metadata, each end tokens
// with exit 1 and a message naming the template, not with a crash or
// minutes of parsing.
func TestTokensRefusesAHostileTemplate(t *testing.T) {
	t.Parallel()
	tokPath, _ := qwenPaths(t)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.json"), `[{"role":"user","content":"hi"}]`)
	mustWrite(t, filepath.Join(dir, "recursive.jinja"), `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`)
	huge := strings.Repeat("{{ messages[0].content }}\n", 4<<20/26)
	mustWrite(t, filepath.Join(dir, "huge.jinja"), huge)
	if err := gguf.Write(filepath.Join(dir, "huge.gguf"), []gguf.KV{{Key: "general.architecture", Value: "qwen3"}, {Key: "tokenizer.chat_template", Value: huge}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{"recursive.jinja", "macro calls nest too deeply"},
		{"huge.jinja", "huge.jinja: the template exceeds strata's bounds: the template is 4194294 bytes"},
		{"huge.gguf", "huge.gguf: the template exceeds strata's bounds: the template is 41942"},
	} {
		r := runIn(t, dir, "", "tokens", "--tokenizer", tokPath, "--template", c.file, "--messages", "m.json")
		if r.code != exitcode.Failed || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 saying %q", c.file, r.code, r.stderr, c.want)
		}
	}
}
