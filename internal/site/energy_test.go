package site

import (
	"bytes"
	"html/template"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
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
