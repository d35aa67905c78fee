// Package charts draws the result charts as SVG: horizontal bars at the
// median with a min–max whisker and n, one group per prompt case, one bar
// per run. Text goes through html/template, so labels from a submission are
// escaped, and the bytes are deterministic.
package charts

import (
	"bytes"
	"fmt"
	"html/template"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// Bar is one run's value for one case.
type Bar struct {
	Label  string // the case (and the run, in a comparison)
	Stat   *contract.Summary
	Series int // colour index
}

// Chart is one metric.
type Chart struct {
	Title string
	Unit  string
	Bars  []Bar
}

type bar struct {
	Label, Value     string
	Y                int
	X, W, MinX, MaxX float64
	HasData          bool
	Class            string
}

type tick struct {
	X     float64
	Label string
}

type view struct {
	Title, Unit   string
	Width, Height int
	Bars          []bar
	Ticks         []tick
}

const (
	left  = 170.0
	width = 420.0
	rowH  = 22
	gap   = 8
)

var svg = template.Must(template.New("svg").Funcs(template.FuncMap{"add": func(a, b int) int { return a + b }}).Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" font-family="sans-serif" font-size="11">
<title>{{.Title}} ({{.Unit}})</title>
<text x="4" y="14" font-size="13" font-weight="bold">{{.Title}} ({{.Unit}}): median, min–max, n</text>
{{range .Ticks}}<line x1="{{.X}}" y1="22" x2="{{.X}}" y2="{{$.Height}}" stroke="#e5e5e5"/><text x="{{.X}}" y="{{$.Height}}" text-anchor="middle" fill="#555">{{.Label}}</text>
{{end}}{{range .Bars}}<text x="4" y="{{add .Y 15}}">{{.Label}}</text>
{{if .HasData}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="22" class="{{.Class}}" fill="{{if eq .Class "s1"}}#bf8700{{else}}#0969da{{end}}"/><line x1="{{.MinX}}" y1="{{add .Y 11}}" x2="{{.MaxX}}" y2="{{add .Y 11}}" stroke="#1b1f23" stroke-width="2"/>
{{end}}<text x="600" y="{{add .Y 15}}">{{.Value}}</text>
{{end}}</svg>
`))

// SVG renders a chart.
func SVG(c Chart) ([]byte, error) {
	v := view{Title: c.Title, Unit: c.Unit, Width: 780}
	top := 0.0
	for _, b := range c.Bars {
		if b.Stat != nil && b.Stat.Max != nil {
			top = max(top, *b.Stat.Max)
		}
	}
	scale := 0.0
	if top > 0 {
		scale = width / top
	}
	for i, b := range c.Bars {
		x := bar{Label: b.Label, Y: 24 + i*(rowH+gap), X: left, Value: "not measured (n=0)", Class: fmt.Sprintf("s%d", b.Series)}
		if s := b.Stat; s != nil && s.N > 0 && s.Median != nil {
			x.HasData = true
			x.W = *s.Median * scale
			x.MinX, x.MaxX = left+*s.Min*scale, left+*s.Max*scale
			x.Value = fmt.Sprintf("%.4g (%.4g–%.4g, n=%d)", *s.Median, *s.Min, *s.Max, s.N)
		}
		v.Bars = append(v.Bars, x)
	}
	v.Height = 24 + len(c.Bars)*(rowH+gap) + 16
	for k := 0; k <= 4 && top > 0; k++ {
		t := top * float64(k) / 4
		v.Ticks = append(v.Ticks, tick{X: left + t*scale, Label: fmt.Sprintf("%.3g", t)})
	}
	var buf bytes.Buffer
	if err := svg.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Metrics are the charted metrics: prompt rate, decode rate and TTFT.
func Metrics() []struct{ Metric, Title string } {
	return []struct{ Metric, Title string }{
		{contract.MetricPromptTPS, "Prompt rate"},
		{contract.MetricDecodeTPS, "Decode rate"},
		{contract.MetricTTFT, "Time to first token"},
	}
}

// Case is a charted case.
type Case struct {
	Phase, ID, Label string
}

// Cases returns the cases a result has: the performance cases, and the
// concurrency stage when selected.
func Cases(r *contract.Results) []Case {
	var out []Case
	for _, c := range protocol.PerformanceCases() {
		out = append(out, Case{"performance", c, c})
	}
	if r.Run.OptionalConcurrency {
		out = append(out, Case{"concurrency", protocol.CaseShortBurst, protocol.CaseShortBurst + " ×4"})
	}
	return out
}

// ForRun returns the three charts of one run, named by metric.
func ForRun(r *contract.Results) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range Metrics() {
		c := Chart{Title: m.Title, Unit: contract.Unit(m.Metric)}
		for _, k := range Cases(r) {
			c.Bars = append(c.Bars, Bar{Label: k.Label, Stat: r.Summary(k.Phase, k.ID, m.Metric)})
		}
		b, err := SVG(c)
		if err != nil {
			return nil, err
		}
		out[m.Metric] = b
	}
	return out, nil
}
