package site

import (
	"errors"
	"fmt"
	"html/template"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
)

// The site's compare pages are bounded, so that a repository of many runs
// of one model does not make a site of every pair (1,000 runs would be
// 499,500 pages):
//
//   - only approved runs with the same protocol ID and the same declared
//     model ID are paired (compare.New refuses across those anyway; a run
//     that declares no model ID is paired with nothing);
//   - within such a group, runs in order of their start (then folder),
//     each run is paired with its nearest neighbours first (the next run,
//     then the one after, ...), the earlier run the baseline;
//   - a run is in at most maxPairsPerRun pairs, and the site has at most
//     maxPairs pairs in all.
//
// A pair compare.New refuses counts too: it gets no page, and its reasons
// are shown on both run pages where its link would be. A group of up to
// maxPairsPerRun+1 runs is therefore compared in full. Any other pair is
// for bench compare.
//
// A local view (bench view) pairs its valid folders in one group, whatever
// their protocols and models: the user chose them, and a pair compare.New
// refuses says why on both run pages, as bench compare would.
const (
	maxPairsPerRun = 8
	maxPairs       = 500
)

// pair is two approved runs that the site puts side by side.
type pair struct {
	Base, Cand *Run
	// Name is the compare page's file name (in compare/, plus .html),
	// made from the runs' slugs.
	Name string
	// Cmp is compare.New's comparison; nil when it refused the pair, and
	// Reasons says why.
	Cmp     *compare.Comparison
	Reasons []string
}

// pairs returns the site's pairs (see maxPairs) and, by run, the pairs
// each run is in.
func pairs(s *Site) ([]*pair, map[*Run][]*pair) {
	var all []*pair
	of := map[*Run][]*pair{}
	for _, runs := range pairGroups(s) {
		sort.SliceStable(runs, func(i, j int) bool {
			a, b := runs[i].Results.Run.StartedAt, runs[j].Results.Run.StartedAt
			if a != b {
				return a < b
			}
			return runs[i].Folder < runs[j].Folder
		})
		for d := 1; d < len(runs); d++ {
			for i := 0; i+d < len(runs); i++ {
				if len(all) >= maxPairs {
					return all, of
				}
				base, cand := runs[i], runs[i+d]
				if len(of[base]) >= maxPairsPerRun || len(of[cand]) >= maxPairsPerRun {
					continue
				}
				p := newPair(base, cand)
				all = append(all, p)
				of[base], of[cand] = append(of[base], p), append(of[cand], p)
			}
		}
	}
	return all, of
}

// pairGroups are the groups of runs the site pairs within, by protocol
// and then model (see maxPairs): approved runs by protocol ID and declared
// model ID, or a local view's valid folders in one group.
func pairGroups(s *Site) [][]*Run {
	type key struct{ protocol, model string }
	runs, group := s.Approved, func(r *Run) (key, bool) {
		if r.Results == nil || r.Results.Model.ID == nil {
			return key{}, false
		}
		return key{r.Results.Protocol.ID, *r.Results.Model.ID}, true
	}
	if s.Local {
		runs, group = s.Others, func(r *Run) (key, bool) { return key{}, r.Label == LabelLocal }
	}
	groups := map[key][]*Run{}
	var keys []key
	for _, r := range runs {
		k, ok := group(r)
		if !ok {
			continue
		}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].protocol != keys[j].protocol {
			return keys[i].protocol < keys[j].protocol
		}
		return keys[i].model < keys[j].model
	})
	out := make([][]*Run, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// newPair puts base and cand side by side: compare.New's comparison, or
// the reasons it refused them.
func newPair(base, cand *Run) *pair {
	p := &pair{Base: base, Cand: cand, Name: base.Slug + "-vs-" + cand.Slug}
	c, err := compare.New(base.Results, cand.Results)
	var refusal *compare.Refusal
	switch {
	case errors.As(err, &refusal):
		p.Reasons = refusal.Reasons
	case err != nil:
		p.Reasons = []string{err.Error()}
	default:
		p.Cmp = c
	}
	return p
}

// comparePage is a compare page.
type comparePage struct {
	Title      string
	Base, Cand *Run
	C          *compare.Comparison
	Cases      []compareCase
	// Energy is the cases' energy rows, when both runs measured it.
	Energy   []compareEnergyRow
	Verdicts []compareVerdict
	Charts   []template.HTML
	// Capacity is, when the charts show a case of more than one client,
	// its label and each run's server capacity.
	Capacity string
}

// compareCase is one case's rows: per metric, both runs and the ratio.
type compareCase struct {
	Case        string
	Concurrency int
	Rows        []compareRow
	// Capacity is comparePage.Capacity for a case of more than one
	// client.
	Capacity []string
}

// compareEnergyRow is one case's energy metric in both runs.
type compareEnergyRow struct {
	Case string
	compareRow
}

type compareRow struct {
	Metric     string
	Base, Cand cell
	// Ratio is the candidate's median over the baseline's, Difference the
	// candidate's minus the baseline's; Direction says which way that is
	// (faster/slower, lower/higher latency, about the same). All three
	// are compare.ChangeOf's, as bench compare writes them.
	Ratio, Direction, Difference string
	// Better is whether the candidate is faster or lower latency (for the
	// colour only: the words carry the meaning).
	Better, Worse bool
}

type compareVerdict struct {
	Case, Base, Cand string
	BaseFail         bool
	CandFail         bool
}

func metricTitle(metric string) string {
	for _, h := range metricHeads {
		if h.Metric == metric {
			return h.Title
		}
	}
	return metric
}

// compareData is the page of a pair compare.New compared.
func compareData(p *pair) comparePage {
	c := p.Cmp
	d := comparePage{Base: p.Base, Cand: p.Cand, C: c,
		Title: p.Base.Results.GPULabel() + " vs " + p.Cand.Results.GPULabel() + " · " + str(p.Base.Results.Model.ID)}
	capacity := []string{"baseline: " + capacityOf(p.Base.Results), "candidate: " + capacityOf(p.Cand.Results)}
	for _, r := range c.Rows {
		if n := len(d.Cases); n == 0 || d.Cases[n-1].Case != r.Case || d.Cases[n-1].Concurrency != r.Concurrency {
			d.Cases = append(d.Cases, compareCase{Case: r.Case, Concurrency: r.Concurrency})
			if r.Concurrency > 1 {
				d.Cases[len(d.Cases)-1].Capacity = capacity
			}
		}
		title := metricTitle(r.Metric)
		// The words and numbers of bench compare: compare.ChangeOf.
		ch := compare.ChangeOf(r.Metric, r.Base, r.Cand)
		row := compareRow{Metric: title, Base: cellOf(title, r.Base), Cand: cellOf(title, r.Cand),
			Ratio: ch.Ratio, Direction: ch.Direction, Difference: ch.Diff}
		row.Better = ch.Direction == "faster" || ch.Direction == "lower latency"
		row.Worse = ch.Direction == "slower" || ch.Direction == "higher latency"
		d.Cases[len(d.Cases)-1].Rows = append(d.Cases[len(d.Cases)-1].Rows, row)
	}
	for _, r := range c.Energy {
		ch := compare.ChangeOf(r.Metric, r.Base, r.Cand)
		title := energyTitles[r.Metric]
		row := compareRow{Metric: title, Base: cellOf(title, r.Base), Cand: cellOf(title, r.Cand), Ratio: ch.Ratio, Direction: ch.Direction, Difference: ch.Diff}
		row.Better = ch.Direction == "less energy" || ch.Direction == "more tokens per joule"
		row.Worse = ch.Direction == "more energy" || ch.Direction == "fewer tokens per joule"
		d.Energy = append(d.Energy, compareEnergyRow{Case: r.Case, compareRow: row})
	}
	for _, v := range c.Verdicts {
		d.Verdicts = append(d.Verdicts, compareVerdict{Case: v.Case, Base: v.Base, Cand: v.Cand,
			BaseFail: v.Base != "pass" && v.Base != "absent", CandFail: v.Cand != "pass" && v.Cand != "absent"})
	}
	if cs, err := charts.ForPair(p.Base.Results, p.Cand.Results); err == nil {
		d.Charts = chartsOf(cs)
	}
	for _, r := range []*contract.Results{p.Base.Results, p.Cand.Results} {
		for _, k := range charts.Cases(r) {
			if caseCapacity(r, k.Phase) != "" {
				d.Capacity = k.Label + ": " + strings.Join(capacity, "; ")
			}
		}
	}
	return d
}

// energyTitles are the energy metrics as the pages name them.
var energyTitles = map[string]string{contract.MetricJoules: "Energy", contract.MetricDecodeTokensPerJoule: "Decode tokens per joule"}

// concurrencyLabel is how a page names a case's concurrency.
func concurrencyLabel(n int) string {
	if n <= 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}
