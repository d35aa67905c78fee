package site_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// checkedAt is the time the site is built in these tests (after the
// committed scenario's reviews).
var checkedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// TestSite builds the scenario repository and its site once and checks
// them in subtests.
func TestSite(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	c, err := site.Collect(repo, manifest.Options{Activated: []string{protocol.StandInID}, Embedded: b, Now: checkedAt})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	if err := site.Build(c, dir); err != nil {
		t.Fatal(err)
	}
	t.Run("labels", func(t *testing.T) { collectLabels(t, s, c) })
	t.Run("escaped markup", func(t *testing.T) { escapedMarkup(t, dir) })
	t.Run("published files", func(t *testing.T) { publishedFiles(t, s, c, dir) })
	t.Run("draft shows nothing", func(t *testing.T) { draftShowsNothing(t, repo) })
	// The browser tests read the built sites only; each drives its own tab
	// of one Chromium, and they overlap their waits.
	br := newBrowser(t)
	t.Run("browser", func(t *testing.T) { t.Parallel(); inBrowser(t, br, s, c, dir) })
	t.Run("browser attack", func(t *testing.T) { t.Parallel(); attackInBrowser(t, br, s, c, dir, "") })
	// The same site with a comparable pair of runs.
	tw := twinSite(t, s, c)
	twDir := filepath.Join(t.TempDir(), "site-twin")
	if err := site.Build(tw, twDir); err != nil {
		t.Fatal(err)
	}
	t.Run("layout", func(t *testing.T) { t.Parallel(); layoutInBrowser(t, br, s, tw, twDir) })
	t.Run("comparisons: published files", func(t *testing.T) { publishedFiles(t, s, tw, twDir) })
	t.Run("comparisons: browser attack", func(t *testing.T) { t.Parallel(); attackInBrowser(t, br, s, tw, twDir, dir) })
}

func collectLabels(t *testing.T, s *submissions.Scenario, c *site.Site) {
	var approved []string
	for _, r := range c.Approved {
		approved = append(approved, r.Results.Run.ID)
	}
	sort.Strings(approved)
	want := []string{s.RunIDs["approved3060"], s.RunIDs["approvedA4000"], s.RunIDs["approvedMarkup"]}
	sort.Strings(want)
	if strings.Join(approved, ",") != strings.Join(want, ",") {
		t.Fatalf("approved %v, want %v", approved, want)
	}
	labels := map[string]string{}
	for _, r := range c.Others {
		labels[r.Folder] = r.Label
	}
	folder := func(role string) string { return filepath.Base(s.Folders[role]) }
	expect := map[string]string{
		folder("partial"): site.LabelPartial, folder("nonconforming"): site.LabelUnverifiable,
		folder("unreviewed"): site.LabelUnreviewed, folder("tampered"): site.LabelUnverifiable,
		folder("legacy"): site.LabelLegacy, folder("hostile"): site.LabelUnreviewed,
	}
	for f, l := range expect {
		if labels[f] != l {
			t.Errorf("%s: label %q, want %q", f, labels[f], l)
		}
	}
	if len(c.Others) != len(expect) {
		t.Errorf("others %v", labels)
	}
	if len(c.Warnings) != 2 {
		t.Errorf("the build says why two entries are not approved: %v", c.Warnings)
	}
	for _, r := range c.Approved {
		if r.Results.Run.ID == s.RunIDs["approved3060"] && len(r.Changed) != 1 {
			t.Errorf("changed-after-review not noted: %v", r.Changed)
		}
	}
}

// escapedMarkup reads every page the site wrote.
func escapedMarkup(t *testing.T, dir string) {
	pages := sitePages(t, dir)
	if len(pages) < 3 {
		t.Fatalf("pages %v", pages)
	}
	for _, p := range pages {
		page, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(page), "<script>window.__pwned") || strings.Contains(string(page), `<img src=x`) {
			t.Errorf("%s: submitted markup reached the page unescaped", p)
		}
	}
}

func draftShowsNothing(t *testing.T, repo *manifest.Repo) {
	b, _ := prompts.Bundle()
	c, err := site.Collect(repo, manifest.Options{Embedded: b, Now: checkedAt})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Approved) != 0 {
		t.Errorf("%d approved runs of a draft protocol", len(c.Approved))
	}
	out := filepath.Join(t.TempDir(), "site")
	if err := site.Build(c, out); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(idx), "No approved results yet") {
		t.Error("index of a draft-only repository")
	}
	// Rebuilding over an earlier site replaces it; a foreign folder is refused.
	if err := site.Build(c, out); err != nil {
		t.Errorf("rebuild: %v", err)
	}
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := site.Build(c, foreign); err == nil {
		t.Error("a folder that is not a strata site was overwritten")
	}
}

// browser is one headless Chromium shared by the browser subtests of a
// test: each opens its own tab, so their waits overlap without a browser
// (and its start) each. It starts on first use, so without Chromium only
// the subtests that need it skip (locally; in CI a missing browser is a
// failure).
type browser struct {
	dir    string // the profile folder, kept until the browser is closed
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

// newBrowser returns the test's browser, closed when the test and its
// subtests are done.
func newBrowser(t *testing.T) *browser {
	b := &browser{dir: t.TempDir()}
	t.Cleanup(func() {
		if b.cancel != nil {
			b.cancel()
		}
	})
	return b
}

// chromiumPath finds the browser. Chromium's headless shell comes first:
// the same Blink lays the pages out, without the full browser's UI
// machinery, which costs as much CPU as the pages; the full browser is the
// fallback on a machine that has only it.
func chromiumPath() (string, error) {
	var err error
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
		var path string
		if path, err = exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", err
}

// tab opens a new tab; done closes it.
func (b *browser) tab(t *testing.T) (ctx context.Context, done func()) {
	t.Helper()
	path, err := chromiumPath()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed; .ci/run installs it (apt-get install chromium-headless-shell)")
		}
		t.Skip("chromium is not installed")
	}
	b.once.Do(func() {
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(b.dir),
			chromedp.WindowSize(1400, 1000),
			// The tabs run side by side; none may be slowed as a
			// background tab (pwned waits on a page timer).
			chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
			// No test goes back a page: a page kept alive for going back,
			// and a new document host made for every navigation, are work
			// for nothing on each of the tests' navigations.
			chromedp.Flag("disable-features", "BackForwardCache,RenderDocument"),
			// The tabs share one renderer process: the pages are one
			// origin's, and a process started for each tab is work for
			// nothing.
			chromedp.Flag("renderer-process-limit", "1"),
			// And that renderer runs in the browser's own process: no
			// messages between two processes for every step of every page.
			// What the tests read, the page's layout, its scripts and the
			// policy Blink enforces, is the renderer's either way.
			chromedp.Flag("single-process", true),
		}
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelB := chromedp.NewContext(actx)
		b.ctx, b.cancel = bctx, func() { cancelB(); cancelA() }
		b.err = chromedp.Do(bctx) // starts the browser
	})
	if b.err != nil {
		t.Fatalf("start chromium: %v", b.err)
	}
	ctx, cancelC := chromedp.NewContext(b.ctx)
	ctx, cancelT := context.WithTimeout(ctx, 180*time.Second)
	return ctx, func() { cancelT(); cancelC() }
}

// js evaluates an expression on the current page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func inBrowser(t *testing.T, br *browser, s *submissions.Scenario, c *site.Site, dir string) {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx, done := br.tab(t)
	defer done()
	shots := screenshotDir(t)
	open := func(page, waitFor string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+page), chromedp.WaitVisible(waitFor)); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The index lists exactly the approved runs.
	open("/index.html", "#results")
	ids := js[[]string](t, ctx, `[...new Set([...document.querySelectorAll('#results tbody tr')].map(r => r.dataset.runId))].sort()`)
	rows := js[int](t, ctx, `document.querySelectorAll('#results tbody tr').length`)
	shot("index")
	want := []string{s.RunIDs["approved3060"], s.RunIDs["approvedA4000"], s.RunIDs["approvedMarkup"]}
	sort.Strings(want)
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("index runs %v, want %v", ids, want)
	}
	if rows != 10 { // 3 cases each, plus the A4000 run's concurrency row
		t.Errorf("%d rows", rows)
	}
	// A filter works.
	if err := chromedp.Do(ctx, chromedp.SetValue(`select[data-filter="gpu"]`, "NVIDIA RTX A4000")); err != nil {
		t.Fatal(err)
	}
	js[bool](t, ctx, `document.querySelector('select[data-filter="gpu"]').dispatchEvent(new Event('change'))`)
	if visible := js[int](t, ctx, `[...document.querySelectorAll('#results tbody tr')].filter(r => !r.hidden).length`); visible != 4 {
		t.Errorf("%d rows visible after filtering by GPU, want 4", visible)
	}
	shot("index-filtered")
	// The other page carries the labels.
	open("/other.html", "#others")
	labels := js[[]string](t, ctx, `[...document.querySelectorAll('#others .label')].map(l => l.textContent).sort()`)
	shot("other")
	if strings.Join(labels, ",") != "legacy,partial,unreviewed,unreviewed,unverifiable,unverifiable" {
		t.Errorf("labels %v", labels)
	}
	// A run page shows its table and charts; planted markup never runs.
	var markup *site.Run
	for _, r := range c.Approved {
		if r.Results.Run.ID == s.RunIDs["approvedMarkup"] {
			markup = r
		}
	}
	open("/runs/"+markup.Slug+".html", "#cases")
	if pwned := js[string](t, ctx, `String(window.__pwned)`); pwned != "undefined" {
		t.Errorf("planted script ran: window.__pwned = %v", pwned)
	}
	svgs := js[int](t, ctx, `document.querySelectorAll('.chart svg').length`)
	caseRows := js[int](t, ctx, `document.querySelectorAll('#cases tbody tr').length`)
	command := js[string](t, ctx, `[...document.querySelectorAll('code')].map(c => c.textContent).find(t => t.includes('strata bench run')) || ''`)
	shot("run")
	if svgs != 3 || caseRows != 3 {
		t.Errorf("run page: %d charts, %d case rows", svgs, caseRows)
	}
	if !strings.Contains(command, "<script>window.__pwned=1</script>") {
		t.Errorf("the markup is not shown as text: %q", command)
	}
	if shots != "" {
		t.Logf("screenshots in %s", shots)
	}
}

// screenshotDir is where the browser tests put screenshots, for a person
// to look at: STRATA_SCREENSHOTS=DIR takes them and keeps them there.
// Without it none is taken: the checks read the laid-out page itself, and
// a full-page capture costs more than the rest of a page's checks.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRATA_SCREENSHOTS")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
