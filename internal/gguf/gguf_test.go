package gguf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.gguf")
	err := Write(path, []KV{
		{"general.architecture", "qwen3"},
		{"tokenizer.ggml.tokens", []string{"a", "b", "ab"}},
		{"tokenizer.ggml.token_type", []int32{1, 1, 3}},
		{"qwen3.context_length", uint32(32768)},
		{"general.flag", true},
		{"general.f", float32(1.5)},
		{"general.n", uint64(7)},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Architecture() != "qwen3" {
		t.Errorf("architecture %q", f.Architecture())
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); !ok || !slices.Equal(toks, []string{"a", "b", "ab"}) {
		t.Errorf("tokens %v %v", toks, ok)
	}
	if types, ok := f.Ints("tokenizer.ggml.token_type"); !ok || !slices.Equal(types, []int64{1, 1, 3}) {
		t.Errorf("types %v %v", types, ok)
	}
	if _, ok := f.String("missing"); ok {
		t.Error("missing key found")
	}
	if _, ok := f.Strings("general.architecture"); ok {
		t.Error("a string read as an array")
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "nope.gguf")); err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("not a gguf file at all"), 0o644)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "bad.gguf") {
		t.Errorf("garbage: %v", err)
	}
	if err := Write(filepath.Join(dir, "x.gguf"), []KV{{"k", 3.5}}); err == nil {
		t.Error("unsupported value type accepted")
	}
}
