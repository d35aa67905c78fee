package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/pilot"
)

// TestPilotGolden: the pilot over the committed folders, as Markdown and
// as JSON, run where they are so the paths are the names given.
func TestPilotGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(t), "testdata", "results")
	names := []string{"baseline", "candidate", "partial", "nonconforming", "aborted"}
	r := runIn(t, dir, "", append([]string{"bench", "pilot"}, names...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	golden(t, "pilot.md", r.stdout)
	r = runIn(t, dir, "", append([]string{"bench", "pilot", "--json"}, names...)...)
	if r.code != 0 {
		t.Fatalf("--json: exit %d\n%s", r.code, r.stderr)
	}
	golden(t, "pilot.json", r.stdout)
	var rep pilot.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Format != pilot.Format || rep.Version != pilot.Version || len(rep.Folders) != len(names) {
		t.Errorf("--json: %v, format %q version %d, %d folders", err, rep.Format, rep.Version, len(rep.Folders))
	}
}

// TestPilotInvalidFolder: a folder that fails validation is listed with
// its violations, the others are still printed in full, and the exit
// code is 1; in both forms.
func TestPilotInvalidFolder(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	copyDir(t, results(t, "baseline"), filepath.Join(work, "good"))
	copyDir(t, results(t, "baseline"), filepath.Join(work, "broken"))
	p := filepath.Join(work, "broken", "results.json")
	b, _ := os.ReadFile(p)
	mustWrite(t, p, strings.Replace(string(b), `"passed": 11,`, `"passed": 12,`, 1))
	r := runIn(t, work, "", "bench", "pilot", "broken", "good")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "1 folder is not valid, no evidence: broken") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"1 valid, 1 not valid.",
		"| #1 | `broken` | | | **not valid** | | | |",
		"### #1 `broken`: not valid",
		"1 violation: not evidence until strata bench report finds none\n\n- /quality: is {Passed:12 ",
		"### #2 `good`",
		"| Test the case the mock server cannot show: optional concurrency with queueing on a server that has fewer than four slots | **shown** | #2: ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	r = runIn(t, work, "", "bench", "pilot", "--json", "broken", "good")
	var rep pilot.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitcode.Failed {
		t.Fatalf("--json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if f := rep.Folders[0]; f.Valid || f.Evidence != nil || len(f.Violations) == 0 || !rep.Folders[1].Valid {
		t.Errorf("folders %+v", rep.Folders)
	}
}

// TestPilotUsage: bad arguments are a usage error before any folder is
// read, with nothing on stdout.
func TestPilotUsage(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	copyDir(t, results(t, "baseline"), filepath.Join(work, "run"))
	mustWrite(t, filepath.Join(work, "file"), "x")
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "pilot needs at least one result folder"},
		{[]string{"run", "missing"}, "missing is not a result folder"},
		{[]string{"file"}, "file is not a result folder: it is a file"},
		{[]string{"run", "./run/"}, "run and ./run/ are the same folder"},
		{[]string{"--markdown", "run"}, "unknown flag: --markdown"},
	} {
		r := runIn(t, work, "", append([]string{"bench", "pilot"}, c.args...)...)
		if r.code != exitcode.Usage || r.stdout != "" || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, r.code, r.stdout, r.stderr)
		}
	}
}
