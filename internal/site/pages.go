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
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

var funcs = template.FuncMap{
	"join":    strings.Join,
	"add":     func(a, b int) int { return a + b },
	"deref":   func(p *float64) float64 { return *p },
	"deref64": func(p *int64) int64 { return *p },
	"page":    func(title, root string) map[string]string { return map[string]string{"Title": title, "Root": root} },
	"csp":     func() string { return Policy },
}

// Row is one (run, case) line of the comparison table.
type Row struct {
	Slug, RunID, GPU, Model, Quant, Track, Protocol, Case string
	Concurrency                                           int
	Input, Cached                                         string
	Prompt, Decode, TTFT, Total                           string
	Capped, Sanity                                        string
	Verification                                          string
	// Status is the run's outcome; a partial run keeps its label and is
	// never shown as a complete result.
	Status string
}

type indexPage struct {
	Rows                         []Row
	GPUs, Models, Quants, Tracks []string
	Approved, Others             int
	Branch, Head                 string
}

func str(p *string) string {
	if p == nil {
		return "not measured"
	}
	return *p
}

// tokenRange is "median (min–max)" of a token count over a case's requests.
func tokenRange(r *contract.Results, phase, caseID string, get func(contract.Tokens) *int64) string {
	var xs []float64
	for _, q := range r.Requests {
		if q.Phase == phase && q.CaseID == caseID {
			if v := get(q.Tokens); v != nil {
				xs = append(xs, float64(*v))
			}
		}
	}
	if len(xs) == 0 {
		return "not measured"
	}
	sort.Float64s(xs)
	return fmt.Sprintf("%.0f (%.0f–%.0f)", measure.Median(xs), xs[0], xs[len(xs)-1])
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
	sets := map[string]map[string]bool{"gpu": {}, "model": {}, "quant": {}, "track": {}}
	for _, run := range s.Approved {
		r := run.Results
		for _, k := range charts.Cases(r) {
			row := Row{
				Slug: run.Slug, RunID: r.Run.ID, GPU: r.GPULabel(), Model: str(r.Model.ID), Quant: str(r.Model.Quantization),
				Track: r.Configuration.Track, Protocol: r.Protocol.ID, Case: k.ID, Concurrency: concurrencyOf(k.Phase),
				Input:  tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.InputTokens }),
				Cached: tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.CachedTokens }),
				Prompt: r.Summary(k.Phase, k.ID, contract.MetricPromptTPS).Cell(1),
				Decode: r.Summary(k.Phase, k.ID, contract.MetricDecodeTPS).Cell(1),
				TTFT:   r.Summary(k.Phase, k.ID, contract.MetricTTFT).Cell(3),
				Total:  r.Summary(k.Phase, k.ID, contract.MetricTotal).Cell(3),
				Capped: capped(r, k.Phase, k.ID), Sanity: fmt.Sprintf("%d/%d", r.Quality.Passed, r.Quality.Total),
				Verification: run.Entry.Verification, Status: r.Run.Status,
			}
			p.Rows = append(p.Rows, row)
			sets["gpu"][row.GPU], sets["model"][row.Model], sets["quant"][row.Quant], sets["track"][row.Track] = true, true, true, true
		}
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
	return p
}

// runPageData is a run page.
type runPageData struct {
	Run      *Run
	R        *contract.Results
	Cases    []caseRow
	Charts   []template.HTML
	Verdicts []verdict
	Files    []fileLink
}

type caseRow struct {
	Phase, Case                              string
	Concurrency                              int
	Capped, Input, Cached, Read              string
	Prompt, Decode, TTFT, FirstAnswer, Total string
}

type verdict struct {
	Case, Status, Verdict, Reason string
}

// fileLink is an evidence row; Href is empty for a listed artifact that is
// not published (Withheld says why).
type fileLink struct {
	Kind, Name, Href, SHA256, Withheld string
}

// runPage is a run's page; evidence is run.Evidence().
func runPage(run *Run, evidence []Evidence) runPageData {
	d := runPageData{Run: run, R: run.Results}
	r := run.Results
	if r != nil {
		for _, k := range charts.Cases(r) {
			d.Cases = append(d.Cases, caseRow{
				Phase: k.Phase, Case: k.ID, Concurrency: concurrencyOf(k.Phase), Capped: capped(r, k.Phase, k.ID),
				Input:       tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.InputTokens }),
				Cached:      tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.CachedTokens }),
				Read:        tokenRange(r, k.Phase, k.ID, func(t contract.Tokens) *int64 { return t.ReadTokens }),
				Prompt:      r.Summary(k.Phase, k.ID, contract.MetricPromptTPS).Cell(1),
				Decode:      r.Summary(k.Phase, k.ID, contract.MetricDecodeTPS).Cell(1),
				TTFT:        r.Summary(k.Phase, k.ID, contract.MetricTTFT).Cell(3),
				FirstAnswer: r.Summary(k.Phase, k.ID, contract.MetricFirstAnswer).Cell(3),
				Total:       r.Summary(k.Phase, k.ID, contract.MetricTotal).Cell(3),
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
			for _, m := range charts.Metrics() {
				// Drawn by the charts package's html/template: every
				// label in it is already escaped.
				d.Charts = append(d.Charts, template.HTML(cs[m.Metric]))
			}
		}
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
