// Package charts draws the result charts as SVG: one horizontal bar per
// prompt case at the median, a min–max whisker, one dot per sample and the
// value with its unit and n beside it; in a comparison, the baseline's and
// the candidate's bar side by side for each case.
//
// The SVG is written by hand through html/template rather than by a chart
// library (github.com/go-analyze/charts was considered): that library
// writes its colours as style="" attributes or an embedded <style>, which
// the site's Content-Security-Policy (style-src 'self') blocks in an
// inline SVG; it has no min–max whisker with sample dots and n per bar;
// and it measures text with an embedded font it would pull in. Here every
// colour is a presentation attribute (fill=, stroke=), every label from a
// submission is escaped by html/template, the layout is computed from a
// conservative estimate of each text's width so every label lies inside
// the viewBox, and the same result always gives the same bytes.
package charts

import (
	"bytes"
	"html/template"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/display"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/quantity"
)

// Bar is one run's value for one case.
type Bar struct {
	// Label is the case. Consecutive bars with the same label form one
	// group, labelled once (a comparison's baseline and candidate).
	Label   string
	Stat    *contract.Summary
	Samples []float64 // the individual values (measure.Samples)
	Series  int       // colour and legend index: 0 baseline or the run, 1 candidate
}

// Chart is one metric.
type Chart struct {
	Title  string
	Metric string // decides the unit and how numbers are written
	// Series names the runs for the legend ("baseline: RUN-ID"); with
	// fewer than two there is no legend.
	Series []string
	Bars   []Bar
}

// Layout, in pixels of the viewBox.
const (
	pad       = 10.0  // outer margin
	plotW     = 360.0 // the plot area's width
	colGap    = 12.0  // between the label, plot and value columns
	fontSize  = 11.0  // labels and values
	titleSize = 13.0
	smallSize = 10.0 // key, legend, ticks, axis caption
	barH      = 16.0 // a run's bar
	pairBarH  = 12.0 // a bar in a comparison group
	rowGap    = 8.0  // between groups
	barGap    = 3.0  // between the bars of a group
	maxRunes  = 40   // a longer label is cut, in full in the hover title
	ticksWant = 5
)

// Colours of the series, the whisker and the text.
var (
	colours = []string{"#0969da", "#bf8700"}
	ink     = "#1b1f23"
	muted   = "#57606a"
	grid    = "#d8dee4"
)

// runeWidth is a conservative estimate of a glyph's advance in a
// sans-serif font, in ems: wider than the average Latin letter or digit,
// and a full em for the wide East Asian scripts.
func runeWidth(r rune) float64 {
	if unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0xFF00 && r <= 0xFF60) || (r >= 0x1F300 && r <= 0x1FAFF) {
		return 1
	}
	return 0.62
}

// textWidth estimates the width of s at size px.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w * size
}

// clean makes untrusted text one visible line (control and format
// characters escaped, which also keeps the XML well-formed) and cuts it to
// maxRunes.
func clean(s string) string {
	s = display.Line(s)
	if r := []rune(s); len(r) > maxRunes {
		return string(r[:maxRunes-1]) + "…"
	}
	return s
}

// px writes a coordinate with one decimal at most, never in e notation.
func px(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// exact writes a value with every digit it has, never in e notation.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

type text struct {
	X, Y, Anchor, Size, Fill, Weight, Text string
}

type dot struct{ X, Y string }

type bar struct {
	Hover       string
	HasData     bool
	X, Y, W, H  string
	Fill        string
	MinX, MaxX  string
	Mid, Y0, Y1 string
	Dots        []dot
	Key         *swatch // the series' colour before the value, in a comparison
	Value       text
}

type tick struct {
	X, Y1, Y2 string
	Label     text
}

type swatch struct {
	X, Y, Fill string
	Label      text
}

type view struct {
	Width, Height string
	Aria          string
	Texts         []text // title, key, case labels, axis caption
	Legend        []swatch
	Ticks         []tick
	AxisX, AxisY1 string
	AxisY2        string
	Bars          []bar
}

var svg = template.Must(template.New("svg").Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" font-family="sans-serif" font-size="11" fill="` + ink + `">
<title>{{.Aria}}</title>
<rect x="0" y="0" width="{{.Width}}" height="{{.Height}}" fill="#ffffff"/>
{{range .Texts}}{{template "text" .}}{{end}}{{range .Ticks}}<line x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}" stroke="` + grid + `"/>
{{template "text" .Label}}{{end}}<line x1="{{.AxisX}}" y1="{{.AxisY1}}" x2="{{.AxisX}}" y2="{{.AxisY2}}" stroke="` + muted + `"/>
{{range .Legend}}<rect x="{{.X}}" y="{{.Y}}" width="10" height="10" fill="{{.Fill}}"/>
{{template "text" .Label}}{{end}}{{range .Bars}}<g>
<title>{{.Hover}}</title>
{{if .HasData}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"/>
<line x1="{{.MinX}}" y1="{{.Mid}}" x2="{{.MaxX}}" y2="{{.Mid}}" stroke="` + ink + `" stroke-width="1.5"/>
<line x1="{{.MinX}}" y1="{{.Y0}}" x2="{{.MinX}}" y2="{{.Y1}}" stroke="` + ink + `" stroke-width="1.5"/>
<line x1="{{.MaxX}}" y1="{{.Y0}}" x2="{{.MaxX}}" y2="{{.Y1}}" stroke="` + ink + `" stroke-width="1.5"/>
{{range .Dots}}<circle cx="{{.X}}" cy="{{.Y}}" r="2.5" fill="#ffffff" stroke="` + ink + `"/>
{{end}}{{end}}{{with .Key}}<rect x="{{.X}}" y="{{.Y}}" width="8" height="8" fill="{{.Fill}}"/>
{{end}}{{template "text" .Value}}</g>
{{end}}</svg>
{{define "text"}}<text x="{{.X}}" y="{{.Y}}"{{if .Anchor}} text-anchor="{{.Anchor}}"{{end}}{{if .Size}} font-size="{{.Size}}"{{end}}{{if .Weight}} font-weight="{{.Weight}}"{{end}}{{if .Fill}} fill="{{.Fill}}"{{end}}>{{.Text}}</text>
{{end}}`))

// unitName is the unit as the axis caption spells it out.
func unitName(metric string) (short, long, better string) {
	if contract.Unit(metric) == contract.UnitRate {
		return "tok/s", "tokens per second (tok/s)", "higher is better"
	}
	return "s", "seconds (s)", "lower is better"
}

// SVG renders a chart.
func SVG(c Chart) ([]byte, error) {
	short, long, better := unitName(c.Metric)
	title := display.Line(c.Title) + " (" + short + ")"
	key := "bar: median · line: min–max · dot: one sample · " + better

	// The axis runs from 0 to the last nice tick at or above every value.
	top := 0.0
	for _, b := range c.Bars {
		if s := b.Stat; s != nil && s.N > 0 {
			for _, p := range []*float64{s.Median, s.Min, s.Max} {
				if p != nil && finite(*p) {
					top = max(top, *p)
				}
			}
		}
		for _, v := range b.Samples {
			if finite(v) {
				top = max(top, v)
			}
		}
	}
	ticks := quantity.Ticks(top, ticksWant)
	tickLabels := quantity.TickLabels(ticks)
	scale := 0.0
	if last := ticks[len(ticks)-1]; last > 0 {
		scale = plotW / last
	}

	// Columns: case labels, the plot, the values.
	labels := make([]string, len(c.Bars))
	values := make([]string, len(c.Bars))
	labelW, valueW := 0.0, 0.0
	for i, b := range c.Bars {
		labels[i] = clean(b.Label)
		values[i] = quantity.Cell(b.Stat)
		labelW = max(labelW, textWidth(labels[i], fontSize))
		valueW = max(valueW, textWidth(values[i], fontSize))
	}
	keyW := 0.0 // a colour key before each value, in a comparison
	if len(c.Series) > 1 {
		keyW = 12
	}
	plotX := pad + labelW + colGap
	valueX := plotX + plotW + colGap
	width := max(valueX+keyW+valueW, pad+textWidth(title, titleSize), pad+textWidth(key, smallSize))
	for i, l := range tickLabels {
		width = max(width, plotX+ticks[i]*scale+textWidth(l, smallSize)/2)
	}

	// Rows: title, key, legend, then the groups.
	v := view{}
	v.Texts = append(v.Texts,
		text{X: px(pad), Y: px(pad + titleSize), Size: px(titleSize), Weight: "bold", Text: title},
		text{X: px(pad), Y: px(pad + titleSize + 6 + smallSize), Size: px(smallSize), Fill: muted, Text: key})
	y := pad + titleSize + 6 + smallSize + 6
	if len(c.Series) > 1 {
		for i, name := range c.Series {
			name = clean(name)
			width = max(width, pad+14+textWidth(name, smallSize))
			v.Legend = append(v.Legend, swatch{X: px(pad), Y: px(y + 2), Fill: colours[i%len(colours)],
				Label: text{X: px(pad + 14), Y: px(y + smallSize + 1), Size: px(smallSize), Text: name}})
			y += smallSize + 5
		}
	}
	y += 6
	plotTop := y
	h := barH
	if len(c.Series) > 1 {
		h = pairBarH
	}
	x := func(v float64) float64 { return plotX + max(0, v)*scale }
	var aria []string
	for i := 0; i < len(c.Bars); {
		j := i + 1
		for j < len(c.Bars) && c.Bars[j].Label == c.Bars[i].Label {
			j++
		}
		groupH := float64(j-i)*h + float64(j-i-1)*barGap
		v.Texts = append(v.Texts, text{X: px(pad), Y: px(y + groupH/2 + fontSize*0.35), Text: labels[i]})
		for k := i; k < j; k++ {
			b, by := c.Bars[k], y+float64(k-i)*(h+barGap)
			mid := by + h/2
			who, full := labels[k], display.Line(b.Label)
			if len(c.Series) > 1 && b.Series < len(c.Series) {
				who += ", " + clean(c.Series[b.Series])
				full += ", " + display.Line(c.Series[b.Series])
			}
			aria = append(aria, who+": "+values[k])
			out := bar{
				Hover: full + ": " + hover(c.Metric, b),
				Fill:  colours[b.Series%len(colours)],
				Value: text{X: px(valueX + keyW), Y: px(mid + fontSize*0.35), Text: values[k]},
			}
			if keyW > 0 {
				// The series' colour before its value, as in the legend.
				out.Key = &swatch{X: px(valueX), Y: px(mid - 4), Fill: out.Fill}
			}
			if s := b.Stat; s != nil && s.N > 0 && s.Median != nil && s.Min != nil && s.Max != nil &&
				finite(*s.Median) && finite(*s.Min) && finite(*s.Max) {
				out.HasData = true
				out.X, out.Y, out.W, out.H = px(plotX), px(by), px(x(*s.Median)-plotX), px(h)
				out.MinX, out.MaxX, out.Mid = px(x(*s.Min)), px(x(*s.Max)), px(mid)
				out.Y0, out.Y1 = px(mid-h/2+2), px(mid+h/2-2)
				for n, sv := range b.Samples {
					if finite(sv) {
						// Three rows of dots, so equal samples stay countable.
						out.Dots = append(out.Dots, dot{X: px(x(sv)), Y: px(mid + float64(n%3-1)*h/5)})
					}
				}
			} else {
				out.Value.Fill = muted
			}
			v.Bars = append(v.Bars, out)
		}
		y += groupH + rowGap
		i = j
	}
	plotBottom := y - rowGap + 4
	for i, t := range ticks {
		v.Ticks = append(v.Ticks, tick{X: px(x(t)), Y1: px(plotTop - 2), Y2: px(plotBottom),
			Label: text{X: px(x(t)), Y: px(plotBottom + 3 + smallSize), Anchor: "middle", Size: px(smallSize), Fill: muted, Text: tickLabels[i]}})
	}
	v.AxisX, v.AxisY1, v.AxisY2 = px(plotX), px(plotTop-2), px(plotBottom)
	caption := long
	width = max(width, plotX+plotW/2+textWidth(caption, smallSize)/2)
	v.Texts = append(v.Texts, text{X: px(plotX + plotW/2), Y: px(plotBottom + 3 + 2*smallSize + 4), Anchor: "middle", Size: px(smallSize), Fill: muted, Text: caption})
	height := plotBottom + 3 + 2*smallSize + 4 + pad

	v.Width, v.Height = px(math.Ceil(width+pad)), px(math.Ceil(height))
	v.Aria = title + ". " + strings.Join(aria, "; ")
	var buf bytes.Buffer
	if err := svg.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hover is a bar's exact values, for its <title>.
func hover(metric string, b Bar) string {
	s := b.Stat
	if s == nil || s.N == 0 || s.Median == nil || s.Min == nil || s.Max == nil {
		return "not measured (n=0)"
	}
	short, _, _ := unitName(metric)
	out := "median " + exact(*s.Median) + " " + short + ", min " + exact(*s.Min) + ", max " + exact(*s.Max) + ", n=" + strconv.Itoa(s.N)
	if len(b.Samples) > 0 {
		vs := make([]string, len(b.Samples))
		for i, v := range b.Samples {
			vs[i] = exact(v)
		}
		out += "; samples " + strings.Join(vs, ", ")
	}
	return out
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
		c := Chart{Title: m.Title, Metric: m.Metric}
		for _, k := range Cases(r) {
			s := r.Summary(k.Phase, k.ID, m.Metric)
			c.Bars = append(c.Bars, Bar{Label: k.Label, Stat: s, Samples: measure.Samples(r, s)})
		}
		b, err := SVG(c)
		if err != nil {
			return nil, err
		}
		out[m.Metric] = b
	}
	return out, nil
}

// ForPair returns the three charts of a comparison, named by metric: for
// each case a baseline bar and a candidate bar next to each other, with a
// legend naming the two runs. A case either run has is charted.
func ForPair(base, cand *contract.Results) (map[string][]byte, error) {
	cases := Cases(base)
	seen := map[Case]bool{}
	for _, k := range cases {
		seen[k] = true
	}
	for _, k := range Cases(cand) {
		if !seen[k] {
			cases = append(cases, k)
		}
	}
	out := map[string][]byte{}
	for _, m := range Metrics() {
		c := Chart{Title: m.Title + ": baseline vs candidate", Metric: m.Metric,
			Series: []string{"baseline: " + base.Run.ID, "candidate: " + cand.Run.ID}}
		for _, k := range cases {
			for i, r := range []*contract.Results{base, cand} {
				s := r.Summary(k.Phase, k.ID, m.Metric)
				c.Bars = append(c.Bars, Bar{Label: k.Label, Stat: s, Samples: measure.Samples(r, s), Series: i})
			}
		}
		b, err := SVG(c)
		if err != nil {
			return nil, err
		}
		out[m.Metric] = b
	}
	return out, nil
}
