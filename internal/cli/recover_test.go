package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestRecoverLeavesAProjectFolderAlone: `strata bench recover .` in a
// folder that holds a journal beside the user's own files (a copied
// journal, not a pending folder strata made) fails with the reason and
// deletes nothing.
func TestRecoverLeavesAProjectFolderAlone(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	mustWrite(t, filepath.Join(project, "main.go"), "package main\n")
	mustWrite(t, filepath.Join(project, "journal.jsonl"), `{"header":{"format":"strata-run-journal","version":2,"run_id":"\u001b]0;x\u0007"}}`+"\n")
	r := runIn(t, project, "", "bench", "recover", ".")
	if r.code != exitcode.Failed || !strings.Contains(r.stdout, "not a pending folder of a strata run") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"main.go", "journal.jsonl"} {
		if _, err := os.Stat(filepath.Join(project, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") {
		t.Errorf("raw escape bytes printed: %q %q", r.stdout, r.stderr)
	}
}

// TestRecoverWithNothingToRecover: in a folder where no run has written a
// result, recover says there is nothing to recover (exit 0); a folder
// named that does not exist is bad usage.
func TestRecoverWithNothingToRecover(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	if r := runIn(t, work, "", "bench", "recover"); r.code != 0 || !strings.Contains(r.stdout, "nothing to recover: no result folder") {
		t.Errorf("no result folder: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, work, "", "bench", "recover", "gone"); r.code != exitcode.Usage || !strings.Contains(r.stderr, "gone does not exist") {
		t.Errorf("a folder that is not there: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
