package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/provenance"
	"github.com/strata-bench/strata/internal/record"
)

// hostileInput is one place an operator, a server or a model file puts
// text into a result folder: apply puts it into the harness that a shared
// execution of the protocol is finished with (its identity, with the
// command line as `bench run` writes it, or its facts).
type hostileInput struct {
	name  string
	apply func(t testing.TB, h *harness)
}

// hostileValues are what a flag value can hold that a person did not
// type on purpose, or did: lines, a terminal's escapes, a bidirectional
// override, bytes that are not UTF-8, and the shell's quoting characters.
var hostileValues = map[string]string{
	"a newline":          "line one\nline two",
	"CRLF":               "line one\r\nline two",
	"a tab":              "a\tb",
	"terminal escapes":   "\x1b]0;pwned\x07\x1b[2J",
	"a bidi override":    "model\u202e.gguf",
	"invalid UTF-8":      "a\xff\xfeb",
	"the shell's quotes": `C:\x 'single' "double" $HOME` + " `id`",
}

// identityFlags are bench run's flags that declare the identity, and where
// each goes; the command line holds every flag.
var identityFlags = []struct {
	flag string
	set  func(id *record.Identity, v string)
}{
	{"track-notes", func(id *record.Identity, v string) { id.TrackNotes = &v }},
	{"model-revision", func(id *record.Identity, v string) { id.ModelRevision = &v }},
	{"source-revision", func(id *record.Identity, v string) { id.SourceRevision = &v }},
	{"tokenizer-revision", func(id *record.Identity, v string) { id.TokenizerRevision = &v }},
	{"quantization", func(id *record.Identity, v string) { id.Quantization = &v }},
	{"custom-pack", func(id *record.Identity, v string) { id.CustomPack = &v }},
	{"background", func(id *record.Identity, v string) { id.Background = []string{v} }},
	{"build-options", func(id *record.Identity, v string) { id.BuildOptions = []string{v} }},
	{"results-dir", func(*record.Identity, string) {}},
}

// declaredFlag is a flag given v: the identity it declares, and the command
// line as bench run writes it.
func declaredFlag(flag string, set func(*record.Identity, string), v string) hostileInput {
	return hostileInput{"--" + flag, func(_ testing.TB, h *harness) {
		id := record.Identity{Track: protocol.TrackCustom, Command: "strata bench run --simulate --" + flag + "=" + escape.ShellWord(v)}
		set(&id, v)
		h.identity = &id
	}}
}

// modelFile is a model file named name in a folder of its own, whose GGUF
// general.name is ggufName, found through the server's model_path
// modelPath (relative to that folder): the facts a run gathers of it.
func modelFile(name, modelPath, ggufName string) func(t testing.TB, h *harness) {
	return func(t testing.TB, h *harness) {
		dir := t.TempDir()
		if err := gguf.Write(filepath.Join(dir, name), []gguf.KV{{Key: "general.architecture", Value: "qwen3"}, {Key: "general.name", Value: ggufName}}); err != nil {
			t.Fatal(err)
		}
		inst := install.Info{Commit: strings.Repeat("ab", 20), From: install.FromStamp, Source: "the binary's embedded VCS stamp", Kind: "source"}
		f := provenance.Gather(context.Background(), provenance.Inputs{Install: inst, ModelPath: modelPath, EngineDir: dir})
		f.Protocol = protocol.StandIn()
		for k, v := range conformingFacts().Missing {
			f.Missing[k] = v
		}
		h.facts = &f
	}
}

// hostileInputs are every hostile input a folder is written from: each
// identity flag with each hostile value, then the server's model_path and
// the model file's GGUF strings. Add a row for each new place text enters
// a result (an API key, a power tool's output, …).
func hostileInputs() []hostileInput {
	var out []hostileInput
	for _, f := range identityFlags {
		for what, v := range hostileValues {
			in := declaredFlag(f.flag, f.set, v)
			in.name += " with " + what
			out = append(out, in)
		}
	}
	return append(out,
		hostileInput{"a Windows server's model_path", modelFile("x.gguf", `C:\models\qwen\Qwen3-8B-Q4_K_M.gguf`, "Qwen3-8B")},
		hostileInput{"a relative model_path with backslashes", modelFile(`models\Qwen3-8B.gguf`, `models\Qwen3-8B.gguf`, "Qwen3-8B")},
		hostileInput{"a model file named with a newline", modelFile("Qwen3\n8B.gguf", "Qwen3\n8B.gguf", "Qwen3-8B")},
		hostileInput{"a model file named in invalid UTF-8", modelFile("Qwen3\xff8B.gguf", "Qwen3\xff8B.gguf", "Qwen3-8B")},
		hostileInput{"a GGUF general.name in invalid UTF-8", modelFile("x.gguf", "x.gguf", "Qwen3\xff-8B")},
		hostileInput{"a GGUF general.name with terminal escapes", modelFile("x.gguf", "x.gguf", "Qwen3\n\x1b[2J-8B")},
		hostileInput{"a GGUF general.name of 100 MB", modelFile("x.gguf", "x.gguf", "Qwen3-8B "+strings.Repeat("Q", 100<<20))},
	)
}

// TestNothingStrataWritesFailsItsValidator: a folder written from each
// hostile input is valid as `strata bench report` validates it. One
// execution is finished with each.
func TestNothingStrataWritesFailsItsValidator(t *testing.T) {
	t.Parallel()
	run := harness{}.executeOnce(t)
	for _, in := range hostileInputs() {
		t.Run(in.name, func(t *testing.T) {
			var h harness
			in.apply(t, &h)
			o := run.finishCopy(t, h)
			o.mustBeValid(t)
			st, err := os.Stat(filepath.Join(o.dir, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() > 1<<20 {
				t.Errorf("results.json is %d bytes; a run's is some 60 KB", st.Size())
			}
		})
	}
}
