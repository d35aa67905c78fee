package journal

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/redact"
)

// TestLockedJournalIsLeftAlone: the journal of a run that is still going
// is not recovered.
func TestLockedJournalIsLeftAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w, err := Create(root, Header{RunID: "x", Folder: "f"}, redact.New(redact.Machine{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Remove(); err != nil {
			t.Error(err)
		}
	}()
	// Another process (flock locks belong to the open file): a child opens
	// and tries to lock the journal.
	if os.Getenv("STRATA_JOURNAL_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLockChild$")
		cmd.Env = append(os.Environ(), "STRATA_JOURNAL_CHILD="+w.Dir())
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "locked: true") {
			t.Errorf("child: %s", out)
		}
	}
}

func TestLockChild(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("STRATA_JOURNAL_CHILD")
	if dir == "" {
		t.Skip("run by TestLockedJournalIsLeftAlone")
	}
	_, err := Read(context.Background(), dir, time.Now())
	t.Logf("locked: %v", IsLocked(err))
	if _, err := os.Stdout.WriteString("locked: " + map[bool]string{true: "true", false: "false"}[IsLocked(err)] + "\n"); err != nil {
		t.Fatal(err)
	}
}
