package gguf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWriteRead: what gguf writes reads back as written.
func TestWriteRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.gguf")
	err := Write(path, []KV{
		{Key: "general.architecture", Value: "qwen3"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"a", "b", "ab"}},
		{Key: "tokenizer.ggml.token_type", Value: []int32{1, 1, 3}},
		{Key: "qwen3.context_length", Value: uint32(32768)},
		{Key: "general.flag", Value: true},
		{Key: "general.f", Value: float32(1.5)},
		{Key: "general.n", Value: uint64(7)},
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
		{Key: "general.architecture", Value: "qwen3"},
		{Key: "general.name", Value: "m"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"a", "b", "ab"}},
		{Key: "tokenizer.ggml.token_type", Value: []int32{1, 1, 3}},
		{Key: "tokenizer.chat_template", Value: "{{ messages }}"},
		{Key: "qwen3.context_length", Value: uint32(32768)},
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
	if err := os.WriteFile(bad, []byte("not a gguf file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "bad.gguf") {
		t.Errorf("garbage: %v", err)
	}
}

// TestSummaryStringsAreText: a string the summary keeps is valid UTF-8 and
// at most MaxText bytes, and its source says what was replaced or cut (a
// result keeps the summary, and a 100 MB name would make it 200 MB).
func TestSummaryStringsAreText(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.gguf")
	long := strings.Repeat("é", MaxText) // 2 bytes each: cut inside none
	err := Write(path, []KV{
		{Key: "general.architecture", Value: "qwen3"},
		{Key: "general.name", Value: "Qwen3\xff\xfe-8B"},
		{Key: "general.basename", Value: long},
		{Key: "general.finetune", Value: "Instruct"},
		{Key: "general.base_model.count", Value: uint32(1)},
		{Key: "general.base_model.0.name", Value: "Qwen3\xff"},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenWithoutLists(path)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Summary()
	for _, c := range []struct {
		fact   string
		value  any
		source string
	}{
		{"name", "Qwen3\uFFFD-8B", "GGUF general.name (bytes that are not UTF-8 are U+FFFD)"},
		{"basename", long[:MaxText], fmt.Sprintf("GGUF general.basename (cut to its first %d of %d bytes)", MaxText, len(long))},
		{"finetune", "Instruct", "GGUF general.finetune"},
		{"base_models", []string{"Qwen3\uFFFD"}, "GGUF general.base_model.N.organization and .name (bytes that are not UTF-8 are U+FFFD)"},
	} {
		if got := s[c.fact]; fmt.Sprint(got.Value) != fmt.Sprint(c.value) || got.Source != c.source {
			t.Errorf("%s: %q from %q, want %q from %q", c.fact, got.Value, got.Source, c.value, c.source)
		}
	}
}

// TestTextCutsAtACharacter: a cut never splits a character.
func TestTextCutsAtACharacter(t *testing.T) {
	t.Parallel()
	got, why := text("a" + strings.Repeat("é", MaxText))
	if len(got) != MaxText-1 || !utf8.ValidString(got) || !strings.Contains(why, "cut") {
		t.Errorf("%d bytes, valid %v, %q", len(got), utf8.ValidString(got), why)
	}
}
