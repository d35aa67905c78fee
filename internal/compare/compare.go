// Package compare puts two results side by side, per prompt case and metric
// (median with min–max and n for each run, the difference and the ratio),
// and the sanity verdicts next to each other. It refuses to compare across
// protocol IDs, corpus SHAs, models or quantizations, never pools cases or
// concurrency levels, and warns loudly when the hardware or the engine
// differ: a claimed improvement needs a same-machine baseline.
package compare

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/display"
)

// Row is one case and metric.
type Row struct {
	Phase, Case string
	Concurrency int
	Metric      string
	Base, Cand  *contract.Summary
}

// Verdict is one sanity case in both runs.
type Verdict struct {
	Case       string
	Base, Cand string
}

// Comparison is the outcome.
type Comparison struct {
	Base, Cand *contract.Results
	Rows       []Row
	Verdicts   []Verdict
	Warnings   []string
	// OnlyIn lists cases present in one run only (never pooled).
	OnlyIn []string
}

// Refusal says why two results cannot be compared.
type Refusal struct{ Reasons []string }

func (r *Refusal) Error() string {
	return "these results cannot be compared: " + strings.Join(r.Reasons, "; ")
}

func s(p *string) string {
	if p == nil {
		return "(unknown)"
	}
	return *p
}

func files(r *contract.Results) string {
	var parts []string
	for _, f := range r.Model.Files {
		parts = append(parts, f.Path+"="+s(f.SHA256))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func gpus(r *contract.Results) string {
	var parts []string
	for _, g := range r.Hardware.GPUs {
		parts = append(parts, display.Line(g.Name))
	}
	return strings.Join(parts, " + ")
}

// New compares base and cand.
func New(base, cand *contract.Results) (*Comparison, error) {
	var refuse []string
	check := func(what, a, b string) {
		if a != b {
			refuse = append(refuse, fmt.Sprintf("%s differ (%s vs %s)", what, display.Line(a), display.Line(b)))
		}
	}
	check("protocol IDs", base.Protocol.ID, cand.Protocol.ID)
	check("corpus SHA-256s", base.Protocol.CorpusSHA256, cand.Protocol.CorpusSHA256)
	check("models", s(base.Model.ID), s(cand.Model.ID))
	check("model files", files(base), files(cand))
	check("quantizations", s(base.Model.Quantization), s(cand.Model.Quantization))
	if base.Model.Quantization == nil || cand.Model.Quantization == nil {
		refuse = append(refuse, "a quantization is not declared, so the two cannot be shown to be the same")
	}
	if len(refuse) > 0 {
		return nil, &Refusal{refuse}
	}
	c := &Comparison{Base: base, Cand: cand}
	warn := func(what, a, b string) {
		if a != b {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s differ: %s vs %s", what, display.Line(a), display.Line(b)))
		}
	}
	warn("GPUs", gpus(base), gpus(cand))
	warn("CPUs", s(base.Hardware.CPU), s(cand.Hardware.CPU))
	warn("engine versions", s(base.Software.EngineVersion), s(cand.Software.EngineVersion))
	if len(c.Warnings) > 0 {
		c.Warnings = append(c.Warnings, "a claimed improvement needs a separate, same-machine baseline")
	}
	if base.Configuration.Track != cand.Configuration.Track {
		c.Warnings = append(c.Warnings, fmt.Sprintf("tracks differ (%s vs %s): never merge them into one headline result", base.Configuration.Track, cand.Configuration.Track))
	}
	for _, r := range []*contract.Results{base, cand} {
		if r.Run.Status != contract.StatusComplete {
			c.Warnings = append(c.Warnings, fmt.Sprintf("run %s is %s", r.Run.ID, r.Run.Status))
		}
	}
	type key struct {
		phase, id string
		conc      int
	}
	cases := map[key]bool{}
	for _, r := range []*contract.Results{base, cand} {
		for _, sm := range r.Summaries {
			cases[key{sm.Phase, sm.CaseID, sm.Concurrency}] = true
		}
	}
	var keys []key
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].phase != keys[j].phase {
			return keys[i].phase > keys[j].phase // performance before concurrency
		}
		return caseOrder(keys[i].id) < caseOrder(keys[j].id)
	})
	for _, k := range keys {
		var b0, c0 *contract.Summary
		for _, m := range contract.SummaryMetrics() {
			b, cd := base.Summary(k.phase, k.id, m), cand.Summary(k.phase, k.id, m)
			b0, c0 = b, cd
			c.Rows = append(c.Rows, Row{Phase: k.phase, Case: k.id, Concurrency: k.conc, Metric: m, Base: b, Cand: cd})
		}
		switch {
		case b0 == nil:
			c.OnlyIn = append(c.OnlyIn, fmt.Sprintf("%s (concurrency %d) is only in the candidate", k.id, k.conc))
		case c0 == nil:
			c.OnlyIn = append(c.OnlyIn, fmt.Sprintf("%s (concurrency %d) is only in the baseline", k.id, k.conc))
		}
	}
	verdicts := map[string]*Verdict{}
	var order []string
	for i, r := range []*contract.Results{base, cand} {
		for _, q := range r.Requests {
			if q.Evaluation == nil {
				continue
			}
			v := verdicts[q.CaseID]
			if v == nil {
				v = &Verdict{Case: q.CaseID, Base: "absent", Cand: "absent"}
				verdicts[q.CaseID] = v
				order = append(order, q.CaseID)
			}
			text := "fail (" + q.Status + ")"
			if q.Evaluation.Passed {
				text = "pass"
			}
			if i == 0 {
				v.Base = text
			} else {
				v.Cand = text
			}
		}
	}
	for _, id := range order {
		c.Verdicts = append(c.Verdicts, *verdicts[id])
	}
	return c, nil
}

func caseOrder(id string) int {
	switch id {
	case "short":
		return 0
	case "prompt-4k":
		return 1
	case "prompt-16k":
		return 2
	}
	return 3
}

func stat(sm *contract.Summary, unit string) string {
	if sm == nil {
		return "absent"
	}
	prec := 1
	if unit == contract.UnitSeconds {
		prec = 3
	}
	return sm.Cell(prec)
}

// diff is the candidate minus the baseline and their ratio.
func diff(r Row) (string, string) {
	if r.Base == nil || r.Cand == nil || r.Base.Median == nil || r.Cand.Median == nil {
		return "–", "–"
	}
	d := *r.Cand.Median - *r.Base.Median
	ratio := "–"
	if *r.Base.Median != 0 {
		ratio = fmt.Sprintf("%.3f×", *r.Cand.Median / *r.Base.Median)
	}
	prec := 1
	if contract.Unit(r.Metric) == contract.UnitSeconds {
		prec = 3
	}
	return fmt.Sprintf("%+.*f", prec, d), ratio
}

// WriteText writes the comparison as an aligned terminal table.
func (c *Comparison) WriteText(w io.Writer) {
	fmt.Fprintf(w, "baseline:  %s (%s, %s)\ncandidate: %s (%s, %s)\n", c.Base.Run.ID, gpus(c.Base), c.Base.Run.Status, c.Cand.Run.ID, gpus(c.Cand), c.Cand.Run.Status)
	for _, wmsg := range c.Warnings {
		fmt.Fprintf(w, "WARNING: %s\n", wmsg)
	}
	for _, o := range c.OnlyIn {
		fmt.Fprintf(w, "note: %s (not compared)\n", o)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tconc\tmetric\tbaseline\tcandidate\tdiff\tratio")
	for _, r := range c.Rows {
		d, ratio := diff(r)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Case, r.Concurrency, r.Metric, stat(r.Base, contract.Unit(r.Metric)), stat(r.Cand, contract.Unit(r.Metric)), d, ratio)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nsanity: %d/%d vs %d/%d\n", c.Base.Quality.Passed, c.Base.Quality.Total, c.Cand.Quality.Passed, c.Cand.Quality.Total)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tbaseline\tcandidate")
	for _, v := range c.Verdicts {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Case, v.Base, v.Cand)
	}
	tw.Flush()
}

// WriteMarkdown writes the comparison as Markdown.
func (c *Comparison) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "## Comparison\n\n- Baseline: `%s` (%s, %s)\n- Candidate: `%s` (%s, %s)\n", c.Base.Run.ID, gpus(c.Base), c.Base.Run.Status, c.Cand.Run.ID, gpus(c.Cand), c.Cand.Run.Status)
	for _, wmsg := range c.Warnings {
		fmt.Fprintf(w, "- **Warning:** %s\n", wmsg)
	}
	for _, o := range c.OnlyIn {
		fmt.Fprintf(w, "- Note: %s (not compared)\n", o)
	}
	fmt.Fprintf(w, "\n| Case | Concurrency | Metric | Baseline | Candidate | Difference | Ratio |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range c.Rows {
		d, ratio := diff(r)
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", r.Case, r.Concurrency, r.Metric, stat(r.Base, contract.Unit(r.Metric)), stat(r.Cand, contract.Unit(r.Metric)), d, ratio)
	}
	fmt.Fprintf(w, "\n### Sanity: %d/%d vs %d/%d\n\n| Case | Baseline | Candidate |\n| --- | --- | --- |\n", c.Base.Quality.Passed, c.Base.Quality.Total, c.Cand.Quality.Passed, c.Cand.Quality.Total)
	for _, v := range c.Verdicts {
		fmt.Fprintf(w, "| %s | %s | %s |\n", v.Case, v.Base, v.Cand)
	}
}

// Charts returns one SVG per charted metric: for each case, a bar for the
// baseline and one for the candidate.
func (c *Comparison) Charts() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range charts.Metrics() {
		ch := charts.Chart{Title: m.Title + ": baseline vs candidate", Unit: contract.Unit(m.Metric)}
		for _, k := range charts.Cases(c.Base) {
			ch.Bars = append(ch.Bars,
				charts.Bar{Label: k.Label + " (baseline)", Stat: c.Base.Summary(k.Phase, k.ID, m.Metric), Series: 0},
				charts.Bar{Label: k.Label + " (candidate)", Stat: c.Cand.Summary(k.Phase, k.ID, m.Metric), Series: 1})
		}
		b, err := charts.SVG(ch)
		if err != nil {
			return nil, err
		}
		out[m.Metric] = b
	}
	return out, nil
}
