package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/strata-bench/strata/internal/exitcode"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden and docs/commands.md")

func results(t *testing.T, name string) string {
	return filepath.Join(repoRoot(t), "testdata", "results", name)
}

// golden compares got with testdata/golden/name (or rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		mustWrite(t, p, got)
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run %s -args -update)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, d)
	}
}

func TestSubmitGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"baseline", "partial", "nonconforming"} {
		t.Run(name, func(t *testing.T) {
			r := runIn(t, t.TempDir(), "", "bench", "submit", results(t, name))
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			golden(t, "submit-"+name+".txt", r.stdout)
			title := strings.SplitN(r.stdout, "\n", 3)[1]
			if !strings.HasPrefix(title, "benchmark: ") || strings.Count(title, " / ") != 3 {
				t.Errorf("title %q", title)
			}
		})
	}
}

func TestSubmitRefusesPrivateData(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	copyDir(t, results(t, "baseline"), dir)
	readme := filepath.Join(dir, "README.md")
	b, _ := os.ReadFile(readme)
	mustWrite(t, readme, string(b)+"\nContact me at alice@example.com from 192.168.3.4.\n")
	r := runIn(t, t.TempDir(), "", "bench", "submit", dir)
	if r.code != exitcode.Failed || !strings.Contains(r.stdout, "private data: README.md: an e-mail address: alice@example.com") || strings.Contains(r.stdout, "Title:") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
}

func TestCompareGolden(t *testing.T) {
	t.Parallel()
	base, cand := results(t, "baseline"), results(t, "candidate")
	r := runIn(t, t.TempDir(), "", "bench", "compare", base, cand)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	golden(t, "compare.txt", r.stdout)
	charts := t.TempDir()
	r = runIn(t, t.TempDir(), "", "bench", "compare", base, cand, "--markdown", "--charts", charts)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	golden(t, "compare.md", r.stdout)
	for _, m := range []string{"prompt_tps", "decode_tps", "ttft_s"} {
		b, err := os.ReadFile(filepath.Join(charts, "compare-"+m+".svg"))
		if err != nil || !strings.HasPrefix(string(b), "<svg") || strings.Count(string(b), "<rect") < 6 {
			t.Errorf("%s chart: %v", m, err)
		}
		golden(t, "compare-"+m+".svg", string(b))
	}
	// The same model file under another declared quantization: the files
	// decide, and both strings are shown.
	r = runIn(t, t.TempDir(), "", "bench", "compare", base, results(t, "partial"))
	if r.code != 0 || !strings.Contains(r.stdout, "although the declared quantizations differ (IQ3_XXS vs Q4_K_M)") {
		t.Errorf("identical files, other quantization: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Refusal: another quantization and another model file.
	otherFile := filepath.Join(t.TempDir(), "partial")
	copyDir(t, results(t, "partial"), otherFile)
	pr := filepath.Join(otherFile, "results.json")
	pb, _ := os.ReadFile(pr)
	if err := os.WriteFile(pr, []byte(strings.Replace(string(pb), strings.Repeat("cd", 32), strings.Repeat("ef", 32), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, t.TempDir(), "", "bench", "compare", base, otherFile)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "quantizations differ (IQ3_XXS vs Q4_K_M)") {
		t.Errorf("refusal: exit %d %s", r.code, r.stderr)
	}
	golden(t, "compare-refusal.txt", r.stderr)
	// Different hardware: a loud warning, not a refusal.
	other := filepath.Join(t.TempDir(), "other")
	copyDir(t, cand, other)
	p := filepath.Join(other, "results.json")
	b, _ := os.ReadFile(p)
	mustWrite(t, p, strings.Replace(string(b), `"name": "NVIDIA GeForce RTX 3060"`, `"name": "NVIDIA GeForce RTX 4090"`, 1))
	r = runIn(t, t.TempDir(), "", "bench", "compare", base, other)
	if r.code != 0 || !strings.Contains(r.stdout, "WARNING: GPUs differ") || !strings.Contains(r.stdout, "same-machine baseline") {
		t.Errorf("hardware warning: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, t.TempDir(), "", "bench", "compare", base); r.code != exitcode.Usage {
		t.Errorf("one folder: exit %d", r.code)
	}
}

func TestReportChartsAndReadme(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	copyDir(t, results(t, "baseline"), dir)
	out := filepath.Join(t.TempDir(), "charts")
	r := runIn(t, t.TempDir(), "", "bench", "report", "-q", dir, "--charts", out)
	if r.code != 0 || !strings.Contains(r.stdout, "charts: ") || strings.Contains(r.stdout, "note:") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	svgs, _ := filepath.Glob(filepath.Join(out, "*.svg"))
	if len(svgs) != 3 {
		t.Errorf("charts %v", svgs)
	}
	if r := runIn(t, t.TempDir(), "", "bench", "report", "-q", dir, "--charts", filepath.Join(dir, "charts")); r.code != exitcode.Usage {
		t.Errorf("charts inside the folder: exit %d", r.code)
	}
	// A README edited by hand is a note, not a violation.
	readme := filepath.Join(dir, "README.md")
	b, _ := os.ReadFile(readme)
	mustWrite(t, readme, strings.Replace(string(b), "**11/12** passed", "**12/12** passed", 1))
	r = runIn(t, t.TempDir(), "", "bench", "report", "-q", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "note: README.md line") {
		t.Errorf("readme: exit %d\n%s", r.code, r.stdout)
	}
	// A tampered verdict is caught by re-scoring the saved output.
	p := filepath.Join(dir, "results.json")
	b, _ = os.ReadFile(p)
	tampered := strings.Replace(string(b), `"passed": false,
        "reason": "malformed output`, `"passed": true,
        "reason": "malformed output`, 1)
	if tampered == string(b) {
		t.Fatal("the fixture has no failed verdict to tamper with")
	}
	mustWrite(t, p, tampered)
	r = runIn(t, t.TempDir(), "", "bench", "report", "-q", dir)
	if r.code != exitcode.Failed || !strings.Contains(r.stdout, "I3 is stored as passed=true, but re-scoring the saved output gives passed=false") {
		t.Errorf("tampered verdict: exit %d\n%s", r.code, r.stdout)
	}
}
