package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestNotAResultFolder: bench report, compare and submit on a folder with
// no results.json say that it is not a result folder, not what a file
// system call said about a file in it.
func TestNotAResultFolder(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	mustWrite(t, filepath.Join(work, "plain", "notes.txt"), "not a result\n")
	plain := filepath.Join(work, "plain")
	want := plain + " is not a result folder (no results.json)"
	for _, args := range [][]string{
		{"bench", "report", "plain"},
		{"bench", "compare", "plain", results(t, "baseline")},
		{"bench", "submit", "plain"},
	} {
		r := runIn(t, work, "", args...)
		if r.code != exitcode.Failed || !strings.Contains(r.stderr, "strata: "+want+"\n") || strings.Contains(r.stdout+r.stderr, "lstat") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d with %q", args, r.code, r.stdout, r.stderr, exitcode.Failed, want)
		}
	}
}

// TestSubmitFolderOfResults: bench submit given the folder that holds
// result folders (bench-results) names them and says to give one, and
// calls nothing in them private data.
func TestSubmitFolderOfResults(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	copyDir(t, results(t, "baseline"), filepath.Join(work, "bench-results", "run-a"))
	copyDir(t, results(t, "candidate"), filepath.Join(work, "bench-results", "run-b"))
	mustWrite(t, filepath.Join(work, "bench-results", "notes", "x.txt"), "not a result\n")
	r := runIn(t, work, "", "bench", "submit", "bench-results")
	want := filepath.Join(work, "bench-results") + " is not a result folder (no results.json); it holds 2 result folders: run-a, run-b; give one of them: strata bench submit " +
		filepath.Join("bench-results", "run-a")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "private data") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q", r.code, r.stdout, r.stderr, exitcode.Failed, want)
	}
}
