package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/tokenizer"
)

func qwenPaths(t testing.TB) (tok, tmpl string) {
	return sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json"),
		sharedpath.Path(t, "tokenizer", "qwen3", "chat_template.jinja")
}

// sameTree fails unless dirs a and b hold the same file names with the same
// bytes (diff -r).
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	ea, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := os.ReadDir(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(eb) {
		t.Fatalf("%s has %d entries, %s has %d", a, len(ea), b, len(eb))
	}
	for i := range ea {
		if ea[i].Name() != eb[i].Name() {
			t.Fatalf("entry %d: %s vs %s", i, ea[i].Name(), eb[i].Name())
		}
		da, _ := os.ReadFile(filepath.Join(a, ea[i].Name()))
		db, _ := os.ReadFile(filepath.Join(b, eb[i].Name()))
		if !bytes.Equal(da, db) {
			t.Errorf("%s differs", ea[i].Name())
		}
	}
}

// TestBuildReproducesCommittedBundle rebuilds the bundle from the shared
// tokenizer and template and compares it byte for byte with the committed one.
func TestBuildReproducesCommittedBundle(t *testing.T) {
	t.Parallel()
	tok, tmpl := qwenPaths(t)
	out := filepath.Join(t.TempDir(), "bundle")
	r := runIn(t, t.TempDir(), "", "bench", "corpus", "build", "--tokenizer", tok, "--template", tmpl, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sameTree(t, out, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName))
	if !strings.Contains(r.stdout, protocol.StandIn().CorpusSHA256) || !strings.Contains(r.stdout, "identical to the bundle of "+protocol.StandInID) {
		t.Errorf("stdout does not report the protocol's corpus SHA:\n%s", r.stdout)
	}
	for _, want := range []string{"4k   225 records -> 4089 tokens", "16k  908 records -> 16384 tokens"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestBuildFromGGUF writes the same tokenizer and template into a GGUF's
// metadata (as llama.cpp's converter lays them out) and builds from it alone.
func TestBuildFromGGUF(t *testing.T) {
	t.Parallel()
	tokPath, tmplPath := qwenPaths(t)
	model := filepath.Join(t.TempDir(), "tiny-qwen3.gguf")
	kvs, err := tokenizer.GGUFMetadata(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(tmplPath)
	if err != nil {
		t.Fatal(err)
	}
	kvs = append([]gguf.KV{{Key: "general.architecture", Value: "qwen3"}}, kvs...)
	kvs = append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: string(src)})
	if err := gguf.Write(model, kvs); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	r := runIn(t, t.TempDir(), "", "bench", "corpus", "build", "--tokenizer", model, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// build.json names other inputs, so compare every fixture, not the manifest.
	committed := filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName)
	for _, req := range protocol.Schedule(true) {
		a, _ := os.ReadFile(filepath.Join(out, req.ID+".json"))
		b, _ := os.ReadFile(filepath.Join(committed, req.ID+".json"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the committed fixture", req.ID)
		}
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	// Default: the checkout's bundle, when the working folder has one; it
	// is the spec's bundle, so a copy of the stand-in's there is refused
	// naming both corpus SHAs, though its build.json names the
	// stand-in and every file matches its manifest.
	checkout := t.TempDir()
	copyDir(t, filepath.Join(root, "bench", "prompts", protocol.StandInBundleName), filepath.Join(checkout, "bench", "prompts", "standard-v1"))
	spec, _ := protocol.Known().Lookup(protocol.SpecID)
	for _, args := range [][]string{nil, {filepath.Join("bench", "prompts", "standard-v1")}} {
		r := runIn(t, checkout, "", append([]string{"bench", "corpus", "verify"}, args...)...)
		if r.code != exitcode.Failed || !strings.Contains(r.stdout, "bench/prompts/standard-v1") ||
			!strings.Contains(r.stdout, spec.CorpusSHA256) || !strings.Contains(r.stdout, protocol.StandIn().CorpusSHA256) {
			t.Fatalf("verify %v of a checkout whose standard-v1 is the stand-in's: exit %d, want 1 naming both corpus SHAs\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	// A copy anywhere else is verified for the protocol its build.json
	// names.
	elsewhere := filepath.Join(t.TempDir(), protocol.StandInBundleName)
	copyDir(t, filepath.Join(root, "bench", "prompts", protocol.StandInBundleName), elsewhere)
	if r := runIn(t, checkout, "", "bench", "corpus", "verify", elsewhere); r.code != 0 {
		t.Fatalf("verify of a copy elsewhere: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Elsewhere: the embedded bundle.
	if r := runIn(t, t.TempDir(), "", "bench", "corpus", "verify"); r.code != 0 || !strings.Contains(r.stdout, "embedded") {
		t.Fatalf("verify embedded: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	src := filepath.Join(root, "bench", "prompts", protocol.StandInBundleName)
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"one byte changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "sanity-I1.json")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			mustWrite(t, p, string(b))
		}, "sanity-I1.json: SHA-256 is"},
		{"file missing", func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, "warmup.json")) }, "warmup.json: listed in the manifest but missing"},
		{"extra file", func(t *testing.T, dir string) { mustWrite(t, filepath.Join(dir, "extra.json"), "{}") }, "extra.json: not listed"},
		{"CRLF line endings", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "build.json")
			b, _ := os.ReadFile(p)
			mustWrite(t, p, strings.ReplaceAll(string(b), "\n", "\r\n"))
		}, "build.json: SHA-256 is"},
		{"manifest rewritten to match", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "MANIFEST.sha256")
			b, _ := os.ReadFile(p)
			// Drop build.json's line and the file: every listed file still
			// matches, but the manifest no longer hashes to the protocol's SHA.
			lines := strings.SplitAfter(string(b), "\n")
			mustWrite(t, p, strings.Join(lines[1:], ""))
			mustRemove(t, filepath.Join(dir, "build.json"))
		}, "MANIFEST.sha256: SHA-256 is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			copyDir(t, src, dir)
			c.mutate(t, dir)
			r := runIn(t, t.TempDir(), "", "bench", "corpus", "verify", dir)
			if r.code != exitcode.Failed {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, r.stdout)
			}
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildBadInput: each bad input gives one clear error naming the file,
// exit 1, and no bundle (not even a partial one).
func TestBuildBadInput(t *testing.T) {
	t.Parallel()
	tok, tmpl := qwenPaths(t)
	dir := t.TempDir()
	otherModel := filepath.Join(dir, "wordpiece.json")
	mustWrite(t, otherModel, `{"model":{"type":"WordPiece","vocab":{"a":0}}}`)
	notJSON := filepath.Join(dir, "broken.json")
	mustWrite(t, notJSON, `{"model":`)
	syntax := filepath.Join(dir, "syntax.jinja")
	mustWrite(t, syntax, `{% for m in messages %}{{ m.content }}`)
	raises := filepath.Join(dir, "raises.jinja")
	mustWrite(t, raises, `{{ raise_exception('System role not supported') }}`)
	noTok := filepath.Join(dir, "no-tokenizer.gguf")
	if err := gguf.Write(noTok, []gguf.KV{{Key: "general.architecture", Value: "qwen3"}}); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "exists")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		tok, tmpl string
		out       string
		want      []string
	}{
		{"missing tokenizer", filepath.Join(dir, "nope.json"), tmpl, "", []string{"nope.json", "no such file"}},
		{"another model type", otherModel, tmpl, "", []string{"wordpiece.json", `model.type is "WordPiece"`}},
		{"not JSON", notJSON, tmpl, "", []string{"broken.json", "not a tokenizer.json"}},
		{"missing template", tok, filepath.Join(dir, "nope.jinja"), "", []string{"nope.jinja", "no such file"}},
		{"template syntax error", tok, syntax, "", []string{"syntax.jinja", "syntax"}},
		{"template raises", tok, raises, "", []string{"System role not supported"}},
		{"GGUF without tokenizer", noTok, "", "", []string{"no-tokenizer.gguf", "no tokenizer metadata"}},
		{"output exists", tok, tmpl, existing, []string{"exists", "already exists"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := c.out
			if out == "" {
				out = filepath.Join(t.TempDir(), "bundle")
			}
			args := []string{"bench", "corpus", "build", "--tokenizer", c.tok, "--out", out}
			if c.tmpl != "" {
				args = append(args, "--template", c.tmpl)
			}
			r := runIn(t, dir, "", args...)
			if r.code != exitcode.Failed {
				t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
			if c.out == "" {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a bundle folder was left behind: %v", err)
				}
				leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".bundle.tmp-*"))
				if len(leftovers) > 0 {
					t.Errorf("temporary folders left behind: %v", leftovers)
				}
			}
		})
	}
}

// TestBuildFromAPack: the Qwen3 tokenizer written as a Strata pack's
// tokenizer folder (vocab.json, merges.txt, token_type.json, Strata's
// tokenizer.json) rebuilds every fixture of the embedded bundle byte for
// byte, and build.json names the pack's files as the tokenizer's inputs.
func TestBuildFromAPack(t *testing.T) {
	t.Parallel()
	tokPath, tmplPath := qwenPaths(t)
	pack := filepath.Join(t.TempDir(), "pack", "tokenizer")
	if err := tokenizer.WritePack(tokPath, pack); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle")
	r := runIn(t, t.TempDir(), "", "bench", "corpus", "build", "--tokenizer", pack, "--template", tmplPath, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	committed := filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName)
	for _, req := range protocol.Schedule(true) {
		a, _ := os.ReadFile(filepath.Join(out, req.ID+".json"))
		b, _ := os.ReadFile(filepath.Join(committed, req.ID+".json"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the committed fixture", req.ID)
		}
	}
	var build struct {
		Inputs struct {
			Tokenizer []struct{ Name string } `json:"tokenizer"`
		} `json:"inputs"`
	}
	data, _ := os.ReadFile(filepath.Join(out, "build.json"))
	if err := json.Unmarshal(data, &build); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range build.Inputs.Tokenizer {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "vocab.json merges.txt token_type.json tokenizer.json" {
		t.Errorf("build.json names the tokenizer's inputs %v", names)
	}
}

// TestBuildUnderAProtocolRefusesAnotherCorpus: a bundle built
// for the spec's protocol (--protocol, or the default inside a Strata
// checkout) whose corpus SHA-256 is not the spec's is refused, naming
// both SHAs, and nothing is written under --out: every run would refuse
// that bundle.
func TestBuildUnderAProtocolRefusesAnotherCorpus(t *testing.T) {
	t.Parallel()
	tok, tmpl := qwenPaths(t)
	spec, _ := protocol.Known().Lookup(protocol.SpecID)
	checkout := t.TempDir()
	copyDir(t, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName), filepath.Join(checkout, "bench", "prompts", protocol.BundleName))
	for _, c := range []struct {
		name, dir string
		args      []string
	}{
		{"--protocol " + protocol.SpecID, t.TempDir(), []string{"--protocol", protocol.SpecID}},
		{"the default in a checkout", checkout, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "bundle")
			r := runIn(t, c.dir, "", append([]string{"bench", "corpus", "build", "--tokenizer", tok, "--template", tmpl, "--out", out}, c.args...)...)
			if r.code != exitcode.Failed || !strings.Contains(r.stderr, spec.CorpusSHA256) || !strings.Contains(r.stderr, protocol.SpecID) {
				t.Fatalf("exit %d, want 1 naming the spec's corpus SHA-256\n%s%s", r.code, r.stdout, r.stderr)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left in --out's folder: %v", left)
			}
		})
	}
}
