package site_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/site"
)

// TestHandlerHeaders: the preview sends the policy and nosniff on every
// response, text/plain for anything under runs/<slug>/, even a file no
// build wrote, and no folder listings.
func TestHandlerHeaders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html":                    "<!doctype html><title>i</title>",
		"style.css":                     "body {}",
		"runs/abc.html":                 "<!doctype html><title>run</title>",
		"runs/abc/outputs.jsonl.txt":    "{}",
		"runs/abc/evil.html":            "<script>window.__pwned=1</script>",
		"runs/abc/evil.svg":             `<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"/>`,
		"runs/abc/results.json.txt.htm": "<script>window.__pwned=1</script>",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(site.Handler(dir))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		path   string
		status int
		ctype  string // prefix
	}{
		{"/", 200, "text/html"},
		{"/style.css", 200, "text/css"},
		{"/runs/abc.html", 200, "text/html"},
		{"/runs/abc/outputs.jsonl.txt", 200, "text/plain; charset=utf-8"},
		{"/runs/abc/evil.html", 200, "text/plain; charset=utf-8"},
		{"/runs/abc/evil.svg", 200, "text/plain; charset=utf-8"},
		{"/runs/abc/results.json.txt.htm", 200, "text/plain; charset=utf-8"},
		{"/runs/abc/%65vil.html", 200, "text/plain; charset=utf-8"},
		{"/runs/abc/", http.StatusNotFound, ""}, // no listings
		{"/runs/", http.StatusNotFound, ""},
		{"/index.html", http.StatusMovedPermanently, ""},
		{"/missing.html", http.StatusNotFound, ""},
	} {
		resp, err := client.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close() // only the status and headers are checked
		h := resp.Header
		if resp.StatusCode != c.status || !strings.HasPrefix(h.Get("Content-Type"), c.ctype) {
			t.Errorf("%s: %d %q, want %d %q", c.path, resp.StatusCode, h.Get("Content-Type"), c.status, c.ctype)
		}
		if got := h.Get("Content-Security-Policy"); got != site.Policy+"; frame-ancestors 'none'" {
			t.Errorf("%s: Content-Security-Policy %q", c.path, got)
		}
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", c.path, got)
		}
	}
}
