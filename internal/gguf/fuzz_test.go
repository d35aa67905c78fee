package gguf

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen: strata reads the metadata of any GGUF file the server names;
// Open never panics or hangs on a hostile header, and what it reads can be
// summarised.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.gguf")
	if err := Write(seed, []KV{{Key: "general.architecture", Value: "qwen3"}, {Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "general.file_type", Value: uint32(0)}, {Key: "qwen3.context_length", Value: uint32(32768)}}); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Add([]byte("GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f\xff\xff\xff\xff\xff\xff\xff\x7f"))
	path := filepath.Join(dir, "fuzz.gguf")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if g, err := Open(path); err == nil {
			_ = g.Summary()
			_ = g.Architecture()
		}
	})
}
