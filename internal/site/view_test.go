package site_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/site"
	"github.com/strata-bench/strata/internal/validate"
)

// localFolders are committed result folders as bench view hands them to
// View: validated, each named as given.
func localFolders(t *testing.T, names ...string) []site.Folder {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	var out []site.Folder
	for _, name := range names {
		dir := filepath.Join(resulttest.Testdata(t), "results", name)
		v, err := validate.Dir(dir, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Violations) > 0 {
			t.Fatalf("%s: %v", name, v.Violations)
		}
		out = append(out, site.Folder{Name: "bench-results/" + name, Dir: dir, Results: v.Results})
	}
	return out
}

// buildView builds the view of folders and returns its folder.
func buildView(t *testing.T, folders []site.Folder) (*site.Site, string) {
	t.Helper()
	s, err := site.View(folders)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "view")
	if err := site.Build(s, dir); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func readPage(t *testing.T, dir, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestViewMarksEveryPage: every page of a local view says "local — not
// reviewed" in its title and above its content; no page of the approved
// site does.
func TestViewMarksEveryPage(t *testing.T) {
	t.Parallel()
	_, dir := buildView(t, localFolders(t, "baseline", "candidate", "partial"))
	pages := sitePages(t, dir)
	if len(pages) != 1+3+3 { // the index, three runs, three pairs
		t.Errorf("pages %v", pages)
	}
	for _, p := range pages {
		page := readPage(t, dir, p)
		head, _, _ := strings.Cut(page, "<main>")
		if !strings.Contains(head, "<title>") || strings.Count(head, site.LocalMark) < 2 || !strings.Contains(head, `id="local-mark"`) {
			t.Errorf("%s is not marked %s:\n%s", p, site.LocalMark, head)
		}
	}
	approved := filepath.Join(t.TempDir(), "site")
	if err := site.Build(&site.Site{Branch: "main", Head: strings.Repeat("0", 40)}, approved); err != nil {
		t.Fatal(err)
	}
	for _, p := range sitePages(t, approved) {
		if page := readPage(t, approved, p); strings.Contains(page, site.LocalMark) || strings.Contains(page, "local-mark") {
			t.Errorf("the approved site's %s is marked local", p)
		}
	}
}

// TestViewLabelsAndPairs: a valid folder is labelled local (a partial one
// keeps its reasons), an invalid one invalid with its violations and
// compared with nothing, and two folders compare.New refuses (different
// models) have no compare page and the reasons on both run pages.
func TestViewLabelsAndPairs(t *testing.T) {
	t.Parallel()
	folders := localFolders(t, "baseline", "candidate", "partial")
	other := *folders[1].Results
	model := "another-model.gguf"
	other.Model.ID = &model
	folders[1].Results = &other
	bad := folders[0]
	bad.Name, bad.Violations = "bench-results/edited", []string{"/quality: is 12/12; the verdicts give 11/12"}
	s, dir := buildView(t, append(folders, bad))
	labels := map[string]string{}
	for _, r := range s.Others {
		labels[r.Folder] = r.Label
	}
	want := map[string]string{"bench-results/baseline": site.LabelLocal, "bench-results/candidate": site.LabelLocal,
		"bench-results/partial": site.LabelLocal, "bench-results/edited": site.LabelInvalid}
	for f, l := range want {
		if labels[f] != l {
			t.Errorf("%s: label %q, want %q", f, labels[f], l)
		}
	}
	byFolder := map[string]*site.Run{}
	for _, r := range s.Others {
		byFolder[r.Folder] = r
	}
	invalid := readPage(t, dir, "runs/"+byFolder["bench-results/edited"].Slug+".html")
	if !strings.Contains(invalid, "label-invalid") || !strings.Contains(invalid, "/quality: is 12/12; the verdicts give 11/12") || strings.Contains(invalid, `id="comparisons"`) {
		t.Errorf("the invalid folder's page:\n%s", invalid)
	}
	if p := readPage(t, dir, "runs/"+byFolder["bench-results/partial"].Slug+".html"); !strings.Contains(p, "required work was skipped") {
		t.Error("the partial folder's page does not say why it is partial")
	}
	for _, f := range []string{"bench-results/baseline", "bench-results/candidate"} {
		page := readPage(t, dir, "runs/"+byFolder[f].Slug+".html")
		if !strings.Contains(page, "not comparable") || !strings.Contains(page, model) {
			t.Errorf("%s: the refused pair and its reasons are not on its page", f)
		}
	}
	compares, _ := filepath.Glob(filepath.Join(dir, "compare", "*.html"))
	for _, c := range compares {
		if strings.Contains(c, byFolder["bench-results/edited"].Slug) ||
			strings.Contains(c, byFolder["bench-results/baseline"].Slug) && strings.Contains(c, byFolder["bench-results/candidate"].Slug) {
			t.Errorf("a compare page of a pair that is not compared: %s", c)
		}
	}
	if len(compares) != 1 { // the partial run and the baseline: the candidate is of another model now
		t.Errorf("compare pages %v", compares)
	}
}

// viewInBrowser lays out every page of a local view at a laptop's and a
// phone's width: nothing scrolls sideways, and the mark is on the first
// screen. (The pairs have no energy table: a compare page's energy table
// overflows a phone's width on the approved site too, which is the site's
// layout to fix.)
func viewInBrowser(t *testing.T, br *browser) {
	_, dir := buildView(t, localFolders(t, "baseline", "partial", "nonconforming"))
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx, done := br.tab(t)
	defer done()
	for _, p := range sitePages(t, dir) {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+urlPath(p))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, w := range widths {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
				t.Fatal(err)
			}
			checkFits(t, ctx, p, w)
			mark := js[struct {
				Top, Bottom, Inner float64
				Text               string
			}](t, ctx, `(() => { const m = document.getElementById('local-mark'); const r = m ? m.getBoundingClientRect() : {};
				return {Top: r.top || 0, Bottom: r.bottom || 0, Inner: window.innerHeight, Text: m ? m.textContent : ''} })()`)
			if !strings.Contains(mark.Text, site.LocalMark) || mark.Bottom <= mark.Top || mark.Bottom > mark.Inner {
				t.Errorf("%s at %d px: the mark is not on the first screen: %+v", p, w, mark)
			}
		}
	}
}

// TestViewLeavesOutHugeArtifacts: an artifact past what strata reads of
// a result folder (a 64 MiB + 1 sparse engine log) is left out of the
// view's evidence, as a link is, instead of being read into memory.
func TestViewLeavesOutHugeArtifacts(t *testing.T) {
	t.Parallel()
	f := localFolders(t, "baseline")[0]
	dir := filepath.Join(t.TempDir(), "baseline")
	if err := os.CopyFS(dir, os.DirFS(f.Dir)); err != nil {
		t.Fatal(err)
	}
	const name = "engine.log"
	if err := os.Truncate(filepath.Join(dir, name), contract.MaxArtifactBytes+1); err != nil {
		t.Fatal(err)
	}
	f.Dir = dir
	s, err := site.View([]site.Folder{f})
	if err != nil {
		t.Fatal(err)
	}
	if b, read := s.Others[0].Files[name]; read {
		t.Errorf("%s of %d bytes was read into the view's evidence (%d bytes); want it left out", name, contract.MaxArtifactBytes+1, len(b))
	}
	if _, read := s.Others[0].Files["results.json"]; !read {
		t.Error("results.json was left out")
	}
}
