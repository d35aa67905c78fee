package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
)

func testRepo(t *testing.T) string { return submissions.CommittedRepo(t) }

func TestManifestVerifyOnTestRepository(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), "", "bench", "manifest", "verify", "--repo", testRepo(t), "--activate", protocol.StandInID)
	if r.code != exitcode.Failed || strings.Count(r.stdout, "ok      ") != 3 || strings.Count(r.stdout, "FAILED  ") != 2 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"changed on main after review", "not the approved 0000", "nonconforming"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Without activation the draft protocol has no approved results at all.
	r = runIn(t, t.TempDir(), "", "bench", "manifest", "verify", "--repo", testRepo(t))
	if r.code != exitcode.Failed || strings.Count(r.stdout, "not activated") != 5 {
		t.Errorf("draft: exit %d\n%s", r.code, r.stdout)
	}
	if r := runIn(t, t.TempDir(), "", "bench", "manifest", "verify", "--repo", t.TempDir()); r.code != exitcode.Failed || !strings.Contains(r.stderr, "repository") {
		t.Errorf("not a repository: exit %d %s", r.code, r.stderr)
	}
}

// TestSiteOnTestRepository is the acceptance command on the
// committed test repository.
func TestSiteOnTestRepository(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "site")
	r := runIn(t, t.TempDir(), "", "bench", "site", "--repo", testRepo(t), "--out", out, "--activate", protocol.StandInID)
	if r.code != 0 || !strings.Contains(r.stdout, "3 approved, 6 other") || strings.Count(r.stderr, "is not shown as approved") != 2 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "labelled demonstration data: the repository holds bench/DEMONSTRATION.md") {
		t.Errorf("the output does not say the site is labelled demonstration data:\n%s", r.stdout)
	}
	idx, _ := os.ReadFile(filepath.Join(out, "index.html"))
	// One card per run, with a row for each of its cases.
	if n, rows := strings.Count(string(idx), " data-run-id="), strings.Count(string(idx), `<td class="c-case">`); n != 3 || rows != 10 {
		t.Errorf("%d index runs, %d case rows; want 3 and 10", n, rows)
	}
	// Every run names its engine, and the engines can be filtered.
	if n := strings.Count(string(idx), `data-engine="llama.cpp"`); n != 3 || !strings.Contains(string(idx), `data-filter="engine"`) {
		t.Errorf("%d runs name their engine", n)
	}
	other, _ := os.ReadFile(filepath.Join(out, "other.html"))
	for _, l := range []string{"label-legacy", "label-partial", "label-unreviewed", "label-unverifiable", "failed verification: "} {
		if !strings.Contains(string(other), l) {
			t.Errorf("other.html lacks %s", l)
		}
	}
	if strings.Contains(string(other), ":;") {
		t.Error("other.html joins a heading to its reasons with \":;\"")
	}
	runs, _ := filepath.Glob(filepath.Join(out, "runs", "*.html"))
	if len(runs) != 9 {
		t.Errorf("%d run pages", len(runs))
	}
	// Evidence is published as text only; the planted pages are not.
	evidence, _ := filepath.Glob(filepath.Join(out, "runs", "*", "*"))
	for _, f := range evidence {
		if !strings.HasSuffix(f, ".txt") {
			t.Errorf("%s: evidence not published as text", f)
		}
	}
	if len(evidence) < 9 {
		t.Errorf("%d evidence files", len(evidence))
	}
}

func TestManifestAdd(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	args := []string{"bench", "manifest", "add", "--repo", s.Repo.Dir, "--review-pr", "https://example.invalid/pr/7", "--reviewed-by", "maint", "--activate", protocol.StandInID}
	r := runIn(t, t.TempDir(), "", append(args, "--results", s.Folders["unreviewed"])...)
	if r.code != 0 || !strings.Contains(r.stdout, "added "+s.RunIDs["unreviewed"]) || !strings.Contains(r.stdout, s.Commits["c3"]) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(s.Repo.Dir, "bench", "approved.json"))
	if !strings.Contains(string(data), s.RunIDs["unreviewed"]) {
		t.Error("the entry was not written")
	}
	r = runIn(t, t.TempDir(), "", append(args, "--results", s.Folders["partial"])...)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "partial") {
		t.Errorf("partial: exit %d %s", r.code, r.stderr)
	}
	r = runIn(t, t.TempDir(), "", "bench", "manifest", "add", "--repo", s.Repo.Dir, "--results", s.Folders["unreviewed"])
	if r.code != exitcode.Usage {
		t.Errorf("missing flags: exit %d", r.code)
	}
}

// TestSiteServe previews the site on loopback until the context ends.
func TestSiteServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := preview(t, ctx, "bench", "site", "--repo", testRepo(t), "--out", filepath.Join(t.TempDir(), "site"),
		"--activate", protocol.StandInID, "--serve", "--addr", "127.0.0.1:0")
	resp, err := http.Get(url + "index.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // read to its end above
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Approved results") {
		t.Errorf("GET index: %d", resp.StatusCode)
	}
	// The preview sends the site's headers (site.Handler; its own test
	// covers them in full).
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("preview headers: %v", resp.Header)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
	if r := runIn(t, t.TempDir(), "", "bench", "site", "--repo", testRepo(t), "--out", filepath.Join(t.TempDir(), "s"), "--serve", "--addr", "0.0.0.0:0"); r.code != exitcode.Usage {
		t.Errorf("a non-loopback preview address: exit %d", r.code)
	}
}

// TestManifestAddReplaces: a run whose results changed after
// review is added again with --replaces; the old entry stays in the
// manifest, marked, verify accepts both and says which replaced which,
// and the site links the replaced entry's page from the current one.
func TestManifestAddReplaces(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	folder := s.Folders["approvedA4000"]
	p := filepath.Join(s.Repo.Dir, folder, "results.json")
	data, _ := os.ReadFile(p)
	s.Repo.Write(t, filepath.Join(folder, "results.json"), resulttest.EditJSON(t, data, func(m map[string]any) {
		m["run"].(map[string]any)["command"] = "strata bench run --profile a4000 --track default"
	}))
	s.Repo.Commit(t, "benchmark: A4000, command corrected")
	id := s.RunIDs["approvedA4000"]
	args := []string{"bench", "manifest", "add", "--repo", s.Repo.Dir, "--results", folder, "--review-pr", "https://example.invalid/pr/8",
		"--reviewed-by", "maint", "--activate", protocol.StandInID}
	if r := runIn(t, t.TempDir(), "", args...); r.code != exitcode.Failed || !strings.Contains(r.stderr, "--replaces "+id) {
		t.Fatalf("without --replaces: exit %d\n%s", r.code, r.stderr)
	}
	r := runIn(t, t.TempDir(), "", append(args, "--replaces", id)...)
	if r.code != 0 || !strings.Contains(r.stdout, "added "+id) || !strings.Contains(r.stdout, "replacing run "+id) {
		t.Fatalf("--replaces: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	after, _ := os.ReadFile(filepath.Join(s.Repo.Dir, "bench", "approved.json"))
	if strings.Count(string(after), `"run_id": "`+id+`"`) != 4 { // two entries, and each names the other
		t.Errorf("the manifest does not hold both entries of %s:\n%s", id, after)
	}
	s.Repo.Commit(t, "approve the corrected A4000 run")
	v := runIn(t, t.TempDir(), "", "bench", "manifest", "verify", "--repo", s.Repo.Dir, "--activate", protocol.StandInID)
	if strings.Count(v.stdout, "ok      "+id) != 2 || !strings.Contains(v.stdout, "replaced by run "+id) {
		t.Errorf("verify:\n%s", v.stdout)
	}
	out := filepath.Join(t.TempDir(), "site")
	if r := runIn(t, t.TempDir(), "", "bench", "site", "--repo", s.Repo.Dir, "--out", out, "--activate", protocol.StandInID); r.code != 0 {
		t.Fatalf("site: exit %d\n%s", r.code, r.stderr)
	}
	other, _ := os.ReadFile(filepath.Join(out, "other.html"))
	if !strings.Contains(string(other), "label-replaced") {
		t.Error("other.html does not list the replaced entry")
	}
}

// TestSiteRepoMustBeARepositoryRoot: --repo names a repository's root (a
// checkout's top folder or a bare repository); anything else is a usage
// error naming what was expected, before any site is built, and a result
// folder, or a folder of them, is pointed to bench view.
func TestSiteRepoMustBeARepositoryRoot(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	copyDir(t, results(t, "partial"), filepath.Join(parent, "run"))
	for _, c := range []struct {
		name, repo string
		want       []string
	}{
		{"a result folder", results(t, "partial"), []string{"not the root of a git repository", "is a result folder", "strata bench view " + results(t, "partial")}},
		{"a folder of result folders", parent, []string{"not the root of a git repository", "holds result folders", "strata bench view " + filepath.Join(parent, "run")}},
		{"an empty folder", t.TempDir(), []string{"not the root of a git repository (a checkout's top folder, or a bare repository)"}},
		{"a folder inside a checkout", filepath.Join(repoRoot(t), "internal"), []string{"not the root of a git repository"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "site")
			r := runIn(t, t.TempDir(), "", "bench", "site", "--repo", c.repo, "--out", out)
			if r.code != exitcode.Usage {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, exitcode.Usage, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "site:") {
				t.Errorf("a site was built:\n%s", r.stdout)
			}
		})
	}
}
