package site

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
)

// comparePageHTML renders the compare page of base and cand.
func comparePageHTML(t *testing.T, base, cand *contract.Results) string {
	t.Helper()
	c, err := compare.New(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := &pair{Base: &Run{Slug: "b", Results: base}, Cand: &Run{Slug: "c", Results: cand}, Cmp: c}
	if err := tm.ExecuteTemplate(&b, "compare.html", compareData(p)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestComparePageShowsEnergyWhenBothHaveIt: the committed baseline and
// candidate both measured energy, so their compare page has the energy
// table, row for row bench compare's; without it on one side, none.
func TestComparePageShowsEnergyWhenBothHaveIt(t *testing.T) {
	t.Parallel()
	base, cand := resulttest.Results(t, "baseline"), resulttest.Results(t, "candidate")
	page := comparePageHTML(t, base, cand)
	_, table, ok := strings.Cut(page, `<table id="energy"`)
	if !ok {
		t.Fatal("no energy table on the compare page of two runs that measured energy")
	}
	table, _, _ = strings.Cut(table, "</table>")
	c, _ := compare.New(base, cand)
	if got := strings.Count(table, "<tr>") - 1; got != len(c.Energy) || len(c.Energy) != 6 {
		t.Errorf("%d energy rows, bench compare has %d", got, len(c.Energy))
	}
	for _, r := range c.Energy {
		ch := compare.ChangeOf(r.Metric, r.Base, r.Cand)
		if !strings.Contains(table, ch.Direction) || !strings.Contains(table, ch.Ratio) {
			t.Errorf("%s %s: %q %q not shown", r.Case, r.Metric, ch.Ratio, ch.Direction)
		}
	}
	cand.Extensions.Energy = nil
	if strings.Contains(comparePageHTML(t, base, cand), `id="energy"`) {
		t.Error("an energy table for a pair of which one run has no energy")
	}
}

// runPageHTML renders the run page of r, with no evidence and no pairs.
func runPageHTML(t *testing.T, r *contract.Results) string {
	t.Helper()
	tm, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tm.ExecuteTemplate(&b, "run.html", runPage(&Run{Folder: "f", Slug: "f", Results: r}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRunPageShowsEnergy: a run that measured energy shows, as its README
// does, each performance case's joules and decode tokens per joule (the
// block's summaries, median and n), the source and the idle baseline; one
// that measured none says why; one without the block has no section.
func TestRunPageShowsEnergy(t *testing.T) {
	t.Parallel()
	r := resulttest.Results(t, "baseline")
	e := r.Extensions.Energy
	if !e.Measured() {
		t.Fatal("the committed baseline has no energy to show")
	}
	page := runPageHTML(t, r)
	_, table, ok := strings.Cut(page, `<table id="energy"`)
	if !ok {
		t.Fatal("no energy table on the run page of a run that measured energy")
	}
	table, _, _ = strings.Cut(table, "</table>")
	if got := strings.Count(table, "<tr>") - 1; got != len(protocol.PerformanceCases()) {
		t.Errorf("%d energy rows, want one per performance case", got)
	}
	for _, c := range protocol.PerformanceCases() {
		for _, m := range []string{contract.MetricJoules, contract.MetricDecodeTokensPerJoule} {
			s := e.Summary(c, m)
			if s == nil || s.Median == nil {
				t.Fatalf("%s %s: no summary in the fixture", c, m)
			}
			if want := html.EscapeString(humanize.Of(m, *s.Median)); !strings.Contains(table, want) {
				t.Errorf("%s %s: median %q not shown", c, m, want)
			}
		}
	}
	if !strings.Contains(page, html.EscapeString(e.SourceName())) || !strings.Contains(page, fmt.Sprintf("%.1f W", *e.IdleW)) {
		t.Errorf("the source %q or the idle baseline is not shown", e.SourceName())
	}
	none := *r
	none.Extensions.Energy = &contract.Energy{NotMeasured: "no GPU was probed, so there is no GPU power to sample"}
	if p := runPageHTML(t, &none); strings.Contains(p, `id="energy"`) || !strings.Contains(p, "Not measured: no GPU was probed") {
		t.Error("a run that measured no energy does not say why, or shows a table")
	}
	none.Extensions.Energy = nil
	if strings.Contains(runPageHTML(t, &none), "Energy (GPU power)") {
		t.Error("an energy section for a result without the block")
	}
}
