package site_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/site"
)

// TestBuildRefusesAFolderItCannotList: an --out folder whose entries
// cannot be listed may hold anything, so it is refused as a folder that
// is not a strata site would be, and left where it is.
func TestBuildRefusesAFolderItCannotList(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root lists every folder")
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, "keep.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Searchable and writable, but not readable: the marker's absence is
	// visible, the folder's entries are not.
	if err := os.Chmod(out, 0o300); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Chmod(out, 0o755); err != nil {
			t.Error(err)
		}
	})
	err := site.Build(&site.Site{}, out)
	if err == nil || !strings.Contains(err.Error(), out) {
		t.Errorf("Build into an unlistable folder: %v, want an error naming %s", err, out)
	}
	if data, err := os.ReadFile(keep); err != nil || string(data) != "mine" {
		t.Errorf("the folder's file after Build: %q, %v", data, err)
	}
}
