package site_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// replacedSite is the committed scenario after two new reviews: the
// A4000 run's results corrected and approved again (the same run), and
// the 3060 run replaced by the 4090 run (another run); each --replaces
// the old entry, which stays in the manifest.
func replacedSite(t *testing.T) (*submissions.Scenario, *site.Site, string) {
	t.Helper()
	s := submissions.Committed(t)
	folder := s.Folders["approvedA4000"]
	data, err := os.ReadFile(filepath.Join(s.Repo.Dir, folder, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	s.Repo.Write(t, filepath.Join(folder, "results.json"), resulttest.EditJSON(t, data, func(m map[string]any) {
		m["run"].(map[string]any)["command"] = "strata bench run --profile a4000 --track default"
	}))
	s.Repo.Commit(t, "benchmark: A4000, command corrected")
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	o := manifest.Options{Activated: []string{protocol.StandInID}, Embedded: b, Now: checkedAt}
	m, err := manifest.ReadWorktreeManifest(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct{ results, replaces string }{
		{folder, s.RunIDs["approvedA4000"]}, {s.Folders["unreviewed"], s.RunIDs["approved3060"]},
	} {
		if m, err = repo.Add(m, manifest.AddOptions{Options: o, ResultsPath: x.results, ReviewPR: "https://example.invalid/pr/11",
			ReviewedBy: "maint", Replaces: x.replaces}); err != nil {
			t.Fatal(err)
		}
	}
	if err := manifest.WriteWorktreeManifest(s.Repo.Dir, m); err != nil {
		t.Fatal(err)
	}
	s.Repo.Commit(t, "approve the new reviews")
	if repo, err = manifest.Open(s.Repo.Dir); err != nil {
		t.Fatal(err)
	}
	c, err := site.Collect(repo, o)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	if err := site.Build(c, dir); err != nil {
		t.Fatal(err)
	}
	return s, c, dir
}

// TestReplacedEntries: the site lists the current entry of a
// replaced run as approved and the replaced one as "replaced", each on a
// page of its own: the current page links the one it replaces, and the
// replaced page says what replaced it and links it.
func TestReplacedEntries(t *testing.T) {
	t.Parallel()
	s, c, dir := replacedSite(t)
	byRun := func(runs []*site.Run, id string) []*site.Run {
		var out []*site.Run
		for _, r := range runs {
			if r.Results != nil && r.Results.Run.ID == id {
				out = append(out, r)
			}
		}
		return out
	}
	for _, x := range []struct{ old, current string }{
		{"approvedA4000", "approvedA4000"}, {"approved3060", "unreviewed"},
	} {
		cur, old := byRun(c.Approved, s.RunIDs[x.current]), byRun(c.Others, s.RunIDs[x.old])
		if len(cur) != 1 || len(old) != 1 || len(byRun(c.Approved, s.RunIDs[x.old])) != 0 && x.old != x.current {
			t.Fatalf("%s: %d current, %d replaced", x.old, len(cur), len(old))
		}
		if old[0].Label != site.LabelReplaced || old[0].ReplacedBy != cur[0] || cur[0].Replaces != old[0] || old[0].Slug == cur[0].Slug {
			t.Errorf("%s: label %q, replaced by %v, slug %s and %s", x.old, old[0].Label, old[0].ReplacedBy, old[0].Slug, cur[0].Slug)
		}
		if old[0].Entry == nil || old[0].Entry.ReplacedBy == nil || cur[0].Entry.Replaces == nil {
			t.Errorf("%s: the entries' marks are not on the runs", x.old)
		}
		curPage, _ := os.ReadFile(filepath.Join(dir, "runs", cur[0].Slug+".html"))
		oldPage, err := os.ReadFile(filepath.Join(dir, "runs", old[0].Slug+".html"))
		if err != nil {
			t.Fatalf("the replaced entry has no page: %v", err)
		}
		if !strings.Contains(string(curPage), `href="`+old[0].Slug+`.html"`) || !strings.Contains(string(curPage), "Replaces") {
			t.Errorf("%s: the current page does not link the replaced one", x.old)
		}
		if !strings.Contains(string(oldPage), `href="`+cur[0].Slug+`.html"`) || !strings.Contains(string(oldPage), "Replaced by") {
			t.Errorf("%s: the replaced page does not say what replaced it", x.old)
		}
	}
	// The replaced 3060 folder is not listed again as an unreviewed report.
	for _, r := range c.Others {
		if r.Folder == filepath.Base(s.Folders["approved3060"]) && r.Label != site.LabelReplaced {
			t.Errorf("the replaced run's folder is also listed as %s", r.Label)
		}
	}
	other, _ := os.ReadFile(filepath.Join(dir, "other.html"))
	if strings.Count(string(other), `data-label="replaced"`) != 2 {
		t.Error("other.html does not list both replaced entries")
	}
}
