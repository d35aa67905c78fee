// Package charts draws the result charts as SVG: one horizontal bar per
// prompt case at the median, a min–max whisker, one dot per sample and,
// on the line above the bar, the case and its value as the README's table
// writes it (humanize.Readout; what the table leaves out, the chart leaves
// out in the same words); in a comparison, the baseline's bar above the
// candidate's for each case. Every chart is Width wide (see there).
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
	// LeftOut, when set, is shown in place of the value, with no bar: a
	// value the readouts leave out (humanize.LeftOut).
	LeftOut string
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

// Width is every chart's width in pixels of the viewBox. Each label sits
// on a line of its own above its bar, and whatever is longer than the
// width is wrapped or cut, so nothing widens a chart: at its own size (an
// image in a README on GitHub) and in any column at least this wide (the
// site's pages, a 390 px phone's included) no text is under 10 CSS px.
const Width = 320.0

// Layout, in pixels of the viewBox.
const (
	pad       = 10.0 // outer margin
	inner     = Width - 2*pad
	fontSize  = 11.0 // labels and values
	titleSize = 13.0
	smallSize = 10.0 // key, legend, ticks, axis caption
	barH      = 14.0 // a run's bar
	pairBarH  = 12.0 // a bar in a comparison group
	lineGap   = 4.0  // below a line of text
	barGap    = 5.0  // below a bar
	groupGap  = 8.0  // between groups, besides barGap
	keyW      = 12.0 // a colour key before a value, in a comparison
	ticksWant = 4
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

// fit cuts s, by the estimate of its width at size, to at most w, the cut
// marked with an ellipsis; the hover title keeps it whole.
func fit(s string, size, w float64) string {
	if textWidth(s, size) <= w {
		return s
	}
	room, used := w-textWidth("…", size), 0.0
	for i, r := range s {
		if used += runeWidth(r) * size; used > room {
			return s[:i] + "…"
		}
	}
	return s
}

// wrap breaks s at spaces into lines at most w wide at size; a word wider
// than a line is cut (fit).
func wrap(s string, size, w float64) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		next := word
		if line != "" {
			next = line + " " + word
		}
		if textWidth(next, size) <= w {
			line = next
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		line = fit(word, size, w)
	}
	return append(lines, line)
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

type swatch struct {
	X, Y, Side, Fill string
	Label            text
}

type view struct {
	Width, Height string
	Aria          string
	Grid, Axis    string // path data: the ticks across each bar, the axis
	Texts         []text // title, key, case labels, tick labels, axis caption
	Legend        []swatch
	Bars          []bar
}

var svg = template.Must(template.New("svg").Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" font-family="sans-serif" font-size="11" fill="` + ink + `">
<title>{{.Aria}}</title>
<rect x="0" y="0" width="{{.Width}}" height="{{.Height}}" fill="#ffffff"/>
{{if .Grid}}<path d="{{.Grid}}" fill="none" stroke="` + grid + `"/>
{{end}}<path d="{{.Axis}}" fill="none" stroke="` + muted + `"/>
{{range .Texts}}{{template "text" .}}{{end}}{{range .Legend}}{{template "swatch" .}}{{template "text" .Label}}{{end}}{{range .Bars}}<g>
<title>{{.Hover}}</title>
{{if .HasData}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"/>
<line x1="{{.MinX}}" y1="{{.Mid}}" x2="{{.MaxX}}" y2="{{.Mid}}" stroke="` + ink + `" stroke-width="1.5"/>
<line x1="{{.MinX}}" y1="{{.Y0}}" x2="{{.MinX}}" y2="{{.Y1}}" stroke="` + ink + `" stroke-width="1.5"/>
<line x1="{{.MaxX}}" y1="{{.Y0}}" x2="{{.MaxX}}" y2="{{.Y1}}" stroke="` + ink + `" stroke-width="1.5"/>
{{range .Dots}}<circle cx="{{.X}}" cy="{{.Y}}" r="2.5" fill="#ffffff" stroke="` + ink + `"/>
{{end}}{{end}}{{with .Key}}{{template "swatch" .}}{{end}}{{template "text" .Value}}</g>
{{end}}</svg>
{{define "swatch"}}<rect x="{{.X}}" y="{{.Y}}" width="{{.Side}}" height="{{.Side}}" fill="{{.Fill}}"/>
{{end}}{{define "text"}}<text x="{{.X}}" y="{{.Y}}"{{if .Anchor}} text-anchor="{{.Anchor}}"{{end}}{{if .Size}} font-size="{{.Size}}"{{end}}{{if .Weight}} font-weight="{{.Weight}}"{{end}}{{if .Fill}} fill="{{.Fill}}"{{end}}>{{.Text}}</text>
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
	aria := l.groups(&v)
	l.axis(&v)
	v.Width, v.Height = px(Width), px(math.Ceil(l.y+pad))
	v.Aria = l.title + ". " + strings.Join(aria, "; ")
	var buf bytes.Buffer
	if err := svg.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layout is a chart's geometry as SVG works it out: the axis, and the
// next line's top as the lines and bars are laid down from the top.
type layout struct {
	c              Chart
	title, caption string
	key            []string
	ticks          []float64
	tickLabels     []string
	scale          float64 // pixels per unit of the metric
	plotX          float64
	h              float64   // a bar's height
	rows           []float64 // each drawn bar's top
	y              float64
	end            float64 // below the last bar or value
}

// newLayout sizes the axis: it runs from the left margin to half the last
// tick's label short of the right one, so that label, centred on it,
// stays inside.
func newLayout(c Chart) *layout {
	short, long, better := unitName(c.Metric)
	l := &layout{c: c, title: escape.Line(c.Title) + " (" + short + ")", caption: long, h: barH, plotX: pad, y: pad,
		key: []string{"bar: median · line: min–max · dot: one sample", better}}
	if l.paired() {
		l.h = pairBarH
	}
	l.ticks = humanize.Ticks(axisTop(c.Bars), ticksWant)
	l.tickLabels = humanize.TickLabels(l.ticks)
	plotW := inner - textWidth(l.tickLabels[len(l.tickLabels)-1], smallSize)/2
	if last := l.ticks[len(l.ticks)-1]; last > 0 {
		l.scale = plotW / last
	}
	return l
}

// axisTop is the largest finite value any bar shows (its median, min, max
// or a sample), 0 when none: the axis runs from 0 to the last nice tick at
// or above it.
func axisTop(bars []Bar) float64 {
	top := 0.0
	for _, b := range bars {
		if s := b.Stat; s != nil && s.N > 0 && b.LeftOut == "" {
			for _, p := range []*float64{s.Median, s.Min, s.Max} {
				if p != nil && finite(*p) {
					top = max(top, *p)
				}
			}
		}
		for _, v := range b.Samples {
			if finite(v) && b.LeftOut == "" {
				top = max(top, v)
			}
		}
	}
	return top
}

// paired reports whether the chart compares runs: then it has a legend, a
// colour key before each value and thinner bars.
func (l *layout) paired() bool { return len(l.c.Series) > 1 }

// x is a value's place on the axis; a negative value sits at 0.
func (l *layout) x(v float64) float64 { return l.plotX + max(0, v)*l.scale }

// line lays down one line of text of size at the left margin (or, with
// anchor "end", ending at the right one) and moves below it.
func (l *layout) line(v *view, t text, size float64) {
	t.X, t.Y = px(pad), px(l.y+size)
	if t.Anchor == "end" {
		t.X = px(Width - pad)
	}
	if size != fontSize {
		t.Size = px(size)
	}
	v.Texts = append(v.Texts, t)
	l.y += size + lineGap
}

// heading lays down the title, the key and, in a comparison, the legend,
// each wrapped or cut to the width.
func (l *layout) heading(v *view) {
	for _, s := range wrap(l.title, titleSize, inner) {
		l.line(v, text{Weight: "bold", Text: s}, titleSize)
	}
	l.y += 2
	for _, k := range l.key {
		for _, s := range wrap(k, smallSize, inner) {
			l.line(v, text{Fill: muted, Text: s}, smallSize)
		}
	}
	if l.paired() {
		l.y += 2
		for i, name := range l.c.Series {
			name = fit(escape.Line(name), smallSize, inner-14)
			v.Legend = append(v.Legend, swatch{X: px(pad), Y: px(l.y + 1), Side: "10", Fill: colours[i%len(colours)],
				Label: text{X: px(pad + 14), Y: px(l.y + smallSize), Size: px(smallSize), Text: name}})
			l.y += smallSize + lineGap + 1
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
		label := fit(escape.Line(bars[i].Label), fontSize, inner)
		if l.paired() {
			l.line(v, text{Weight: "bold", Text: label}, fontSize)
		}
		for k := i; k < j; k++ {
			out, who := l.bar(v, k, label)
			aria = append(aria, who)
			v.Bars = append(v.Bars, out)
		}
		l.y += groupGap
		i = j
	}
	return aria
}

// bar lays down bar k: the line of its value (beside its label, for a
// single run, when both fit on one line; after its colour key, in a
// comparison) and under it the bar itself. It returns the bar with its
// text for the accessible name.
func (l *layout) bar(v *view, k int, label string) (bar, string) {
	b := l.c.Bars[k]
	value, who, full := humanize.Readout(b.Stat), label, escape.Line(b.Label)
	if b.LeftOut != "" {
		value = b.LeftOut
	}
	if l.paired() && b.Series < len(l.c.Series) {
		who += ", " + fit(escape.Line(l.c.Series[b.Series]), fontSize, inner)
		full += ", " + escape.Line(l.c.Series[b.Series])
	}
	out := bar{Hover: full + ": " + hover(l.c.Metric, b), Fill: colours[b.Series%len(colours)], Value: text{Text: value}}
	measured := b.LeftOut == "" && b.Stat != nil && b.Stat.N > 0 && b.Stat.Median != nil && b.Stat.Min != nil && b.Stat.Max != nil &&
		finite(*b.Stat.Median) && finite(*b.Stat.Min) && finite(*b.Stat.Max)
	if !measured {
		out.Value.Fill = muted
	}
	switch {
	case l.paired():
		out.Key = &swatch{X: px(pad), Y: px(l.y + 2), Side: "8", Fill: out.Fill}
		out.Value.X, out.Value.Y = px(pad+keyW), px(l.y+fontSize)
		l.y += fontSize + lineGap
	case textWidth(label, fontSize)+keyW+textWidth(value, fontSize) <= inner:
		out.Value.X, out.Value.Y, out.Value.Anchor = px(Width-pad), px(l.y+fontSize), "end"
		l.line(v, text{Text: label}, fontSize)
	default:
		l.line(v, text{Text: label}, fontSize)
		out.Value.X, out.Value.Y, out.Value.Anchor = px(Width-pad), px(l.y+fontSize), "end"
		l.y += fontSize + lineGap
	}
	// A value that is not drawn has its line only.
	l.end = l.y + 2
	if measured {
		l.rows = append(l.rows, l.y)
		l.plot(&out, b, l.y)
		l.end = l.y + l.h + 2
		l.y += l.h + barGap
	}
	return out, who + ": " + value
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

// axis draws the axis and the ticks beside each bar (not through the
// lines of text between the bars), the axis line under the last bar with
// a mark and a label at each tick, and the unit's caption under it.
func (l *layout) axis(v *view) {
	var gridD, axisD strings.Builder
	for _, top := range l.rows {
		y0, y1 := px(top-1), px(top+l.h+1)
		axisD.WriteString("M" + px(l.plotX) + " " + y0 + "V" + y1)
		for _, t := range l.ticks[1:] {
			gridD.WriteString("M" + px(l.x(t)) + " " + y0 + "V" + y1)
		}
	}
	bottom := l.end
	axisD.WriteString("M" + px(l.plotX) + " " + px(bottom) + "H" + px(l.x(l.ticks[len(l.ticks)-1])))
	for _, t := range l.ticks {
		axisD.WriteString("M" + px(l.x(t)) + " " + px(bottom) + "v3")
	}
	v.Grid, v.Axis = gridD.String(), axisD.String()
	l.y = bottom + 3
	for i, t := range l.ticks {
		v.Texts = append(v.Texts, text{X: px(l.x(t)), Y: px(l.y + smallSize), Anchor: "middle", Size: px(smallSize), Fill: muted, Text: l.tickLabels[i]})
	}
	l.y += smallSize + lineGap + 2
	v.Texts = append(v.Texts, text{X: px(Width / 2), Y: px(l.y + smallSize), Anchor: "middle", Size: px(smallSize), Fill: muted,
		Text: fit(l.caption, smallSize, inner)})
	l.y += smallSize + 3
}

// hover is a bar's exact values, for its <title>.
func hover(metric string, b Bar) string {
	s := b.Stat
	switch {
	case b.LeftOut != "":
		return b.LeftOut + "; results.json keeps it"
	case s == nil || s.N == 0 || s.Median == nil || s.Min == nil || s.Max == nil:
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

// barOf is a run's bar for case k: its summary and samples, or what the
// readouts show in their place (humanize.LeftOut).
func barOf(r *contract.Results, k Case, metric string, series int) Bar {
	if out := humanize.LeftOut(k.ID, metric); out != "" {
		return Bar{Label: k.Label, LeftOut: out, Series: series}
	}
	s := r.Summary(k.Phase, k.ID, metric)
	return Bar{Label: k.Label, Stat: s, Samples: measure.Samples(r, s), Series: series}
}

// FileName is the name of a run's chart of metric in its result folder.
func FileName(metric string) string { return "chart-" + metric + ".svg" }

// Files returns a run's charts as its result folder holds them, one per
// charted metric in Metrics order: drawn from its results.json alone, so
// the same results.json always gives the same bytes.
func Files(r *contract.Results) ([]File, error) {
	cs, err := ForRun(r)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, m := range Metrics() {
		out = append(out, File{Name: FileName(m.Metric), Data: cs[m.Metric]})
	}
	return out, nil
}

// ForRun returns the three charts of one run, named by metric.
func ForRun(r *contract.Results) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range Metrics() {
		c := Chart{Title: m.Title, Metric: m.Metric}
		for _, k := range Cases(r) {
			c.Bars = append(c.Bars, barOf(r, k, m.Metric, 0))
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
				c.Bars = append(c.Bars, barOf(r, k, m.Metric, i))
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
