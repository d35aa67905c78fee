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
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
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
	// Energy is one row per performance case and energy metric, when both
	// runs measured their GPUs' energy (nil otherwise).
	Energy []Row
	// Notes say how the two were found comparable where it is not plain
	// (byte-identical model files standing in for a declared quantization).
	Notes []string
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

// fileHashes is the sorted SHA-256s of a run's model files, and whether
// every file was hashed. Paths are left out: the same bytes at another path
// are the same model.
func fileHashes(r *contract.Results) ([]string, bool) {
	var out []string
	for _, f := range r.Model.Files {
		if f.SHA256 == nil || *f.SHA256 == "" {
			return nil, false
		}
		out = append(out, *f.SHA256)
	}
	sort.Strings(out)
	return out, len(out) > 0
}

// EngineOf names the engine a result was measured on (its recorded
// dialect), "unknown" when none is recorded.
func EngineOf(r *contract.Results) string {
	if d := r.Extensions.EngineDialect; d != nil {
		return string(d.Dialect.Engine)
	}
	return "unknown"
}

// which names the runs a condition holds for.
func which(base, cand bool) string {
	switch {
	case base && cand:
		return "either run"
	case base:
		return "the baseline"
	}
	return "the candidate"
}

func gpus(r *contract.Results) string {
	var parts []string
	for _, g := range r.Hardware.GPUs {
		parts = append(parts, escape.Line(g.Name))
	}
	if len(parts) == 0 {
		return "unknown GPU"
	}
	return strings.Join(parts, " + ")
}

// New compares base and cand.
func New(base, cand *contract.Results) (*Comparison, error) {
	refuse, notes := refusals(base, cand)
	if len(refuse) > 0 {
		return nil, &Refusal{refuse}
	}
	c := &Comparison{Base: base, Cand: cand, Notes: notes, Warnings: warnings(base, cand)}
	c.Rows, c.OnlyIn = rows(base, cand)
	c.Energy = energyRows(base, cand)
	c.Verdicts = verdicts(base, cand)
	return c, nil
}

// differs is the reason two runs cannot be compared when their values of
// what differ, and nothing when they are alike.
func differs(what, a, b string) []string {
	if a == b {
		return nil
	}
	return []string{fmt.Sprintf("%s differ (%s vs %s)", what, escape.Line(a), escape.Line(b))}
}

// refusals says why base and cand cannot be compared (nothing when they
// can), and notes how they were found comparable where it is not plain.
func refusals(base, cand *contract.Results) (refuse, notes []string) {
	refuse = append(refuse, differs("protocol IDs", base.Protocol.ID, cand.Protocol.ID)...)
	refuse = append(refuse, differs("corpus SHA-256s", base.Protocol.CorpusSHA256, cand.Protocol.CorpusSHA256)...)
	model, notes := sameModel(base, cand)
	return append(refuse, model...), notes
}

// sameModel says why the two runs are not shown to be of the same model
// and quantization: byte-identical model files are the same model and
// quantization, whatever quantization each run declared (the note shows
// both). Otherwise both must be declared, and alike, for the two to be
// shown to be the same.
func sameModel(base, cand *contract.Results) (refuse, notes []string) {
	bh, bok := fileHashes(base)
	ch, cok := fileHashes(cand)
	identical := bok && cok && strings.Join(bh, ",") == strings.Join(ch, ",")
	bq, cq := base.Model.Quantization, cand.Model.Quantization
	switch {
	case bok && cok && !identical:
		refuse = append(refuse, "the model files differ (their SHA-256s are not the same set)")
	case !identical && (!bok || !cok):
		refuse = append(refuse, fmt.Sprintf("the model files were not hashed in %s, so they cannot be shown to be the same", which(!bok, !cok)))
	}
	if base.Model.ID != nil && cand.Model.ID != nil {
		refuse = append(refuse, differs("model IDs", *base.Model.ID, *cand.Model.ID)...)
	} else if !identical {
		refuse = append(refuse, fmt.Sprintf("the server named no model in %s, and the model files are not shown to be identical", which(base.Model.ID == nil, cand.Model.ID == nil)))
	}
	// The files decide where they are shown identical: a declared string
	// is a name, the bytes are the quantization.
	filesDecide := fmt.Sprintf("the model files are byte-identical (%s, same SHA-256s), so the model and quantization are the same although ", humanize.Count(len(bh), "file", "files"))
	switch {
	case identical && bq != nil && cq != nil && *bq != *cq:
		notes = append(notes, filesDecide+fmt.Sprintf("the declared quantizations differ (%s vs %s)", escape.Line(*bq), escape.Line(*cq)))
	case bq != nil && cq != nil:
		refuse = append(refuse, differs("quantizations", *bq, *cq)...)
	case identical:
		notes = append(notes, filesDecide+"the quantization is not declared in "+which(bq == nil, cq == nil))
	default:
		refuse = append(refuse, fmt.Sprintf("the quantization is not declared in %s and the model files are not shown to be identical; declare it with bench run --quantization", which(bq == nil, cq == nil)))
	}
	return refuse, notes
}

// warnings names what differs between two comparable runs and makes the
// comparison weaker: an engine not shown to have been freshly loaded
// first, then the machine, the engine, the track, an incomplete run.
func warnings(base, cand *contract.Results) []string {
	var out []string
	warn := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s differ: %s vs %s", what, escape.Line(a), escape.Line(b)))
		}
	}
	warn("GPUs", gpus(base), gpus(cand))
	warn("CPUs", s(base.Hardware.CPU), s(cand.Hardware.CPU))
	warn("engine versions", s(base.Software.EngineVersion), s(cand.Software.EngineVersion))
	if be, ce := EngineOf(base), EngineOf(cand); be != ce {
		out = append(out, fmt.Sprintf("engines differ (%s vs %s): each rate is that engine's own timer (see each request's sources), so a ratio compares two engines' clocks as well as two setups", be, ce))
	}
	if len(out) > 0 {
		out = append(out, "a claimed improvement needs a separate, same-machine baseline")
	}
	if base.Configuration.Track != cand.Configuration.Track {
		out = append(out, fmt.Sprintf("tracks differ (%s vs %s): never merge them into one headline result", base.Configuration.Track, cand.Configuration.Track))
	}
	for _, r := range []*contract.Results{base, cand} {
		if r.Run.Status != contract.StatusComplete {
			out = append(out, fmt.Sprintf("run %s is %s", r.Run.ID, r.Run.Status))
		}
	}
	return append(unfresh(base, cand), out...)
}

// unfresh warns of each run whose engine is not shown to have been freshly
// loaded. A folder without the engine block (written before strata kept
// it) makes no claim either way.
func unfresh(base, cand *contract.Results) []string {
	var out []string
	for _, r := range []*contract.Results{base, cand} {
		if e := r.Extensions.Engine; e != nil && !derive.Fresh(e) {
			out = append(out, fmt.Sprintf("run %s's engine was %s: its numbers may hold a warm cache or a long-running server's state", r.Run.ID, derive.Freshness(e)))
		}
	}
	return out
}

// caseKey is one summarised case: cases are never pooled across stages or
// concurrency levels.
type caseKey struct {
	phase, id string
	conc      int
}

// caseKeys is every case either run summarises, performance before
// concurrency and in the protocol's order of cases.
func caseKeys(base, cand *contract.Results) []caseKey {
	cases := map[caseKey]bool{}
	for _, r := range []*contract.Results{base, cand} {
		for _, sm := range r.Summaries {
			cases[caseKey{sm.Phase, sm.CaseID, sm.Concurrency}] = true
		}
	}
	var keys []caseKey
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].phase != keys[j].phase {
			return keys[i].phase > keys[j].phase // performance before concurrency
		}
		if oi, oj := caseOrder(keys[i].id), caseOrder(keys[j].id); oi != oj {
			return oi < oj
		}
		// Ties (unknown cases, one case at two levels) by ID and level,
		// so the order never depends on a map's.
		if keys[i].id != keys[j].id {
			return keys[i].id < keys[j].id
		}
		return keys[i].conc < keys[j].conc
	})
	return keys
}

// rows is one row per case and metric, and the cases only one run has.
func rows(base, cand *contract.Results) (out []Row, onlyIn []string) {
	for _, k := range caseKeys(base, cand) {
		var b0, c0 *contract.Summary
		for _, m := range contract.SummaryMetrics() {
			b, cd := base.Summary(k.phase, k.id, m), cand.Summary(k.phase, k.id, m)
			b0, c0 = b, cd
			out = append(out, Row{Phase: k.phase, Case: k.id, Concurrency: k.conc, Metric: m, Base: b, Cand: cd})
		}
		switch {
		case b0 == nil:
			onlyIn = append(onlyIn, fmt.Sprintf("%s (concurrency %d) is only in the candidate", k.id, k.conc))
		case c0 == nil:
			onlyIn = append(onlyIn, fmt.Sprintf("%s (concurrency %d) is only in the baseline", k.id, k.conc))
		}
	}
	return out, onlyIn
}

// energyRows are the performance cases' energy summaries side by side,
// when both runs measured energy: a run without it is not compared on it.
func energyRows(base, cand *contract.Results) []Row {
	be, ce := base.Extensions.Energy, cand.Extensions.Energy
	if !be.Measured() || !ce.Measured() {
		return nil
	}
	var out []Row
	for _, sm := range be.Summaries {
		out = append(out, Row{Phase: sm.Phase, Case: sm.CaseID, Concurrency: sm.Concurrency, Metric: sm.Metric,
			Base: be.Summary(sm.CaseID, sm.Metric), Cand: ce.Summary(sm.CaseID, sm.Metric)})
	}
	return out
}

// verdicts is each sanity case's verdict in both runs, in the order the
// cases first appear ("absent" where a run has none).
func verdicts(base, cand *contract.Results) []Verdict {
	byCase := map[string]*Verdict{}
	var order []string
	for i, r := range []*contract.Results{base, cand} {
		for _, q := range r.Requests {
			if q.Evaluation == nil {
				continue
			}
			v := byCase[q.CaseID]
			if v == nil {
				v = &Verdict{Case: q.CaseID, Base: "absent", Cand: "absent"}
				byCase[q.CaseID] = v
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
	var out []Verdict
	for _, id := range order {
		out = append(out, *byCase[id])
	}
	return out
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

func stat(sm *contract.Summary) string {
	if sm == nil {
		return "absent"
	}
	return humanize.Cell(sm)
}

// Change is how the candidate's median differs from the baseline's: the
// difference in the metric's unit, the ratio, and which way is better
// ("faster"/"slower" for a rate, "lower latency"/"higher latency" for a
// time). All three are "–" when either median is missing.
type Change struct {
	Diff, Ratio, Direction string
}

// ChangeOf is the change of one row.
func ChangeOf(metric string, base, cand *contract.Summary) Change {
	if base == nil || cand == nil || base.Median == nil || cand.Median == nil {
		return Change{"–", "–", "–"}
	}
	b, c := *base.Median, *cand.Median
	d := humanize.Of(metric, c-b)
	switch {
	case c == b || strings.Trim(humanize.Number(c-b), "-0.,") == "":
		d = "±" + humanize.Of(metric, 0)
	case c > b:
		d = "+" + d
	}
	out := Change{Diff: d, Ratio: "–", Direction: Direction(metric, b, c)}
	if b != 0 {
		out.Ratio = fmt.Sprintf("%.3f×", c/b)
	}
	return out
}

// Direction says which way the candidate moved from the baseline: a higher
// rate is faster, a shorter time is lower latency. Medians within 0.5 % of
// each other are "about the same": the protocol's samples are three.
func Direction(metric string, base, cand float64) string {
	rate := contract.Unit(metric) == contract.UnitRate
	switch {
	case base == cand || (base != 0 && math.Abs(cand-base)/math.Abs(base) < 0.005):
		return "about the same"
	case metric == contract.MetricJoules && cand < base:
		return "less energy"
	case metric == contract.MetricJoules:
		return "more energy"
	case metric == contract.MetricDecodeTokensPerJoule && cand > base:
		return "more tokens per joule"
	case metric == contract.MetricDecodeTokensPerJoule:
		return "fewer tokens per joule"
	case rate && cand > base:
		return "faster"
	case rate:
		return "slower"
	case cand < base:
		return "lower latency"
	}
	return "higher latency"
}

// WriteText writes the comparison as an aligned terminal table. It
// returns the first write error, after which it writes nothing more.
func (c *Comparison) WriteText(w io.Writer) error {
	var p printer
	p.printf(w, "baseline:  %s (%s, %s, %s)\ncandidate: %s (%s, %s, %s)\n", c.Base.Run.ID, gpus(c.Base), EngineOf(c.Base), c.Base.Run.Status, c.Cand.Run.ID, gpus(c.Cand), EngineOf(c.Cand), c.Cand.Run.Status)
	for _, wmsg := range c.Warnings {
		p.printf(w, "WARNING: %s\n", wmsg)
	}
	for _, n := range c.Notes {
		p.printf(w, "note: %s\n", n)
	}
	for _, o := range c.OnlyIn {
		p.printf(w, "note: %s (not compared)\n", o)
	}
	p.printf(w, "\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p.printf(tw, "case\tconc\tmetric\tbaseline\tcandidate\tdiff\tratio\tcandidate is\n")
	for _, r := range c.Rows {
		ch := ChangeOf(r.Metric, r.Base, r.Cand)
		p.printf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Case, r.Concurrency, r.Metric, stat(r.Base), stat(r.Cand), ch.Diff, ch.Ratio, ch.Direction)
	}
	p.flush(tw)
	if len(c.Energy) > 0 {
		p.printf(w, "\nenergy (GPU joules over each request's dispatch→end window):\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		p.printf(tw, "case\tmetric\tbaseline\tcandidate\tdiff\tratio\tcandidate is\n")
		for _, r := range c.Energy {
			ch := ChangeOf(r.Metric, r.Base, r.Cand)
			p.printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Case, r.Metric, stat(r.Base), stat(r.Cand), ch.Diff, ch.Ratio, ch.Direction)
		}
		p.flush(tw)
	}
	p.printf(w, "\nsanity: %d/%d vs %d/%d\n", c.Base.Quality.Passed, c.Base.Quality.Total, c.Cand.Quality.Passed, c.Cand.Quality.Total)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p.printf(tw, "case\tbaseline\tcandidate\n")
	for _, v := range c.Verdicts {
		p.printf(tw, "%s\t%s\t%s\n", v.Case, v.Base, v.Cand)
	}
	p.flush(tw)
	return p.err
}

// WriteMarkdown writes the comparison as Markdown. It returns the first
// write error, after which it writes nothing more.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var p printer
	md := escape.Markdown
	p.printf(w, "## Comparison\n\n- Baseline: `%s` (%s, %s, %s)\n- Candidate: `%s` (%s, %s, %s)\n", escape.CodeSpan(c.Base.Run.ID), md(gpus(c.Base)), md(EngineOf(c.Base)), md(c.Base.Run.Status),
		escape.CodeSpan(c.Cand.Run.ID), md(gpus(c.Cand)), md(EngineOf(c.Cand)), md(c.Cand.Run.Status))
	for _, wmsg := range c.Warnings {
		p.printf(w, "- **Warning:** %s\n", md(wmsg))
	}
	for _, n := range c.Notes {
		p.printf(w, "- Note: %s\n", md(n))
	}
	for _, o := range c.OnlyIn {
		p.printf(w, "- Note: %s (not compared)\n", md(o))
	}
	p.printf(w, "\n| Case | Concurrency | Metric | Baseline | Candidate | Difference | Ratio | Candidate is |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range c.Rows {
		ch := ChangeOf(r.Metric, r.Base, r.Cand)
		p.printf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.Case, r.Concurrency, r.Metric, stat(r.Base), stat(r.Cand), ch.Diff, ch.Ratio, ch.Direction)
	}
	if len(c.Energy) > 0 {
		p.printf(w, "\n### Energy (GPU joules over each request's dispatch→end window)\n\n| Case | Metric | Baseline | Candidate | Difference | Ratio | Candidate is |\n| --- | --- | --- | --- | --- | --- | --- |\n")
		for _, r := range c.Energy {
			ch := ChangeOf(r.Metric, r.Base, r.Cand)
			p.printf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Case, r.Metric, stat(r.Base), stat(r.Cand), ch.Diff, ch.Ratio, ch.Direction)
		}
	}
	p.printf(w, "\n### Sanity: %d/%d vs %d/%d\n\n| Case | Baseline | Candidate |\n| --- | --- | --- |\n", c.Base.Quality.Passed, c.Base.Quality.Total, c.Cand.Quality.Passed, c.Cand.Quality.Total)
	for _, v := range c.Verdicts {
		p.printf(w, "| %s | %s | %s |\n", md(v.Case), md(v.Base), md(v.Cand))
	}
	return p.err
}

// printer formats a comparison onto a writer and keeps the first error:
// after it, nothing more is written.
type printer struct{ err error }

func (p *printer) printf(w io.Writer, format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(w, format, a...)
	}
}

// flush writes out a table.
func (p *printer) flush(tw *tabwriter.Writer) {
	if p.err == nil {
		p.err = tw.Flush()
	}
}

// Charts returns one SVG per charted metric: for each case, a bar for the
// baseline and one for the candidate, side by side.
func (c *Comparison) Charts() (map[string][]byte, error) {
	return charts.ForPair(c.Base, c.Cand)
}
