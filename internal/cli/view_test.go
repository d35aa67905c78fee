package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/resulttest"
)

// viewPages reads every page of a built view, by its path under out.
func viewPages(t *testing.T, out string) map[string]string {
	t.Helper()
	pages := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(out, p)
		pages[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// checkMarked: every page of a view says it is local and not reviewed, in
// its title and above its content, and none calls its runs approved.
func checkMarked(t *testing.T, pages map[string]string) {
	t.Helper()
	for name, page := range pages {
		title, _, _ := strings.Cut(page, "</title>")
		_, body, _ := strings.Cut(page, "<body>")
		body, _, _ = strings.Cut(body, "<main>")
		if !strings.Contains(title, "local — not reviewed") || !strings.Contains(body, `id="local-mark"`) ||
			!strings.Contains(body, "local — not reviewed") {
			t.Errorf("%s is not marked local — not reviewed:\n%.600s", name, page)
		}
		if strings.Contains(page, "approved run") || strings.Contains(page, "Approved results") || strings.Contains(page, "label-approved") {
			t.Errorf("%s calls a local run approved", name)
		}
	}
}

// simulatedFolder runs the simulator in a fresh working folder and returns
// its result folder.
func simulatedFolder(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	if r := runIn(t, work, "", "bench", "run", "--simulate"); r.code != 0 {
		t.Fatalf("bench run --simulate: exit %d\n%s", r.code, r.stderr)
	}
	_, dir := readResults(t, work)
	return dir
}

// TestViewWritesPages: a simulated, a
// partial, a nonconforming and two comparable complete folders get the
// site's run pages, the comparable pair its compare page, every page
// marked local — not reviewed.
func TestViewWritesPages(t *testing.T) {
	t.Parallel()
	sim := simulatedFolder(t)
	out := filepath.Join(t.TempDir(), "view")
	args := []string{"bench", "view", "--out", out, sim, results(t, "partial"), results(t, "nonconforming"), results(t, "baseline"), results(t, "candidate")}
	r := runIn(t, t.TempDir(), "", args...)
	if r.code != 0 || !strings.Contains(r.stdout, "view: "+out+" (5 folders, ") || r.stderr != "" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pages := viewPages(t, out)
	checkMarked(t, pages)
	runs, compares := 0, 0
	for name := range pages {
		switch {
		case strings.HasPrefix(name, "runs/"):
			runs++
		case strings.HasPrefix(name, "compare/"):
			compares++
		}
	}
	if runs != 5 || !strings.Contains(r.stdout, fmt.Sprintf(" %d compare pages;", compares)) {
		t.Errorf("%d run pages, %d compare pages\n%s", runs, compares, r.stdout)
	}
	idx := pages["index.html"]
	for _, want := range []string{filepath.Base(sim), "label-partial", "label-nonconforming", "label-complete", "is strata&#39;s simulated engine"} {
		if !strings.Contains(idx, want) {
			t.Errorf("the index lacks %q", want)
		}
	}
	base, cand := resulttest.Results(t, "baseline"), resulttest.Results(t, "candidate")
	page := pages["compare/"+slugOf(t, pages, "baseline")+"-vs-"+slugOf(t, pages, "candidate")+".html"]
	if !strings.Contains(page, `data-base-run-id="`+base.Run.ID+`" data-cand-run-id="`+cand.Run.ID+`"`) {
		t.Errorf("no compare page of the baseline and the candidate: %v", keys(pages))
	}
}

// TestViewServe: the pages are served on
// loopback with the site's headers, evidence as text, and the temporary
// folder they were served from is gone when the preview stops.
func TestViewServe(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the preview's temporary folder goes
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := preview(t, ctx, "bench", "view", "--serve", "--addr", "127.0.0.1:0", results(t, "partial"), results(t, "baseline"), results(t, "candidate"))
	get := func(p string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close() // read to its end above
		return resp, string(body)
	}
	resp, idx := get("index.html")
	if resp.StatusCode != 200 || !strings.Contains(idx, `id="local-mark"`) || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("GET index.html: %d %v\n%.400s", resp.StatusCode, resp.Header, idx)
	}
	hrefs := regexp.MustCompile(`href="((?:runs|compare)/[^"]+\.html)"`).FindAllStringSubmatch(idx, -1)
	served := map[string]string{}
	for _, h := range hrefs {
		resp, page := get(h[1])
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", h[1], resp.StatusCode)
		}
		served[h[1]] = page
	}
	checkMarked(t, served)
	if len(served) != 6 { // three run pages, and the three pairs: compare.New compares each
		t.Errorf("the index links %d pages: %v", len(served), keys(served))
	}
	partial := served["runs/"+slugOf(t, served, "partial")+".html"]
	ev := regexp.MustCompile(`href="([^"]+/results\.json\.txt)"`).FindStringSubmatch(partial)
	if ev == nil {
		t.Fatal("the partial run's page links no results.json")
	}
	resp, body := get("runs/" + ev[1])
	want, _ := os.ReadFile(filepath.Join(results(t, "partial"), "results.json"))
	if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || body != string(want) {
		t.Errorf("evidence served as %q, %d bytes (want the folder's %d)", resp.Header.Get("Content-Type"), len(body), len(want))
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary folder after the preview: %v", left)
	}
}

// preview runs a command that serves (--serve) until ctx ends, and
// returns the URL it serves on and its exit code, sent when it ends.
func preview(t *testing.T, ctx context.Context, args ...string) (string, <-chan int) {
	t.Helper()
	out, lines := io.Pipe()
	env := testEnv(t, t.TempDir(), strings.NewReader(""), lines, io.Discard)
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, args, env)
		_ = lines.Close() // always nil; the reader sees the end
	}()
	return resulttest.ServingURL(t, out, done), done
}

// TestViewShowsAnInvalidFolder: a folder the validator rejects keeps its
// page, labelled invalid with its violations, a warning names it, and it
// is compared with nothing.
func TestViewShowsAnInvalidFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "edited")
	copyDir(t, results(t, "candidate"), dir)
	p := filepath.Join(dir, "results.json")
	data, _ := os.ReadFile(p)
	mustWrite(t, p, string(resulttest.EditJSON(t, data, func(m map[string]any) {
		m["quality"].(map[string]any)["passed"] = json.Number("12")
	})))
	out := filepath.Join(t.TempDir(), "view")
	r := runIn(t, t.TempDir(), "", "bench", "view", "--out", out, results(t, "baseline"), dir)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: "+dir+" is not a valid result (") || !strings.Contains(r.stdout, "0 compare pages") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pages := viewPages(t, out)
	checkMarked(t, pages)
	page := pages["runs/"+slugOf(t, pages, "edited")+".html"]
	if !strings.Contains(page, "label-invalid") || !strings.Contains(page, "/quality: is {Passed:12 ") {
		t.Errorf("the invalid folder's page has no label or violation:\n%s", page)
	}
}

// TestViewRefusesBeforeWriting: what is not a view's input is a usage
// error, and nothing is written.
func TestViewRefusesBeforeWriting(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	copyDir(t, results(t, "partial"), filepath.Join(parent, "run"))
	file := filepath.Join(t.TempDir(), "file")
	mustWrite(t, file, "x")
	partial := results(t, "partial")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no folder", []string{"--out", "OUT"}, "view needs a result folder"},
		{"no --out or --serve", []string{partial}, "--out DIR, serves them with --serve"},
		{"a missing folder", []string{"--out", "OUT", filepath.Join(parent, "gone")}, "gone: no such folder"},
		{"a file", []string{"--out", "OUT", file}, file + " is a file, not a result folder"},
		{"a folder of result folders", []string{"--out", "OUT", parent}, parent + " is not a result folder (no results.json); it holds 1 result folder: run; give them instead: strata bench view " + filepath.Join(parent, "run")},
		{"a folder given twice", []string{"--out", "OUT", partial, partial + "/"}, "is given twice"},
		{"--out inside a result folder", []string{"--out", filepath.Join(partial, "view"), partial}, "is inside the result folder"},
		{"a preview off loopback", []string{"--serve", "--addr", "0.0.0.0:0", "--out", "OUT", partial}, "loopback only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			r := runIn(t, work, "", append([]string{"bench", "view"}, c.args...)...)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", r.code, exitcode.Usage, c.want, r.stderr)
			}
			if left, _ := os.ReadDir(work); len(left) > 0 {
				t.Errorf("written: %v", left)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(partial, "view")); err == nil {
		t.Error("a view was written inside the result folder")
	}
}

// TestViewOutIsNeverAnotherFolder: --out has bench site's safety: an
// earlier view is replaced, any other folder with files in it is refused
// and kept as it was.
func TestViewOutIsNeverAnotherFolder(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "view")
	for range 2 { // the second replaces the first
		if r := runIn(t, t.TempDir(), "", "bench", "view", "--out", out, results(t, "partial")); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	}
	mine := t.TempDir()
	mustWrite(t, filepath.Join(mine, "notes.txt"), "mine")
	r := runIn(t, t.TempDir(), "", "bench", "view", "--out", mine, results(t, "partial"))
	if r.code == 0 || !strings.Contains(r.stderr, "exists and is not a strata site") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if left, _ := os.ReadDir(mine); len(left) != 1 {
		t.Errorf("the folder now holds %v", left)
	}
}

// slugOf is the page name of the folder whose path ends in name, read from
// a view's pages.
func slugOf(t *testing.T, pages map[string]string, name string) string {
	t.Helper()
	for p := range pages {
		slug, ok := strings.CutPrefix(strings.TrimSuffix(p, ".html"), "runs/")
		if ok && strings.HasPrefix(slug, contract.Slug(name)+"-") && len(slug) == len(contract.Slug(name))+9 {
			return slug
		}
	}
	t.Fatalf("no run page of %s among %v", name, keys(pages))
	return ""
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// viewable: bench view takes the folder without a warning and writes its
// run page, marked.
func viewable(t *testing.T, dir string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "view")
	r := runIn(t, t.TempDir(), "", "bench", "view", "--out", out, dir)
	pages := viewPages(t, out)
	if r.code != 0 || r.stderr != "" || len(pages) != 2 {
		t.Errorf("bench view %s: exit %d, pages %v\n%s", dir, r.code, keys(pages), r.stderr)
	}
	checkMarked(t, pages)
}
