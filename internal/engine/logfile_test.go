package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestLogFileRead: the log file is kept whole, with strata's line where
// the run began; a line the engine was writing as the run began is the
// run's; a file begun again during the run is the run's whole.
func TestLogFileRead(t *testing.T) {
	t.Parallel()
	mark := contract.EngineLogRunStart + "\n"
	for _, c := range []struct {
		name, before, after string // the file's content at Mark, and what Read finds
		want                string
	}{
		{"lines before and during", "start\nold request\n", "start\nold request\nrun request\n", "start\nold request\n" + mark + "run request\n"},
		{"an empty file", "", "run request\n", mark + "run request\n"},
		{"a line begun before the run", "start\nhalf a ", "start\nhalf a line\nrun request\n", "start\n" + mark + "half a line\nrun request\n"},
		{"nothing written during the run", "start\n", "start\n", "start\n" + mark},
		{"begun again", "start\nold request\n", "new\n",
			"[strata: the log file was 18 bytes when the run began and is 4 bytes after it: it was begun again, and all of it is held against the run]\n" + mark + "new\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "server.log")
			write(t, p, c.before)
			l, err := OpenLogFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Mark(); err != nil {
				t.Fatal(err)
			}
			write(t, p, c.after)
			got, err := l.Read()
			if err != nil || string(got) != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestLogFileBounds: a file over the bound is refused before the run; what
// the run adds beyond it is cut with strata's line.
func TestLogFileBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	if err == nil {
		err = errors.Join(f.Truncate(contract.MaxEngineLogBytes+1), f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLogFile(big); err == nil || !strings.Contains(err.Error(), "larger than strata reads") {
		t.Errorf("a file over the bound: %v", err)
	}
	p := filepath.Join(dir, "server.log")
	write(t, p, "start\n")
	l, err := OpenLogFile(p)
	if err == nil {
		err = l.Mark()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 6+contract.MaxEngineLogBytes+10); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read()
	run, _, whole := contract.EngineLogOfRun(got)
	if err != nil || whole || len(run) != contract.MaxEngineLogBytes+len(contract.EngineLogCut)+2 || !strings.HasSuffix(string(got), "\n"+contract.EngineLogCut+"\n") {
		t.Errorf("a run that wrote past the bound: %d bytes of the run kept, whole %v, %v", len(run), whole, err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLogFileWithinAnArtifact: a file at the bound when the run began,
// to which the run added more than the bound, is kept with strata's lines
// within contract.MaxArtifactBytes, which every reader of the folder
// holds an artifact to.
func TestLogFileWithinAnArtifact(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(p)
	if err == nil {
		_, err = f.WriteAt([]byte("\n"), contract.MaxEngineLogBytes-1)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	l, err := OpenLogFile(p)
	if err == nil {
		err = l.Mark()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 3*contract.MaxEngineLogBytes); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read()
	if err != nil || len(got) > contract.MaxArtifactBytes {
		t.Errorf("kept %d bytes (%v), more than an artifact's %d", len(got), err, contract.MaxArtifactBytes)
	}
	if _, _, whole := contract.EngineLogOfRun(got); whole {
		t.Errorf("the run's part is whole, want it cut")
	}
}
