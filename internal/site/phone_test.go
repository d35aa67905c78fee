package site_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// maxIndexHeight390 bounds the index of the committed test repository (3
// approved runs, 10 cases) on a 390 px phone: each run's identity once,
// its cases compact inside its card.
const maxIndexHeight390 = 3800

// checkIndexOnPhone: at 390 px the committed repository's index shows one
// card per run, each run's identity block once, and stays within
// maxIndexHeight390.
func checkIndexOnPhone(t *testing.T, ctx context.Context, runs int) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900)); err != nil {
		t.Fatal(err)
	}
	got := js[struct {
		Height, Cards, Identities, Cases int
		Demo                             float64
	}](t, ctx, `({Height: document.documentElement.scrollHeight,
		Cards: document.querySelectorAll('#results tbody.run').length,
		Identities: document.querySelectorAll('#results tbody .c-run').length,
		Cases: document.querySelectorAll('#results tbody tr').length,
		Demo: (() => { const d = document.querySelector('#demo'); return d ? d.getBoundingClientRect().bottom : -1 })()})`)
	if got.Cards != runs || got.Identities != runs || got.Cases != 10 {
		t.Errorf("index at 390 px: %d run cards, %d identity blocks, %d case rows; want %d, %d, 10", got.Cards, got.Identities, got.Cases, runs, runs)
	}
	if got.Height > maxIndexHeight390 {
		t.Errorf("index at 390 px is %d px tall, want at most %d", got.Height, maxIndexHeight390)
	}
	if got.Demo < 0 || got.Demo > 900 {
		t.Errorf("index at 390 px: the demonstration label ends at %.0f px, not on the first screen", got.Demo)
	}
}

// siteIDs are the IDs a site shows: protocol IDs, run IDs and hashes
// (results, artifacts, model files, corpus, commits).
func siteIDs(c *site.Site) []string {
	seen := map[string]bool{c.Head: true}
	add := func(ps ...*string) {
		for _, p := range ps {
			if p != nil && *p != "" {
				seen[*p] = true
			}
		}
	}
	for _, r := range append(append([]*site.Run{}, c.Approved...), c.Others...) {
		for _, e := range r.Evidence() {
			add(&e.SHA256)
		}
		if e := r.Entry; e != nil {
			add(&e.RunID, &e.ProtocolID, &e.ResultsSHA256, &e.EvidenceCommit)
		}
		res := r.Results
		if res == nil {
			continue
		}
		add(&res.Run.ID, &res.Protocol.ID, &res.Protocol.CorpusSHA256, res.Protocol.GitCommit, res.Software.StrataCommit)
		for _, f := range res.Model.Files {
			add(f.SHA256)
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// checkIDs: no ID on the page breaks across lines (it may scroll), and
// each is whole in one text node, where the check can see it.
func checkIDs(t *testing.T, ctx context.Context, p string, w int64, ids []string) {
	t.Helper()
	list, err := json.Marshal(ids)
	if err != nil {
		t.Fatal(err)
	}
	got := js[struct{ Broken, Split []string }](t, ctx, `((ids) => {
		const broken = [], found = new Map();
		const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			for (const id of ids) {
				for (let i = n.data.indexOf(id); i >= 0; i = n.data.indexOf(id, i + id.length)) {
					found.set(id, (found.get(id) || 0) + 1);
					const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + id.length);
					const lines = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.bottom)));
					if (lines.size > 1) broken.push(id.slice(0, 40) + ' in ' + n.parentElement.tagName + '.' + n.parentElement.className + ' (' + lines.size + ' lines)');
				}
			}
		}
		const text = document.body.textContent, split = [];
		for (const id of ids) {
			const all = text.split(id).length - 1;
			if (all > (found.get(id) || 0)) split.push(id.slice(0, 40));
		}
		return {Broken: broken, Split: split};
	})(`+string(list)+`)`)
	if len(got.Broken) > 0 {
		t.Errorf("%s at %d px: IDs broken across lines: %q", p, w, got.Broken)
	}
	if len(got.Split) > 0 {
		t.Errorf("%s at %d px: IDs split across elements: %q", p, w, got.Split)
	}
}

// capacitySite is three approved runs of one protocol and model (the
// committed baseline and candidate, and a copy of the baseline), on
// servers of 1 slot, 4 slots and an unknown capacity: each ran the
// concurrency stage and measured its energy.
func capacitySite(t *testing.T) *site.Site {
	t.Helper()
	files := map[string][]byte{}
	dir := filepath.Join(resulttest.Testdata(t), "results", "baseline")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	four, unknown := resulttest.Results(t, "candidate"), resulttest.Results(t, "baseline")
	slots := int64(4)
	four.Configuration.ServerCapacity = &slots
	unknown.Run.ID += "-unknown"
	unknown.Configuration.ServerCapacity = nil
	unknown.Missing.Add(contract.PtrConfigurationServerCapacity, "the server's /props has no total_slots: field absent")
	s := &site.Site{Branch: "main", Head: strings.Repeat("ab", 20)}
	for i, r := range []*contract.Results{resulttest.Results(t, "baseline"), four, unknown} {
		s.Approved = append(s.Approved, &site.Run{Folder: fmt.Sprintf("2026-12-02-standard-capacity-%d-%s", i, r.Run.ID),
			Label: site.LabelApproved, Results: r, Files: files, Entry: &manifest.Entry{RunID: r.Run.ID, Verification: manifest.EvidenceReviewed}})
	}
	site.AssignSlugs(s)
	return s
}

// wantCapacity is what a page must say of a run's server capacity beside
// each of its concurrency figures: the number of slots, or why it is not
// known.
func wantCapacity(r *contract.Results) string {
	if n := r.Configuration.ServerCapacity; n != nil {
		return fmt.Sprintf("server capacity %d slot", *n)
	}
	return r.Missing[contract.PtrConfigurationServerCapacity]
}

// figure is a concurrency figure on a page and the capacity text beside it.
type figure struct {
	Where, Run, Capacity string
}

// concurrencyFigures are the page's concurrency figures: the rows and
// case groups of a case at four clients, the concurrency rounds and their
// energy, and the charts of a run with the concurrency stage. Beside each
// is the visible text of its .capacity elements.
const concurrencyFigures = `(() => {
	const cap = el => [...el.querySelectorAll('.capacity')].filter(e => e.getBoundingClientRect().height > 0).map(e => e.textContent).join(' | ');
	const out = [];
	document.querySelectorAll('#results tbody tr, #cases tbody tr').forEach(tr => {
		if (tr.querySelector('.c-case').textContent.includes('4 clients')) out.push({Where: tr.closest('table').id, Run: tr.closest('tbody').dataset.runId || '', Capacity: cap(tr)});
	});
	document.querySelectorAll('#metrics tbody').forEach(g => {
		if (g.querySelector('.c-case').textContent.includes('4 clients')) out.push({Where: 'metrics', Run: '', Capacity: cap(g)});
	});
	document.querySelectorAll('#rounds, #energy-rounds').forEach(t => out.push({Where: t.id, Run: '', Capacity: cap(t)}));
	document.querySelectorAll('.charts').forEach(c => {
		if ([...c.querySelectorAll('svg text')].some(x => x.textContent.includes('short-burst'))) {
			const next = c.nextElementSibling;
			out.push({Where: 'charts', Run: '', Capacity: next && next.matches('.capacity') && next.getBoundingClientRect().height > 0 ? next.textContent : ''});
		}
	});
	return out;
})()`

// capacityInBrowser opens every page of the capacity site at both widths:
// beside every concurrency figure stands the server capacity of the run
// (or runs) it shows.
func capacityInBrowser(t *testing.T, br *browser, c *site.Site, dir string) {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx, done := br.tab(t)
	defer done()
	byID, bySlug := map[string]*site.Run{}, map[string]*site.Run{}
	for _, r := range c.Approved {
		byID[r.Results.Run.ID], bySlug["runs/"+r.Slug+".html"] = r, r
	}
	want := map[string][]string{"index.html": {"results", "results", "results"}}
	for p := range bySlug {
		want[p] = []string{"cases", "charts", "energy-rounds", "rounds"}
	}
	for _, p := range sitePages(t, dir) {
		if strings.HasPrefix(p, "compare/") {
			want[p] = []string{"charts", "metrics"}
		}
	}
	for p, kinds := range want {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+urlPath(p))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		pair := js[[]string](t, ctx, `(() => { const c = document.querySelector('#comparison'); return c ? [c.dataset.baseRunId, c.dataset.candRunId] : [] })()`)
		for _, w := range widths {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
				t.Fatal(err)
			}
			var where []string
			for _, f := range js[[]figure](t, ctx, concurrencyFigures) {
				where = append(where, f.Where)
				var runs []*site.Run
				switch {
				case f.Run != "":
					runs = []*site.Run{byID[f.Run]}
				case bySlug[p] != nil:
					runs = []*site.Run{bySlug[p]}
				default:
					for _, id := range pair {
						runs = append(runs, byID[id])
					}
				}
				if len(runs) == 0 || runs[0] == nil {
					t.Errorf("%s at %d px: %s figure of no known run (%q)", p, w, f.Where, f.Run)
					continue
				}
				for _, r := range runs {
					if c := wantCapacity(r.Results); !strings.Contains(f.Capacity, c) {
						t.Errorf("%s at %d px: beside the %s figure %q, want %q", p, w, f.Where, f.Capacity, c)
					}
				}
			}
			sort.Strings(where)
			if strings.Join(where, ",") != strings.Join(kinds, ",") {
				t.Errorf("%s at %d px: concurrency figures %q, want %q", p, w, where, kinds)
			}
		}
	}
}

// TestDemonstrationLabel: a site built from a repository that marks itself
// as demonstration data (the committed test repository does) says so on
// every page; the same repository without the mark says nothing of it.
func TestDemonstrationLabel(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	o := manifest.Options{Activated: []string{protocol.StandInID}, Embedded: b, Now: checkedAt}
	build := func(dir string) string {
		repo, err := manifest.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := site.Collect(repo, o)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "site")
		if err := site.Build(c, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	labelled := func(out string) (with, without []string) {
		for _, p := range sitePages(t, out) {
			page, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(page, []byte(`<p id="demo" class="demo"><strong>Demonstration data.</strong>`)) {
				with = append(with, p)
			} else {
				without = append(without, p)
			}
		}
		return with, without
	}
	if with, without := labelled(build(submissions.CommittedRepo(t))); len(without) > 0 || len(with) < 3 {
		t.Errorf("the committed test repository's site: %d pages labelled, %d not: %q", len(with), len(without), without)
	}
	s := submissions.Committed(t)
	if err := os.Remove(filepath.Join(s.Repo.Dir, filepath.FromSlash(site.DemoMarker))); err != nil {
		t.Fatal(err)
	}
	s.Repo.Commit(t, "a real repository: no demonstration mark")
	if with, _ := labelled(build(s.Repo.Dir)); len(with) > 0 {
		t.Errorf("a repository without %s: pages labelled as demonstration data: %q", site.DemoMarker, with)
	}
}

// sameSite: two builds of one site write the same files, byte for byte.
func sameSite(t *testing.T, c *site.Site, dir string) {
	again := filepath.Join(t.TempDir(), "site")
	if err := site.Build(c, again); err != nil {
		t.Fatal(err)
	}
	a, b := siteFiles(t, dir), siteFiles(t, again)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("two builds wrote different files:\n%q\n%q", a, b)
	}
	for _, f := range a {
		if !sameFile(filepath.Join(dir, filepath.FromSlash(f)), filepath.Join(again, filepath.FromSlash(f))) {
			t.Errorf("%s differs between two builds", f)
		}
	}
}
