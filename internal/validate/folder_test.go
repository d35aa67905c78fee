package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestNotResultFolder: a folder without results.json is no result folder,
// and the error names the result folders right below it, five at the most.
func TestNotResultFolder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		results int
		want    string
	}{
		{0, "DIR is not a result folder (no results.json)"},
		{2, "DIR is not a result folder (no results.json); it holds 2 result folders: r1, r2"},
		{7, "DIR is not a result folder (no results.json); it holds 7 result folders: r1, r2, r3, r4, r5 and 2 more"},
	} {
		dir := t.TempDir()
		for i := 1; i <= c.results; i++ {
			write(t, filepath.Join(dir, fmt.Sprintf("r%d", i), "results.json"), "{}")
		}
		write(t, filepath.Join(dir, "other", "notes.txt"), "x")
		write(t, filepath.Join(dir, "results.txt"), "x")
		_, err := Dir(dir, nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if want := filepath.Clean(dir) + c.want[len("DIR"):]; got != want {
			t.Errorf("%d result folders inside: got %q, want %q", c.results, got, want)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
