package site_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// twinSite is c plus a faster twin of the approvedMarkup run on another
// GPU and engine: the same protocol, model, files and quantization, so
// compare.New compares the two, and warns (the GPUs differ) in words that
// carry the run's planted markup.
func twinSite(t *testing.T, s *submissions.Scenario, c *site.Site) *site.Site {
	t.Helper()
	src := runByRole(t, s, c, "approvedMarkup")
	r := *src.Results
	r.Run.ID = "twin-of-markup"
	hw := r.Hardware
	hw.GPUs = append([]contract.GPU{}, hw.GPUs...)
	hw.GPUs[0].Name = "NVIDIA GeForce RTX 4090"
	r.Hardware = hw
	engine := "b9999-twin"
	r.Software.EngineVersion = &engine
	r.Summaries = append([]contract.Summary{}, r.Summaries...)
	for i, sm := range r.Summaries {
		factor := 1.25 // the twin is faster: higher rates, lower latencies
		if contract.Unit(sm.Metric) == contract.UnitSeconds {
			factor = 0.8
		}
		scale := func(p *float64) *float64 {
			if p == nil {
				return nil
			}
			v := *p * factor
			return &v
		}
		r.Summaries[i].Median, r.Summaries[i].Min, r.Summaries[i].Max = scale(sm.Median), scale(sm.Min), scale(sm.Max)
	}
	entry := *src.Entry
	entry.RunID = r.Run.ID
	twin := &site.Run{Folder: "2026-12-01-standard-nvidia-geforce-rtx-4090-twin", Label: site.LabelApproved, Results: &r,
		Files: src.Files, Entry: &entry}
	out := &site.Site{Approved: append(append([]*site.Run{}, c.Approved...), twin), Others: c.Others,
		Warnings: c.Warnings, Branch: c.Branch, Head: c.Head}
	site.AssignSlugs(out)
	return out
}

// widths are the window widths every page must fit: a laptop and a phone.
var widths = []int64{1280, 390}

// layoutInBrowser opens every page of a site with comparisons at each
// width: nothing scrolls sideways, the index shows its key columns at
// 1280 px, no number is in exponent notation, and each compare page shows
// exactly the warnings compare.New gives (and a refused pair its reasons).
func layoutInBrowser(t *testing.T, br *browser, s *submissions.Scenario, c *site.Site, dir string) {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx, done := br.tab(t)
	defer done()
	shots := screenshotDir(t)
	byID := map[string]*site.Run{}
	for _, r := range c.Approved {
		byID[r.Results.Run.ID] = r
	}
	pages := sitePages(t, dir)
	ids := siteIDs(c)
	var comparePages []string
	for _, p := range pages {
		if strings.HasPrefix(p, "compare/") {
			comparePages = append(comparePages, p)
		}
	}
	if len(comparePages) == 0 {
		t.Error("no compare page")
	}
	markup := runByRole(t, s, c, "approvedMarkup")
	shotOf := map[string]string{"index.html": "index", "runs/" + markup.Slug + ".html": "run", "other.html": "other",
		"runs/" + runByRole(t, s, c, "hostile").Slug + ".html": "run-hostile", "runs/" + runByRole(t, s, c, "approvedA4000").Slug + ".html": "run-a4000"}
	if len(comparePages) > 0 {
		shotOf[comparePages[0]] = "compare"
	}
	// One navigation per page: the pages' layout is CSS alone (no script
	// reads the width), so the page laid out again at each width is the page
	// loaded at that width. The phone width comes last: its filter check
	// changes the index.
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+urlPath(p))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if pw := pwned(t, ctx); pw != "undefined" {
			t.Errorf("%s: planted script ran: window.__pwned = %q", p, pw)
		}
		for _, w := range widths {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
				t.Fatal(err)
			}
			if name, ok := shotOf[p]; ok && shots != "" {
				shoot(t, ctx, shots, fmt.Sprintf("layout-%s-%d", name, w), 4)
			}
			checkFits(t, ctx, p, w)
			checkIDs(t, ctx, p, w, ids)
			checkChartText(t, ctx, p, w)
			if w == 1280 && p == "index.html" {
				checkIndexColumns(t, ctx)
			}
			if w == 390 && p == "index.html" {
				checkFilterCards(t, ctx)
			}
			if w == 1280 && strings.HasPrefix(p, "compare/") {
				checkComparePage(t, ctx, p, byID)
			}
		}
	}
	checkPairs(t, c, dir)
	if shots != "" {
		t.Logf("screenshots in %s", shots)
	}
}

// checkFits: the page does not scroll sideways (and does not hide that it
// would), and no number is in exponent notation, in the text or an SVG.
func checkFits(t *testing.T, ctx context.Context, p string, w int64) {
	t.Helper()
	// One evaluation (one round trip to the browser) reads all four facts.
	got := js[struct {
		Scroll, Inner int
		Overflow      string
		Wide, Exp     []string
	}](t, ctx, `({
		Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth,
		Overflow: getComputedStyle(document.documentElement).overflowX + ' ' + getComputedStyle(document.body).overflowX,
		Wide: [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => e.tagName + '.' + e.className + ' ' + (e.textContent || '').slice(0, 60)),
		Exp: [document.documentElement.outerHTML, ...[...document.querySelectorAll('svg')].map(s => s.outerHTML)].map(h => (h.match(/[0-9]e\+[0-9]*/i) || [''])[0]).filter(Boolean),
	})`)
	if got.Scroll > got.Inner || int64(got.Inner) != w {
		t.Errorf("%s at %d px: scroll width %d, window %d: the page scrolls sideways", p, w, got.Scroll, got.Inner)
	}
	if got.Overflow != "visible visible" {
		t.Errorf("%s: overflow-x %s hides what does not fit", p, got.Overflow)
	}
	if wide := got.Wide; len(wide) > 0 {
		if len(wide) > 5 {
			wide = wide[:5]
		}
		t.Errorf("%s at %d px: elements past the right edge: %q", p, w, wide)
	}
	if len(got.Exp) > 0 {
		t.Errorf("%s: a number in exponent notation: %q", p, got.Exp)
	}
}

// shoot writes a full-page screenshot of the page as name.png and, for a
// person to look at in full size, the first screens one by one.
func shoot(t *testing.T, ctx context.Context, dir, name string, screens int) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range screens {
		js[bool](t, ctx, fmt.Sprintf(`(window.scrollTo(0, %d * window.innerHeight), true)`, i))
		screen, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-screen%d.png", name, i+1)), screen, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if screens > 0 {
		js[bool](t, ctx, `(window.scrollTo(0, 0), true)`)
	}
}

// checkIndexColumns: at 1280 px the index's header shows the five metrics
// and Capped, Sanity and Status within the window.
func checkIndexColumns(t *testing.T, ctx context.Context) {
	t.Helper()
	heads := js[[][]any](t, ctx, `[...document.querySelectorAll('#results thead th')].map(th => { const r = th.getBoundingClientRect();
		return [th.textContent.trim().toLowerCase(), r.right, r.width, window.innerWidth] })`)
	for _, want := range []string{"prompt", "decode", "ttft", "first answer", "total", "capped", "sanity", "status"} {
		found := false
		for _, h := range heads {
			if strings.Contains(h[0].(string), want) {
				found = true
				right, width, inner := h[1].(float64), h[2].(float64), h[3].(float64)
				if right > inner || width <= 0 {
					t.Errorf("index at 1280 px: column %q ends at %.0f, window %.0f", h[0], right, inner)
				}
			}
		}
		if !found {
			t.Errorf("index: no %q column (%v)", want, heads)
		}
	}
}

// checkFilterCards: on a phone, where rows are cards, the GPU filter still
// hides the other GPUs' rows.
func checkFilterCards(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetValue(`select[data-filter="gpu"]`, "NVIDIA RTX A4000")); err != nil {
		t.Fatal(err)
	}
	js[bool](t, ctx, `document.querySelector('select[data-filter="gpu"]').dispatchEvent(new Event('change'))`)
	shown := js[[]string](t, ctx, `[...document.querySelectorAll('#results tbody tr')].filter(r => r.getBoundingClientRect().height > 0).map(r => r.closest('tbody').dataset.gpu)`)
	if len(shown) != 4 {
		t.Errorf("index at 390 px: %d cards shown after filtering by GPU, want 4: %q", len(shown), shown)
	}
	for _, g := range shown {
		if g != "NVIDIA RTX A4000" {
			t.Errorf("index at 390 px: a %s card is shown after filtering", g)
		}
	}
}

// checkComparePage: the page names its two runs and shows exactly the
// warnings compare.New gives for them, and per case and metric a ratio.
func checkComparePage(t *testing.T, ctx context.Context, p string, byID map[string]*site.Run) {
	t.Helper()
	ids := js[[]string](t, ctx, `(() => { const c = document.querySelector('#comparison'); return c ? [c.dataset.baseRunId, c.dataset.candRunId] : ['', ''] })()`)
	base, cand := byID[ids[0]], byID[ids[1]]
	if base == nil || cand == nil {
		t.Errorf("%s: runs %q not approved runs", p, ids)
		return
	}
	cmp, err := compare.New(base.Results, cand.Results)
	if err != nil {
		t.Errorf("%s: a page for a pair compare.New refuses: %v", p, err)
		return
	}
	shown := js[[]string](t, ctx, `[...document.querySelectorAll('#warnings li')].map(l => l.textContent)`)
	if strings.Join(shown, "\n") != strings.Join(cmp.Warnings, "\n") {
		t.Errorf("%s: warnings\n%q\nwant (compare.New)\n%q", p, shown, cmp.Warnings)
	}
	if len(cmp.Warnings) > 0 && !js[bool](t, ctx, `(() => { const w = document.querySelector('#warnings'); return !!w && w.getBoundingClientRect().top < window.innerHeight })()`) {
		t.Errorf("%s: the warnings are not on the first screen", p)
	}
	rows := js[int](t, ctx, `document.querySelectorAll('#metrics tbody tr').length`)
	if rows != len(cmp.Rows) {
		t.Errorf("%s: %d metric rows, compare.New has %d", p, rows, len(cmp.Rows))
	}
	// The words and ratios of bench compare (compare.ChangeOf), row by row.
	shownChanges := js[[]string](t, ctx, `[...document.querySelectorAll('#metrics tbody tr')].map(tr => tr.querySelector('.ratio').textContent + ' ' + tr.querySelector('.direction').textContent)`)
	var wantChanges []string
	for _, r := range cmp.Rows {
		ch := compare.ChangeOf(r.Metric, r.Base, r.Cand)
		wantChanges = append(wantChanges, ch.Ratio+" "+ch.Direction)
	}
	if strings.Join(shownChanges, "\n") != strings.Join(wantChanges, "\n") {
		t.Errorf("%s: changes\n%q\nwant (compare.ChangeOf)\n%q", p, shownChanges, wantChanges)
	}
	if verdicts := js[int](t, ctx, `document.querySelectorAll('#verdicts tbody tr').length`); verdicts != len(cmp.Verdicts) {
		t.Errorf("%s: %d verdict rows, compare.New has %d", p, verdicts, len(cmp.Verdicts))
	}
	if svgs := js[int](t, ctx, `document.querySelectorAll('.chart svg').length`); svgs == 0 {
		t.Errorf("%s: no charts", p)
	}
}

// checkPairs: every pair of approved runs of one protocol and model that
// compare.New compares has a page linked from both run pages; a pair it
// refuses has no page, and both run pages show its reasons.
func checkPairs(t *testing.T, c *site.Site, dir string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return html.UnescapeString(string(b))
	}
	compared, refused := 0, 0
	for i, a := range c.Approved {
		for _, b := range c.Approved[i+1:] {
			ra, rb := a.Results, b.Results
			if ra.Protocol.ID != rb.Protocol.ID || deref(ra.Model.ID) != deref(rb.Model.ID) {
				continue
			}
			pa, pb := read("runs/"+a.Slug+".html"), read("runs/"+b.Slug+".html")
			cmpAB, errAB := compare.New(ra, rb)
			_, errBA := compare.New(rb, ra)
			if errAB == nil || errBA == nil {
				compared++
				found := false
				for _, name := range []string{a.Slug + "-vs-" + b.Slug, b.Slug + "-vs-" + a.Slug} {
					if _, err := os.Stat(filepath.Join(dir, "compare", name+".html")); err == nil {
						found = true
						href := `href="../compare/` + name + `.html"`
						if !strings.Contains(pa, href) || !strings.Contains(pb, href) {
							t.Errorf("%s: not linked from both run pages", name)
						}
					}
				}
				if !found {
					t.Errorf("no compare page for %s and %s (warnings %q)", a.Folder, b.Folder, cmpAB.Warnings)
				}
				continue
			}
			refused++
			var rf *compare.Refusal
			if !errors.As(errAB, &rf) {
				t.Fatalf("compare.New: %v", errAB)
			}
			for _, reason := range rf.Reasons {
				for _, page := range []string{pa, pb} {
					if !strings.Contains(page, reason) {
						t.Errorf("%s / %s: refusal %q not shown on the run pages", a.Folder, b.Folder, reason)
					}
				}
			}
			for _, name := range []string{a.Slug + "-vs-" + b.Slug, b.Slug + "-vs-" + a.Slug} {
				if _, err := os.Stat(filepath.Join(dir, "compare", name+".html")); err == nil {
					t.Errorf("%s: a page for a refused pair", name)
				}
			}
		}
	}
	t.Logf("%d pairs compared, %d refused", compared, refused)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
