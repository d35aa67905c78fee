package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		limit      int64
		want       string // "" : read
	}{
		{"a regular file", small, 100, ""},
		{"a link to a regular file", link, 100, ""},
		{"exactly the limit", small, 7, ""},
		{"one byte over", small, 6, "larger than strata reads"},
		{"a FIFO", fifo, 100, "is a named pipe (FIFO), not a regular file"},
		{"a link to /dev/zero", zero, 1 << 30, "is a character device, not a regular file"},
		{"a folder", dir, 100, "is a folder, not a regular file"},
		{"missing", filepath.Join(dir, "none"), 100, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			go func() { _, err := Read(c.path, c.limit); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked") // a FIFO open must never wait for a writer
			}
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Read: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Read: %v, want an error with %q", err, c.want)
			}
			if c.want == "larger than strata reads" && !errors.Is(err, ErrTooLarge) {
				t.Errorf("%v is not ErrTooLarge", err)
			}
		})
	}
}
