package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunSimulateAndReport is the README's main command in process: a full
// run against the simulated engine writes a folder that report validates.
func TestRunSimulateAndReport(t *testing.T) {
	if testing.Short() {
		t.Skip("a full simulated run takes about 16 s")
	}
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "bench", "results"), 0o755)
	r := runIn(t, work, "", "bench", "run", "--simulate", "--track-notes", "simulated demo", "--background", "none")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "bench", "results", "*-standard-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders: %v (bench/results is used when the folder has one)", dirs)
	}
	for _, f := range []string{"results.json", "outputs.jsonl", "README.md", "config.json", "chat_template.jinja"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	rep := runIn(t, work, "", "bench", "report", dirs[0])
	if rep.code != 0 || !strings.Contains(rep.stdout, "valid: ") || !strings.Contains(rep.stdout, "# Strata standard benchmark result") {
		t.Fatalf("report: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	if !strings.Contains(rep.stdout, "simulated engine") || !strings.Contains(r.stdout, "status: nonconforming") {
		t.Error("a simulated result must say it came from the simulator")
	}
	// Tamper with a byte of the evidence: report fails with exit 1.
	p := filepath.Join(dirs[0], "outputs.jsonl")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, append(b, ' '), 0o644)
	rep = runIn(t, work, "", "bench", "report", "-q", dirs[0])
	if rep.code != ExitFailed || !strings.Contains(rep.stdout, "changed after the run") {
		t.Fatalf("tampered: exit %d\n%s", rep.code, rep.stdout)
	}
}

func TestRunRefusesWorkloadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--concurrency", "2"}, {"--repeat", "5"}, {"--request-timeout", "60"},
	} {
		r := runIn(t, t.TempDir(), "", append([]string{"bench", "run", "--simulate"}, args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "would change the workload") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "exactly one of --url"},
		{[]string{"--url", "http://127.0.0.1:1", "--simulate"}, "exactly one of --url"},
		{[]string{"--url", "ftp://x"}, "--url"},
		{[]string{"--simulate", "--track", "fast"}, "--track"},
		{[]string{"--url", "http://127.0.0.1:9", "--api-key-env", "STRATA_NO_SUCH_VAR"}, "STRATA_NO_SUCH_VAR"},
	} {
		r := runIn(t, t.TempDir(), "", append([]string{"bench", "run"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
}

func TestRunServerDoesNotAnswer(t *testing.T) {
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", "http://127.0.0.1:9")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "does not answer") {
		t.Fatalf("exit %d: %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
		t.Error("no result folder is written when nothing was run")
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	if r := runIn(t, dir, "", "bench", "report", "nope"); r.code != ExitFailed || !strings.Contains(r.stderr, "nope") {
		t.Errorf("missing folder: exit %d %q", r.code, r.stderr)
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	if r := runIn(t, dir, "", "bench", "report", "empty"); r.code != ExitFailed || !strings.Contains(r.stdout, "results.json: cannot be read") {
		t.Errorf("empty folder: exit %d %q", r.code, r.stdout)
	}
	mustWrite(t, filepath.Join(dir, "legacy", "results.json"), `{"schema": 1, "runs": []}`)
	if r := runIn(t, dir, "", "bench", "report", "legacy"); r.code != ExitFailed || !strings.Contains(r.stdout, "unknown format") {
		t.Errorf("legacy format: exit %d %q", r.code, r.stdout)
	}
	mustWrite(t, filepath.Join(dir, "html", "results.json"), `<html>`)
	if r := runIn(t, dir, "", "bench", "report", "html"); r.code != ExitFailed || !strings.Contains(r.stdout, "results.json: is not strict JSON") {
		t.Errorf("not JSON: exit %d %q", r.code, r.stdout)
	}
	if r := runIn(t, dir, "", "bench", "report"); r.code != ExitUsage {
		t.Errorf("no argument: exit %d", r.code)
	}
}

// TestRunInterrupted: Ctrl-C (a cancelled context, as main wires SIGINT and
// SIGTERM) ends the run, and the partial result is still written and valid.
func TestRunInterrupted(t *testing.T) {
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, cancel)
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: work, Getenv: func(string) string { return "" },
		Environ: func() []string { return append(os.Environ(), "STRATA_TEST_AS_CLI=1") }, CacheDir: t.TempDir()}
	code := Run(ctx, []string{"bench", "run", "--simulate"}, env)
	if code != ExitFailed || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders %v", dirs)
	}
	// Nonconforming (the simulator) takes precedence over partial; the
	// interruption is still stated, and the unsent requests are skipped.
	rep := runIn(t, work, "", "bench", "report", dirs[0])
	if rep.code != 0 || !strings.Contains(rep.stdout, "the run was interrupted") || !strings.Contains(rep.stdout, "skipped: the run was interrupted") {
		t.Fatalf("report: exit %d %s", rep.code, rep.stdout)
	}
}
