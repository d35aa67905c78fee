package gguf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteErrors: a value of a type the writer does not know is refused,
// naming its key, and nothing is written.
func TestWriteErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.gguf")
	if err := Write(path, []KV{{"k", 3.5}}); err == nil || !strings.Contains(err.Error(), "metadata k") {
		t.Errorf("unsupported value type: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused file was written: %v", err)
	}
}

func TestNamed(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{"m.gguf": true, "/a/M.GGUF": true, "x.Gguf": true, "tokenizer.json": false, "gguf": false, "m.gguf.part": false, "": false} {
		if got := Named(path); got != want {
			t.Errorf("Named(%q) = %v, want %v", path, got, want)
		}
	}
}
