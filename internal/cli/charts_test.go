package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// victim is a file a symbolic link in a charts folder points to; it must
// keep its bytes.
func victim(t *testing.T) (path string, check func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if b, err := os.ReadFile(path); err != nil || string(b) != "mine\n" {
			t.Errorf("the link's target was written through: %q… %v", b[:min(len(b), 40)], err)
		}
	}
}

// linkChart replaces the chart named like suffix in out with a link to
// target and returns the link's path.
func linkChart(t *testing.T, out, suffix, target string) string {
	t.Helper()
	svgs, _ := filepath.Glob(filepath.Join(out, "*"+suffix))
	if len(svgs) != 1 {
		t.Fatalf("charts %v", svgs)
	}
	if err := os.Remove(svgs[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, svgs[0]); err != nil {
		t.Fatal(err)
	}
	return svgs[0]
}

// TestChartsNeverWriteThroughALink: a symbolic link where bench report's
// or bench compare's chart goes is refused with its name; its target keeps
// its bytes and the link stays.
func TestChartsNeverWriteThroughALink(t *testing.T) {
	t.Parallel()
	base, cand := results(t, "baseline"), results(t, "candidate")
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"report", func(out string) []string { return []string{"bench", "report", "-q", base, "--charts", out} }},
		{"compare", func(out string) []string { return []string{"bench", "compare", base, cand, "--charts", out} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "charts")
			if r := runIn(t, t.TempDir(), "", c.args(out)...); r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			target, check := victim(t)
			link := linkChart(t, out, "-decode_tps.svg", target)
			r := runIn(t, t.TempDir(), "", c.args(out)...)
			if r.code == 0 || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "symbolic link") {
				t.Errorf("exit %d, stderr %q; want a refusal naming %s", r.code, r.stderr, link)
			}
			check()
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was not left as it was: %v", err)
			}
		})
	}
}

// TestChartsLinkedIntoTheResultFolder: --charts given as a link into the
// result folder (or below one) is inside it, and refused before anything
// is written there; for bench compare, inside either folder.
func TestChartsLinkedIntoTheResultFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	copyDir(t, results(t, "baseline"), dir)
	cand := filepath.Join(t.TempDir(), "cand")
	copyDir(t, results(t, "candidate"), cand)
	links := t.TempDir()
	toRun, toCand := filepath.Join(links, "to-run"), filepath.Join(links, "to-cand")
	if os.Symlink(dir, toRun) != nil || os.Symlink(cand, toCand) != nil {
		t.Fatal("cannot make the links")
	}
	before := map[string]int{dir: entries(t, dir), cand: entries(t, cand)}
	for _, args := range [][]string{
		{"bench", "report", "-q", dir, "--charts", toRun},
		{"bench", "report", "-q", dir, "--charts", filepath.Join(toRun, "charts")},
		{"bench", "compare", dir, cand, "--charts", toCand},
		{"bench", "compare", dir, cand, "--charts", filepath.Join(cand, "charts")},
	} {
		r := runIn(t, t.TempDir(), "", args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, "inside the result folder") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args[1:], r.code, r.stderr)
		}
	}
	for d, n := range before {
		if got := entries(t, d); got != n {
			t.Errorf("%s has %d entries, had %d", d, got, n)
		}
	}
}

func entries(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestReportDrawsTheChartsAgain: one byte of a result folder's chart
// changed, bench report fails naming the chart.
func TestReportDrawsTheChartsAgain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "baseline")
	copyDir(t, results(t, "baseline"), dir)
	chart := filepath.Join(dir, "chart-ttft_s.svg")
	b, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "n=3")
	if i < 0 {
		t.Fatalf("no n=3 in %s", chart)
	}
	b[i+2] = '4'
	if err := os.WriteFile(chart, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, t.TempDir(), "", "bench", "report", "-q", dir)
	if r.code != exitcode.Failed || !strings.Contains(r.stdout, "chart-ttft_s.svg is not the chart results.json gives") {
		t.Errorf("exit %d, want %d naming chart-ttft_s.svg:\n%s%s", r.code, exitcode.Failed, r.stdout, r.stderr)
	}
}
