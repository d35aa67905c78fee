package site

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/url"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

var funcs = template.FuncMap{
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
	"page": func(title, root string) map[string]string { return map[string]string{"Title": title, "Root": root} },
	"csp":  func() string { return Policy },
	"mark": func() string { return LocalMark },
	// count writes n with its noun in the right number ("1 run", "3 runs").
	"count":   humanize.Count,
	"seconds": func(p *float64) string { return humanize.Seconds(*p) },
	"rate":    func(p *float64) string { return humanize.Rate(*p) },
	"tokens":  func(p *int64) string { return humanize.Grouped(float64(*p), 0) },
	"heads":   func() []metricHead { return metricHeads },
	"clients": concurrencyLabel,
	"side": func(role, class string, r *Run) map[string]any {
		return map[string]any{"Role": role, "Class": class, "Run": r}
	},
	"capacity": capacityOf,
	// A build replaces these three with its site's (siteFuncs).
	"local": func() bool { return false },
	"demo":  func() string { return "" },
	"ids":   idMarker(nil),
}

// metricHead is a column of the five summary metrics.
type metricHead struct {
	Metric, Title, Unit string
}

// metricHeads are contract.SummaryMetrics() in report order, with the
// titles and units the pages show.
var metricHeads = func() []metricHead {
	titles := map[string]string{
		contract.MetricPromptTPS: "Prompt rate", contract.MetricDecodeTPS: "Decode rate", contract.MetricTTFT: "TTFT",
		contract.MetricFirstAnswer: "First answer", contract.MetricTotal: "Total time",
	}
	var out []metricHead
	for _, m := range contract.SummaryMetrics() {
		out = append(out, metricHead{Metric: m, Title: titles[m], Unit: humanize.UnitWord(m)})
	}
	return out
}()

// cell is a summary as a page shows it: the median large, the range and
// n small beneath it; Full is the whole of humanize.Cell for a tooltip.
type cell struct {
	Title, Median, Range, N, Full string
	// Unit is the metric's unit where the page lays it out by unit (the
	// five summary metrics).
	Unit     string
	Measured bool
}

// cellOf writes a summary (nil or empty: not measured).
func cellOf(title string, s *contract.Summary) cell {
	c := cell{Title: title, Full: humanize.Cell(s)}
	if s == nil || s.N == 0 || s.Median == nil || s.Min == nil || s.Max == nil {
		c.Median, c.N = "not measured", "n=0"
		return c
	}
	c.Measured = true
	c.Median = humanize.Of(s.Metric, *s.Median)
	lo, hi := humanize.Of(s.Metric, *s.Min), humanize.Of(s.Metric, *s.Max)
	for _, unit := range []string{" tok/s", " s", " tok/J", " J"} {
		if strings.HasSuffix(lo, unit) && strings.HasSuffix(hi, unit) {
			lo, hi = strings.TrimSuffix(lo, unit), strings.TrimSuffix(hi, unit)
			break
		}
	}
	c.Range, c.N = lo+"–"+hi, fmt.Sprintf("n=%d", s.N)
	return c
}

// cells are the five metrics of a case.
func cells(r *contract.Results, phase, caseID string) []cell {
	var out []cell
	for _, h := range metricHeads {
		c := cellOf(h.Title, r.Summary(phase, caseID, h.Metric))
		c.Unit = h.Unit
		out = append(out, c)
	}
	return out
}

// indexRun is one approved run of the comparison table: its identity
// once, and a row for each of its cases.
type indexRun struct {
	Slug, RunID, GPU, Model, Quant, Track, Protocol string
	// Engine is the engine the run was measured on: each rate is its own
	// timer, so runs of different engines say which.
	Engine               string
	Sanity, Verification string
	// Status is the run's outcome; a partial run keeps its label and is
	// never shown as a complete result.
	Status string
	Cases  []Row
}

// Row is one case of a run in the comparison table.
type Row struct {
	Case        string
	Concurrency int
	// Capacity is the server's, beside a case of more than one client.
	Capacity      string
	Input, Cached tokenCount
	Metrics       []cell
	Capped        string
}

type indexPage struct {
	Runs                         []indexRun
	GPUs, Models, Quants, Tracks []string
	Engines                      []string
	Approved, Others             int
	Branch, Head                 string
}

func str(p *string) string {
	if p == nil {
		return "not measured"
	}
	return *p
}

// tokenCount is the median of a token count over a case's requests, and
// its min–max.
type tokenCount struct {
	Median, Range string
}

func (t tokenCount) String() string {
	if t.Range == "" {
		return t.Median
	}
	return t.Median + " (" + t.Range + ")"
}

// tokenRange is the token count of a case's requests.
func tokenRange(r *contract.Results, phase, caseID string, get func(contract.Tokens) *int64) tokenCount {
	var xs []float64
	for _, q := range r.Requests {
		if q.Phase == phase && q.CaseID == caseID {
			if v := get(q.Tokens); v != nil {
				xs = append(xs, float64(*v))
			}
		}
	}
	if len(xs) == 0 {
		return tokenCount{Median: "not measured"}
	}
	sort.Float64s(xs)
	t := tokenCount{Median: humanize.Grouped(measure.Median(xs), 0)}
	if xs[0] != xs[len(xs)-1] {
		t.Range = humanize.Grouped(xs[0], 0) + "–" + humanize.Grouped(xs[len(xs)-1], 0)
	}
	return t
}

func capped(r *contract.Results, phase, caseID string) string {
	n, c := 0, 0
	for _, q := range r.Requests {
		if q.Phase == phase && q.CaseID == caseID {
			n++
			if q.Status == contract.Truncated {
				c++
			}
		}
	}
	return fmt.Sprintf("%d/%d", c, n)
}

func indexData(s *Site) indexPage {
	p := indexPage{Approved: len(s.Approved), Others: len(s.Others), Branch: s.Branch, Head: s.Head}
	sets := map[string]map[string]bool{"gpu": {}, "model": {}, "quant": {}, "track": {}, "engine": {}}
	for _, run := range s.Approved {
		r := run.Results
		ir := indexRun{Slug: run.Slug, RunID: r.Run.ID, GPU: r.GPULabel(), Model: str(r.Model.ID), Quant: str(r.Model.Quantization),
			Track: r.Configuration.Track, Protocol: r.Protocol.ID, Engine: compare.EngineOf(r),
			Sanity: fmt.Sprintf("%d/%d", r.Quality.Passed, r.Quality.Total), Verification: run.Entry.Verification, Status: r.Run.Status}
		for _, k := range charts.Cases(r) {
			ir.Cases = append(ir.Cases, Row{Case: k.ID, Concurrency: concurrencyOf(k.Phase), Capacity: caseCapacity(r, k.Phase),
				Input:   tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.InputTokens }),
				Cached:  tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.CachedTokens }),
				Metrics: cells(r, k.Phase, k.ID), Capped: capped(r, k.Phase, k.ID),
			})
		}
		if len(ir.Cases) == 0 {
			continue
		}
		p.Runs = append(p.Runs, ir)
		sets["gpu"][ir.GPU], sets["model"][ir.Model], sets["quant"][ir.Quant], sets["track"][ir.Track] = true, true, true, true
		sets["engine"][ir.Engine] = true
	}
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	p.GPUs, p.Models, p.Quants, p.Tracks = keys(sets["gpu"]), keys(sets["model"]), keys(sets["quant"]), keys(sets["track"])
	p.Engines = keys(sets["engine"])
	return p
}

// runPageData is a run page.
type runPageData struct {
	Run *Run
	R   *contract.Results
	// Capacity is the server's beside the charts' label of the
	// concurrency case, when the run has one.
	Capacity string
	Cases    []caseRow
	Energy   *energySection
	Charts   []template.HTML
	Verdicts []verdict
	Pairs    []pairLink
	Files    []fileLink
}

// energySection is a run's extensions.energy as its page shows it, the
// run README's energy table in the page's cells: the source, interval and
// idle baseline, each performance case's joules and decode tokens per
// joule, each concurrency round's joules; or why nothing was measured.
type energySection struct {
	NotMeasured                  string
	Source, Interval, GPUs, Idle string
	Samples                      string
	Count                        int
	Stopped                      string
	Cases                        []energyCase
	Rounds                       []energyRound
}

type energyCase struct {
	Case             string
	Joules, PerJoule cell
}

type energyRound struct {
	Round                    int
	Window, Joules, PerJoule string
}

// energyOf is the page's energy section (nil: the result has no block, as
// an older or recovered run).
func energyOf(r *contract.Results) *energySection {
	e := r.Extensions.Energy
	if e == nil {
		return nil
	}
	if e.NotMeasured != "" {
		return &energySection{NotMeasured: e.NotMeasured}
	}
	opt := func(p *float64, metric string) string {
		if p == nil {
			return "not measured"
		}
		return humanize.Of(metric, *p)
	}
	gpus := make([]string, 0, len(e.GPUs))
	for _, g := range e.GPUs {
		gpus = append(gpus, fmt.Sprintf("GPU %d", g))
	}
	sec := &energySection{Source: e.SourceName(), GPUs: strings.Join(gpus, ", "), Samples: e.Samples, Count: e.SampleCount,
		Stopped: e.Stopped, Interval: "not measured", Idle: "not measured"}
	if e.IntervalS != nil {
		sec.Interval = fmt.Sprintf("%g s", *e.IntervalS)
	}
	if e.IdleW != nil {
		sec.Idle = fmt.Sprintf("%.1f W", *e.IdleW)
	}
	for _, c := range protocol.PerformanceCases() {
		sec.Cases = append(sec.Cases, energyCase{Case: c,
			Joules:   cellOf(energyTitles[contract.MetricJoules], e.Summary(c, contract.MetricJoules)),
			PerJoule: cellOf(energyTitles[contract.MetricDecodeTokensPerJoule], e.Summary(c, contract.MetricDecodeTokensPerJoule))})
	}
	for _, rd := range e.Rounds {
		w := "not measured"
		if rd.WindowS != nil {
			w = humanize.Seconds(*rd.WindowS)
		}
		sec.Rounds = append(sec.Rounds, energyRound{Round: rd.Round, Window: w,
			Joules: opt(rd.Joules, contract.MetricJoules), PerJoule: opt(rd.OutputTokensPerJoule, contract.MetricDecodeTokensPerJoule)})
	}
	return sec
}

type caseRow struct {
	Phase, Case         string
	Concurrency         int
	Capped, Capacity    string
	Input, Cached, Read tokenCount
	Metrics             []cell
}

type verdict struct {
	Case, Status, Verdict, Reason string
}

// fileLink is an evidence row; Href is empty for a listed artifact that is
// not published (Withheld says why).
type fileLink struct {
	Kind, Name, Href, SHA256, Withheld string
}

// pairLink is, on a run page, one pair the run is in: the other run, and
// the compare page or the reasons compare.New refused the pair.
type pairLink struct {
	Role     string // of this run: "baseline" or "candidate"
	Other    *Run
	Href     string // "" for a refused pair
	Warnings int
	Reasons  []string
}

// chartsOf orders a chart map by charts.Metrics(). Each SVG is drawn by
// the charts package's html/template: every label in it is already
// escaped.
func chartsOf(cs map[string][]byte) []template.HTML {
	var out []template.HTML
	for _, m := range charts.Metrics() {
		if b, ok := cs[m.Metric]; ok {
			out = append(out, template.HTML(b))
		}
	}
	return out
}

// runPage is a run's page; evidence is run.Evidence(), pairs the pairs the
// run is in.
func runPage(run *Run, evidence []Evidence, pairs []*pair) runPageData {
	d := runPageData{Run: run, R: run.Results}
	r := run.Results
	if r != nil {
		d.Energy = energyOf(r)
		for _, k := range charts.Cases(r) {
			if c := caseCapacity(r, k.Phase); c != "" {
				d.Capacity = k.Label + ": " + c
			}
			d.Cases = append(d.Cases, caseRow{
				Phase: k.Phase, Case: k.ID, Concurrency: concurrencyOf(k.Phase), Capped: capped(r, k.Phase, k.ID), Capacity: caseCapacity(r, k.Phase),
				Input:   tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.InputTokens }),
				Cached:  tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.CachedTokens }),
				Read:    tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.ReadTokens }),
				Metrics: cells(r, k.Phase, k.ID),
			})
		}
		for _, q := range r.Requests {
			if q.Evaluation == nil {
				continue
			}
			v := "fail"
			if q.Evaluation.Passed {
				v = "pass"
			}
			d.Verdicts = append(d.Verdicts, verdict{q.CaseID, q.Status, v, q.Evaluation.Reason})
		}
		if cs, err := charts.ForRun(r); err == nil {
			d.Charts = chartsOf(cs)
		}
	}
	for _, p := range pairs {
		l := pairLink{Role: "baseline", Other: p.Cand, Reasons: p.Reasons}
		if p.Cand == run {
			l.Role, l.Other = "candidate", p.Base
		}
		if p.Cmp != nil {
			l.Href, l.Warnings = "../compare/"+p.Name+".html", len(p.Cmp.Warnings)
		}
		d.Pairs = append(d.Pairs, l)
	}
	for _, e := range evidence {
		l := fileLink{Kind: e.Kind, Name: e.Name, SHA256: e.SHA256, Withheld: e.Withheld}
		if e.Published() {
			// The name is one path element (plainName); escaping it keeps
			// a '?' or '#' in it part of the path.
			l.Href = run.Slug + "/" + url.PathEscape(e.Name+TextSuffix)
		}
		d.Files = append(d.Files, l)
	}
	return d
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// concurrencyOf is the concurrency of a phase's cases.
func concurrencyOf(phase string) int {
	if phase == string(protocol.PhaseConcurrency) {
		return protocol.ConcurrencyClients
	}
	return 1
}
