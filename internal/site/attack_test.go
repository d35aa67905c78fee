package site_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// policy is the Content-Security-Policy every page carries: nothing inline,
// nothing from elsewhere.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'"

// siteFiles lists every file the site wrote, slash-separated and relative.
func siteFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sitePages are the site's own pages: the top-level pages and one page per
// run (runs/<slug>.html); everything deeper under runs/ is evidence.
func sitePages(t *testing.T, dir string) []string {
	var out []string
	for _, f := range siteFiles(t, dir) {
		if strings.HasSuffix(f, ".html") && strings.Count(f, "/") <= 1 {
			out = append(out, f)
		}
	}
	return out
}

// runByRole finds the run of a scenario folder.
func runByRole(t *testing.T, s *submissions.Scenario, c *site.Site, role string) *site.Run {
	t.Helper()
	for _, r := range append(append([]*site.Run{}, c.Approved...), c.Others...) {
		if r.Folder == path.Base(s.Folders[role]) {
			return r
		}
	}
	t.Fatalf("no run for %s", role)
	return nil
}

// mayPublish is the rule: results.json of a readable report, a README.md,
// and an artifact its results.json lists with a known kind, under a plain
// file name, whose bytes hash to the listed SHA-256.
func mayPublish(r *site.Run, name string) bool {
	if name == "README.md" || (name == "results.json" && r.Results != nil) {
		return true
	}
	if r.Results == nil || strings.ContainsAny(name, `/\:`) || strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
		return false
	}
	for _, a := range r.Results.Artifacts {
		switch a.Kind {
		case contract.ArtifactConfig, contract.ArtifactEngineLog, contract.ArtifactOutputs, contract.ArtifactProvenance:
		default:
			continue
		}
		if data, ok := r.Files[name]; ok && a.Path == name && sha(data) == a.SHA256 {
			return true
		}
	}
	return false
}

// publishedFiles checks, on disk, that the site published exactly what the
// rule allows, byte for byte, and only under a .txt name.
func publishedFiles(t *testing.T, s *submissions.Scenario, c *site.Site, dir string) {
	own := map[string]bool{"index.html": true, "other.html": true, "style.css": true, "filter.js": true, ".strata-site": true}
	runs := map[string]*site.Run{}
	for _, r := range append(append([]*site.Run{}, c.Approved...), c.Others...) {
		runs[r.Slug], own["runs/"+r.Slug+".html"] = r, true
	}
	rendered := []string{".html", ".htm", ".shtml", ".svg", ".svgz", ".xml", ".xsl", ".xslt", ".xhtml", ".xht",
		".js", ".mjs", ".cjs", ".css", ".wasm", ".pdf", ".mht", ".mhtml", ".swf"}
	published := map[string]map[string]bool{} // slug -> original names
	for _, f := range siteFiles(t, dir) {
		if own[f] || isComparePage(f) {
			continue
		}
		for _, ext := range rendered {
			if strings.HasSuffix(strings.ToLower(f), ext) {
				t.Errorf("%s: a submitted file under a name a browser renders or runs", f)
			}
		}
		slug, name, ok := strings.Cut(strings.TrimPrefix(f, "runs/"), "/")
		r := runs[slug]
		if !strings.HasPrefix(f, "runs/") || !ok || r == nil || strings.Contains(name, "/") {
			t.Errorf("%s: not a file of one run's evidence folder", f)
			continue
		}
		orig, isText := strings.CutSuffix(name, ".txt")
		data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		switch {
		case !isText:
			t.Errorf("%s: evidence not published as .txt", f)
		case !mayPublish(r, orig):
			t.Errorf("%s: %s published, but the rule does not allow it", f, orig)
		case string(data) != string(r.Files[orig]):
			t.Errorf("%s: the bytes differ from the folder's %s", f, orig)
		}
		if published[slug] == nil {
			published[slug] = map[string]bool{}
		}
		published[slug][orig] = true
	}
	for slug, r := range runs {
		for name := range r.Files {
			if mayPublish(r, name) && !published[slug][name] {
				t.Errorf("%s: %s is allowed but was not published", r.Folder, name)
			}
		}
	}
	for role, names := range s.Unpublishable {
		r := runByRole(t, s, c, role)
		for _, n := range names {
			if published[r.Slug][n] {
				t.Errorf("%s: %q was published", role, n)
			}
		}
	}
	for role, names := range s.ListedAsText {
		r := runByRole(t, s, c, role)
		for _, n := range names {
			if !published[r.Slug][n] {
				t.Errorf("%s: listed %q was not published as text", role, n)
			}
		}
	}
	if !published[runByRole(t, s, c, "legacy").Slug]["README.md"] {
		t.Error("the legacy README is not published")
	}
}

// isComparePage reports whether f is one of the site's compare pages
// (compare/<slug>-vs-<slug>.html): evidence is only ever under runs/.
func isComparePage(f string) bool {
	name, ok := strings.CutPrefix(f, "compare/")
	return ok && !strings.Contains(name, "/") && strings.HasSuffix(name, ".html")
}

// urlPath escapes each element of a site path.
func urlPath(f string) string {
	parts := strings.Split(f, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/" + strings.Join(parts, "/")
}

// pwned is window.__pwned once the page's late handlers (an image's
// onerror) have had their turn.
func pwned(t *testing.T, ctx context.Context) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(r => setTimeout(() => r(String(window.__pwned)), 50))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// attackInBrowser opens, from a plain static host, every page the site
// wrote and every file under runs/: no planted script runs anywhere, every
// page carries the policy (and the browser enforces it), the pages show
// what was planted in the results as text, and evidence is text. A file
// byte for byte the same as the one at its path under checked (a site this
// test opens in full) is not opened again: the same bytes from the same
// kind of host give the same page.
func attackInBrowser(t *testing.T, br *browser, s *submissions.Scenario, c *site.Site, dir, checked string) {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx, done := br.tab(t)
	defer done()
	pages := map[string]bool{}
	for _, p := range sitePages(t, dir) {
		pages[p] = true
	}
	// What pages show as text, checked on the one visit each page gets.
	P, N := submissions.Payload, submissions.NamePayload
	shows := map[string][]string{
		"index.html": {P("gpu"), P("quantization"), N("model-id")},
		"other.html": {N("folder"), P("run-id"), P("run-status"), P("status-reason")},
		"runs/" + runByRole(t, s, c, "approvedMarkup").Slug + ".html": {submissions.Markup, P("track-notes"), P("reviewed-by"), N("approvedMarkup-unlisted")},
		"runs/" + runByRole(t, s, c, "partial").Slug + ".html":        {P("status-reason")},
		"runs/" + runByRole(t, s, c, "hostile").Slug + ".html": {N("folder"), P("run-id"), P("started-at"), P("command"), P("run-status"),
			P("profile"), P("corpus-sha256"), P("gpu"), P("engine-version"), P("strata-commit"), P("model-id"), P("quantization"),
			P("model-file-path"), P("model-file-sha256"), P("track"), P("track-notes"), P("verdict-reason"), P("verdict-case"),
			P("verdict-status"), P("artifact-kind"), P("artifact-path"), N("artifact-name"), "sub/evil.html", "../evil.html"},
	}
	for page := range shows {
		if !pages[page] {
			t.Errorf("%s: not a page of the site", page)
		}
	}
	opened, same := 0, 0
	// Every page, every file of the runs that carry planted files (hostile,
	// approvedMarkup, legacy) and the first evidence file of each other
	// run: the rest are the same kind of file, published the same way.
	planted := map[string]bool{}
	for _, role := range []string{"hostile", "approvedMarkup", "legacy"} {
		planted["runs/"+runByRole(t, s, c, role).Slug+"/"] = true
	}
	firstOf := map[string]bool{}
	for _, f := range siteFiles(t, dir) {
		if !pages[f] && !strings.HasPrefix(f, "runs/") {
			continue
		}
		if run := path.Dir(f) + "/"; !pages[f] && !planted[run] {
			if firstOf[run] {
				continue
			}
			firstOf[run] = true
		}
		if checked != "" && sameFile(filepath.Join(dir, filepath.FromSlash(f)), filepath.Join(checked, filepath.FromSlash(f))) {
			opened, same = opened+1, same+1
			continue
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+urlPath(f))); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		opened++
		if v := pwned(t, ctx); v != "undefined" {
			t.Errorf("%s: planted script ran: window.__pwned = %q", f, v)
		}
		if pages[f] {
			checkPage(t, ctx, f)
			if want := shows[f]; len(want) > 0 {
				text := js[string](t, ctx, `document.body.textContent`)
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("%s does not show %q as text", f, w)
					}
				}
			}
			if strings.HasPrefix(f, "runs/") {
				checkEvidenceLinks(t, ctx, f, dir)
			}
		} else if ct := js[string](t, ctx, `document.contentType`); ct != "text/plain" {
			t.Errorf("%s: opened as %s, not text", f, ct)
		}
	}
	t.Logf("opened %d pages and evidence files (%d of them as the same bytes in %s)", opened, same, checked)
	if runs := len(c.Approved) + len(c.Others); opened < len(pages)+runs { // every run publishes a report
		t.Errorf("only %d files opened for %d pages and %d runs", opened, len(pages), runs)
	}
}

// sameFile reports whether two files hold the same bytes.
func sameFile(a, b string) bool {
	x, errA := os.ReadFile(a)
	y, errB := os.ReadFile(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// checkPage: the policy is the first element of the head and in force, the
// page has nothing inline for it to block, its stylesheet applies, and no
// link leaves http(s).
func checkPage(t *testing.T, ctx context.Context, f string) {
	t.Helper()
	meta := js[string](t, ctx, `(() => { const m = document.head.firstElementChild;
		return m && m.tagName === 'META' && m.httpEquiv.toLowerCase() === 'content-security-policy' ? m.content : '' })()`)
	if meta != policy {
		t.Errorf("%s: the first element of <head> is not the policy (%q)", f, meta)
	}
	inline := js[[]string](t, ctx, `[...document.querySelectorAll('*')].filter(e => e.hasAttribute('style') || e.tagName === 'STYLE' ||
		(e.tagName === 'SCRIPT' && !e.getAttribute('src')) || [...e.attributes].some(a => /^on/i.test(a.name))).map(e => e.outerHTML.slice(0, 120))`)
	if len(inline) > 0 {
		t.Errorf("%s: inline style or script the policy would block: %q", f, inline)
	}
	if bg := js[string](t, ctx, `getComputedStyle(document.querySelector('header')).backgroundColor`); bg != "rgb(243, 244, 246)" {
		t.Errorf("%s: style.css does not apply (header background %s)", f, bg)
	}
	links := js[[]string](t, ctx, `[...document.querySelectorAll('a[href]')].filter(a => a.protocol !== 'http:' && a.protocol !== 'https:').map(a => a.getAttribute('href'))`)
	if len(links) > 0 {
		t.Errorf("%s: links outside http(s): %q", f, links)
	}
	// The browser refuses an inline script the page gains later.
	probe := js[string](t, ctx, `(() => { const s = document.createElement('script'); s.textContent = 'window.__inline = 1';
		document.head.append(s); return String(window.__inline) })()`)
	if probe != "undefined" {
		t.Errorf("%s: an inline script ran: the policy is not in force", f)
	}
}

// checkEvidenceLinks: each evidence link of a run page shows the file's
// own name and points to that name plus .txt, which exists.
func checkEvidenceLinks(t *testing.T, ctx context.Context, f, dir string) {
	t.Helper()
	links := js[[][]string](t, ctx, `[...document.querySelectorAll('#evidence a')].map(a => [a.textContent, decodeURIComponent(a.pathname)])`)
	if len(links) == 0 {
		t.Errorf("%s: no evidence links", f)
	}
	for _, l := range links {
		name, p := l[0], l[1]
		if !strings.HasSuffix(p, "/"+name+".txt") {
			t.Errorf("%s: link %q goes to %s", f, name, p)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))); err != nil {
			t.Errorf("%s: link %q: %v", f, name, err)
		}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
