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
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
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
	s = escape.Line(s)
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
	l := newLayout(c)
	v := view{}
	l.heading(&v)
	plotTop := l.y
	aria := l.groups(&v)
	plotBottom := l.y - rowGap + 4
	l.axis(&v, plotTop, plotBottom)
	height := plotBottom + 3 + 2*smallSize + 4 + pad

	v.Width, v.Height = px(math.Ceil(l.width+pad)), px(math.Ceil(height))
	v.Aria = l.title + ". " + strings.Join(aria, "; ")
	var buf bytes.Buffer
	if err := svg.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layout is a chart's geometry as SVG works it out: the axis, the three
// columns (case labels, the plot, the values), and the width and the next
// row's top as the rows are laid down.
type layout struct {
	c                   Chart
	title, key, caption string
	ticks               []float64
	tickLabels          []string
	scale               float64 // pixels per unit of the metric
	labels, values      []string
	keyW                float64 // a colour key before each value, in a comparison
	h                   float64 // a bar's height
	plotX, valueX       float64
	width, y            float64
}

// newLayout sizes the axis and the columns; the width it starts with fits
// the columns, the title, the key and every tick label.
func newLayout(c Chart) *layout {
	short, long, better := unitName(c.Metric)
	l := &layout{c: c, title: escape.Line(c.Title) + " (" + short + ")", caption: long, h: barH,
		key: "bar: median · line: min–max · dot: one sample · " + better}
	l.ticks = humanize.Ticks(axisTop(c.Bars), ticksWant)
	l.tickLabels = humanize.TickLabels(l.ticks)
	if last := l.ticks[len(l.ticks)-1]; last > 0 {
		l.scale = plotW / last
	}
	var labelW, valueW float64
	l.labels, l.values, labelW, valueW = columns(c.Bars)
	if l.paired() {
		l.keyW, l.h = 12, pairBarH
	}
	l.plotX = pad + labelW + colGap
	l.valueX = l.plotX + plotW + colGap
	l.width = max(l.valueX+l.keyW+valueW, pad+textWidth(l.title, titleSize), pad+textWidth(l.key, smallSize))
	for i, t := range l.tickLabels {
		l.width = max(l.width, l.plotX+l.ticks[i]*l.scale+textWidth(t, smallSize)/2)
	}
	return l
}

// axisTop is the largest finite value any bar shows (its median, min, max
// or a sample), 0 when none: the axis runs from 0 to the last nice tick at
// or above it.
func axisTop(bars []Bar) float64 {
	top := 0.0
	for _, b := range bars {
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
	return top
}

// columns is each bar's case label and value as drawn, and the widest of
// each.
func columns(bars []Bar) (labels, values []string, labelW, valueW float64) {
	labels = make([]string, len(bars))
	values = make([]string, len(bars))
	for i, b := range bars {
		labels[i] = clean(b.Label)
		values[i] = humanize.Cell(b.Stat)
		labelW = max(labelW, textWidth(labels[i], fontSize))
		valueW = max(valueW, textWidth(values[i], fontSize))
	}
	return labels, values, labelW, valueW
}

// paired reports whether the chart compares runs: then it has a legend, a
// colour key before each value and thinner bars.
func (l *layout) paired() bool { return len(l.c.Series) > 1 }

// x is a value's place on the axis; a negative value sits at 0.
func (l *layout) x(v float64) float64 { return l.plotX + max(0, v)*l.scale }

// heading lays down the title, the key and, in a comparison, the legend.
func (l *layout) heading(v *view) {
	v.Texts = append(v.Texts,
		text{X: px(pad), Y: px(pad + titleSize), Size: px(titleSize), Weight: "bold", Text: l.title},
		text{X: px(pad), Y: px(pad + titleSize + 6 + smallSize), Size: px(smallSize), Fill: muted, Text: l.key})
	l.y = pad + titleSize + 6 + smallSize + 6
	if l.paired() {
		for i, name := range l.c.Series {
			name = clean(name)
			l.width = max(l.width, pad+14+textWidth(name, smallSize))
			v.Legend = append(v.Legend, swatch{X: px(pad), Y: px(l.y + 2), Fill: colours[i%len(colours)],
				Label: text{X: px(pad + 14), Y: px(l.y + smallSize + 1), Size: px(smallSize), Text: name}})
			l.y += smallSize + 5
		}
	}
	l.y += 6
}

// groups lays down the bars, one group per run of consecutive bars with
// the same label, labelled once, and returns each bar's text for the
// chart's accessible name.
func (l *layout) groups(v *view) []string {
	var aria []string
	bars := l.c.Bars
	for i := 0; i < len(bars); {
		j := i + 1
		for j < len(bars) && bars[j].Label == bars[i].Label {
			j++
		}
		groupH := float64(j-i)*l.h + float64(j-i-1)*barGap
		v.Texts = append(v.Texts, text{X: px(pad), Y: px(l.y + groupH/2 + fontSize*0.35), Text: l.labels[i]})
		for k := i; k < j; k++ {
			out, who := l.bar(k, l.y+float64(k-i)*(l.h+barGap))
			aria = append(aria, who)
			v.Bars = append(v.Bars, out)
		}
		l.y += groupH + rowGap
		i = j
	}
	return aria
}

// bar draws bar k with its top at by, and returns it with its text for
// the accessible name.
func (l *layout) bar(k int, by float64) (bar, string) {
	b, mid := l.c.Bars[k], by+l.h/2
	who, full := l.labels[k], escape.Line(b.Label)
	if l.paired() && b.Series < len(l.c.Series) {
		who += ", " + clean(l.c.Series[b.Series])
		full += ", " + escape.Line(l.c.Series[b.Series])
	}
	out := bar{
		Hover: full + ": " + hover(l.c.Metric, b),
		Fill:  colours[b.Series%len(colours)],
		Value: text{X: px(l.valueX + l.keyW), Y: px(mid + fontSize*0.35), Text: l.values[k]},
	}
	if l.keyW > 0 {
		// The series' colour before its value, as in the legend.
		out.Key = &swatch{X: px(l.valueX), Y: px(mid - 4), Fill: out.Fill}
	}
	if s := b.Stat; s != nil && s.N > 0 && s.Median != nil && s.Min != nil && s.Max != nil &&
		finite(*s.Median) && finite(*s.Min) && finite(*s.Max) {
		l.plot(&out, b, by)
	} else {
		out.Value.Fill = muted
	}
	return out, who + ": " + l.values[k]
}

// plot draws a measured bar at by: the median's bar, the min–max whisker
// and one dot per finite sample.
func (l *layout) plot(out *bar, b Bar, by float64) {
	s, mid := b.Stat, by+l.h/2
	out.HasData = true
	out.X, out.Y, out.W, out.H = px(l.plotX), px(by), px(l.x(*s.Median)-l.plotX), px(l.h)
	out.MinX, out.MaxX, out.Mid = px(l.x(*s.Min)), px(l.x(*s.Max)), px(mid)
	out.Y0, out.Y1 = px(mid-l.h/2+2), px(mid+l.h/2-2)
	for n, sv := range b.Samples {
		if finite(sv) {
			// Three rows of dots, so equal samples stay countable.
			out.Dots = append(out.Dots, dot{X: px(l.x(sv)), Y: px(mid + float64(n%3-1)*l.h/5)})
		}
	}
}

// axis lays down the ticks with their labels, the axis line from plotTop
// to plotBottom and the unit's caption under it.
func (l *layout) axis(v *view, plotTop, plotBottom float64) {
	for i, t := range l.ticks {
		v.Ticks = append(v.Ticks, tick{X: px(l.x(t)), Y1: px(plotTop - 2), Y2: px(plotBottom),
			Label: text{X: px(l.x(t)), Y: px(plotBottom + 3 + smallSize), Anchor: "middle", Size: px(smallSize), Fill: muted, Text: l.tickLabels[i]}})
	}
	v.AxisX, v.AxisY1, v.AxisY2 = px(l.plotX), px(plotTop-2), px(plotBottom)
	l.width = max(l.width, l.plotX+plotW/2+textWidth(l.caption, smallSize)/2)
	v.Texts = append(v.Texts, text{X: px(l.plotX + plotW/2), Y: px(plotBottom + 3 + 2*smallSize + 4), Anchor: "middle", Size: px(smallSize), Fill: muted, Text: l.caption})
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
