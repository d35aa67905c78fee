package gguf

import (
	"fmt"
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

// TestOpenWithoutLists: without its lists' values a file answers the same
// strings, numbers, list lengths and summary, and no list.
func TestOpenWithoutLists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.gguf")
	err := Write(path, []KV{
		{"general.architecture", "qwen3"},
		{"general.name", "m"},
		{"tokenizer.ggml.tokens", []string{"a", "b", "ab"}},
		{"tokenizer.ggml.token_type", []int32{1, 1, 3}},
		{"tokenizer.chat_template", "{{ messages }}"},
		{"qwen3.context_length", uint32(32768)},
	})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := OpenWithoutLists(path)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(full.Summary()), fmt.Sprint(lean.Summary()); a != b || !strings.Contains(b, "tokenizer_tokens:{3 ") {
		t.Errorf("summary %s, without lists %s", a, b)
	}
	if tmpl, ok := lean.String("tokenizer.chat_template"); !ok || tmpl != "{{ messages }}" {
		t.Errorf("template %q %v", tmpl, ok)
	}
	if toks, ok := lean.Strings("tokenizer.ggml.tokens"); ok || toks != nil {
		t.Errorf("tokens read without lists: %v", toks)
	}
	if types, ok := lean.Ints("tokenizer.ggml.token_type"); ok || types != nil {
		t.Errorf("types read without lists: %v", types)
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
