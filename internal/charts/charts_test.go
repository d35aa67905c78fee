package charts

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func f(v float64) *float64 { return &v }

// summary is the summary of vs as the measure package would write it.
func summary(phase, caseID, metric string, ids []string, vs []float64) contract.Summary {
	s := contract.Summary{Phase: phase, CaseID: caseID, Metric: metric, Unit: contract.Unit(metric), N: len(vs), IncludedRequestIDs: ids}
	if len(vs) > 0 {
		sorted := slices.Sorted(slices.Values(vs))
		med := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
		}
		s.Median, s.Min, s.Max = f(med), f(sorted[0]), f(sorted[len(sorted)-1])
	}
	return s
}

// sample is one request's three charted values.
type sample struct{ prompt, decode, ttft float64 }

// results builds a run: per performance case (and the concurrency stage,
// when given) its requests and the summaries of the three charted metrics.
func results(id string, cases map[string][]sample) *contract.Results {
	r := &contract.Results{Run: contract.Run{ID: id}}
	phases := map[string]string{}
	var order []string
	for _, c := range protocol.PerformanceCases() {
		phases[c], order = "performance", append(order, c)
	}
	if _, ok := cases[protocol.CaseShortBurst]; ok {
		r.Run.OptionalConcurrency = true
		phases[protocol.CaseShortBurst], order = "concurrency", append(order, protocol.CaseShortBurst)
	}
	for _, c := range order {
		var ids []string
		var p, d, t []float64
		for i, s := range cases[c] {
			q := contract.Request{ID: fmt.Sprintf("%s-%s-%d", id, c, i), Phase: phases[c], CaseID: c}
			q.Metrics.PromptTPS, q.Metrics.DecodeTPS, q.Timings.TTFTS = f(s.prompt), f(s.decode), f(s.ttft)
			r.Requests = append(r.Requests, q)
			ids = append(ids, q.ID)
			p, d, t = append(p, s.prompt), append(d, s.decode), append(t, s.ttft)
		}
		r.Summaries = append(r.Summaries,
			summary(phases[c], c, contract.MetricPromptTPS, ids, p),
			summary(phases[c], c, contract.MetricDecodeTPS, ids, d),
			summary(phases[c], c, contract.MetricTTFT, ids, t))
	}
	return r
}

// typical is a run with three samples per case and no 16k case measured.
func typical(id string, k float64) *contract.Results {
	return results(id, map[string][]sample{
		protocol.CaseShort:    {{1890 * k, 41.2 * k, 0.081 / k}, {1964 * k, 42.0 * k, 0.078 / k}, {2011 * k, 42.9 * k, 0.090 / k}},
		protocol.CasePrompt4K: {{19500 * k, 39.1 * k, 0.40 / k}, {20000 * k, 38.7 * k, 0.42 / k}, {20400 * k, 38.2 * k, 0.45 / k}},
	})
}

// node is an element of a parsed SVG.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) num(t *testing.T, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.XMLName.Local, name, n.attr(name), err)
	}
	return v
}

// all returns the elements named name, in document order.
func (n node) all(name string) []node {
	var out []node
	if n.XMLName.Local == name {
		out = append(out, n)
	}
	for _, c := range n.Nodes {
		out = append(out, c.all(name)...)
	}
	return out
}

var exponent = regexp.MustCompile(`[0-9][eE][+-]`)

// check parses an SVG and asserts what holds for every chart: it is
// well-formed XML, has a <title>, no number in e notation, and every text
// lies inside the viewBox by a conservative width estimate.
func check(t *testing.T, b []byte) node {
	t.Helper()
	var root node
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, b)
	}
	if root.XMLName.Local != "svg" || len(root.Nodes) == 0 || root.Nodes[0].XMLName.Local != "title" || root.Nodes[0].Text == "" {
		t.Errorf("want <svg> whose first child is a <title>")
	}
	if m := exponent.Find(b); m != nil {
		t.Errorf("number in e notation %q in\n%s", m, b)
	}
	if strings.Contains(string(b), "style=") {
		t.Errorf("a style attribute, which the site's CSP blocks")
	}
	width, height := root.num(t, "width"), root.num(t, "height")
	if vb := root.attr("viewBox"); vb != fmt.Sprintf("0 0 %s %s", root.attr("width"), root.attr("height")) {
		t.Errorf("viewBox %q", vb)
	}
	for _, e := range root.all("text") {
		size := 11.0
		if e.attr("font-size") != "" {
			size = e.num(t, "font-size")
		}
		x, y := e.num(t, "x"), e.num(t, "y")
		w := float64(utf8.RuneCountInString(e.Text)) * 0.62 * size
		lo, hi := x, x+w
		switch e.attr("text-anchor") {
		case "middle":
			lo, hi = x-w/2, x+w/2
		case "end":
			lo, hi = x-w, x
		}
		if lo < 0 || hi > width || y-size < 0 || y+0.25*size > height {
			t.Errorf("text %q spans x %.1f–%.1f, y %.1f–%.1f, outside 0 0 %g %g", e.Text, lo, hi, y-size, y+0.25*size, width, height)
		}
	}
	return root
}

// texts returns the content of every <text>.
func texts(root node) []string {
	var out []string
	for _, e := range root.all("text") {
		out = append(out, e.Text)
	}
	return out
}

// ticks returns the tick labels: the texts centred below the plot, less the
// axis caption.
func ticks(root node) []string {
	var out []string
	for _, e := range root.all("text") {
		if e.attr("text-anchor") == "middle" && !strings.Contains(e.Text, "(") {
			out = append(out, e.Text)
		}
	}
	return out
}

func TestSVG(t *testing.T) {
	t.Parallel()
	long := "prompt-" + strings.Repeat("very-long-label-", 20)
	for _, c := range []struct {
		name    string
		metric  string
		label   string
		samples []float64
		nilStat bool
		value   string // the value label
		ticks   string
	}{
		{"rate 2e4", contract.MetricPromptTPS, "prompt-4k", []float64{19500, 20000, 20400}, false,
			"20,000 (19,500–20,400, n=3)", "0 5k 10k 15k 20k 25k"},
		{"rate 5.4e6", contract.MetricPromptTPS, "prompt-16k", []float64{5.4e6, 5.5e6, 5.8e6}, false,
			"5.50 M (5.40 M–5.80 M, n=3)", "0 2M 4M 6M"},
		{"rate 0.5", contract.MetricDecodeTPS, "short", []float64{0.48, 0.5, 0.52}, false,
			"0.500 (0.480–0.520, n=3)", "0 0.2 0.4 0.6"},
		{"seconds 0.42", contract.MetricTTFT, "short", []float64{0.40, 0.42, 0.45}, false,
			"0.420 (0.400–0.450, n=3)", "0 0.1 0.2 0.3 0.4 0.5"},
		{"one sample", contract.MetricTTFT, "short", []float64{1.5}, false,
			"1.50 (1.50–1.50, n=1)", "0 0.5 1.0 1.5"},
		{"nil summary", contract.MetricPromptTPS, "prompt-16k", nil, true, "not measured (n=0)", "0"},
		{"n=0", contract.MetricPromptTPS, "prompt-16k", nil, false, "not measured (n=0)", "0"},
		{"long label", contract.MetricPromptTPS, long, []float64{5.4e6, 5.4e6, 5.8e6}, false,
			"5.40 M (5.40 M–5.80 M, n=3)", "0 2M 4M 6M"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ids []string
			for i := range c.samples {
				ids = append(ids, strconv.Itoa(i))
			}
			s := summary("performance", "x", c.metric, ids, c.samples)
			stat := &s
			if c.nilStat {
				stat = nil
			}
			// A measured case beside it, as in a real chart.
			other := summary("performance", "y", c.metric, []string{"a"}, []float64{0})
			b, err := SVG(Chart{Title: "Chart", Metric: c.metric, Bars: []Bar{
				{Label: c.label, Stat: stat, Samples: c.samples},
				{Label: "short", Stat: &other, Samples: []float64{0}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			root := check(t, b)
			ts := texts(root)
			if !slices.Contains(ts, c.value) {
				t.Errorf("no value label %q in %q", c.value, ts)
			}
			if got := strings.Join(ticks(root), " "); got != c.ticks {
				t.Errorf("ticks %q, want %q", got, c.ticks)
			}
			if got := len(root.all("circle")); got != len(c.samples)+1 {
				t.Errorf("%d sample dots, want %d", got, len(c.samples)+1)
			}
			// No bar or whisker runs past the last tick.
			end := 0.0
			for _, e := range root.all("text") {
				if e.attr("text-anchor") == "middle" && !strings.Contains(e.Text, "(") {
					end = max(end, e.num(t, "x"))
				}
			}
			var reach []float64
			for _, r := range root.all("rect")[1:] { // [0] is the background
				reach = append(reach, r.num(t, "x")+r.num(t, "width"))
			}
			for _, l := range root.all("line") {
				reach = append(reach, l.num(t, "x1"), l.num(t, "x2"))
			}
			for _, d := range root.all("circle") {
				reach = append(reach, d.num(t, "cx"))
			}
			for _, x := range reach {
				if x > end+0.05 {
					t.Errorf("a bar, whisker or dot reaches %g, past the last tick at %g", x, end)
				}
			}
			unit := "tok/s"
			if c.metric == contract.MetricTTFT {
				unit = "s"
			}
			if title := ts[0]; title != "Chart ("+unit+")" {
				t.Errorf("title %q", title)
			}
			if c.label == long {
				hovers := root.all("title")
				if !strings.HasPrefix(hovers[1].Text, long+": median 5400000 tok/s") {
					t.Errorf("the hover title does not carry the whole label and exact value: %q", hovers[1].Text)
				}
				cut := false
				for _, s := range ts {
					cut = cut || strings.HasSuffix(s, "…") && strings.HasPrefix(long, strings.TrimSuffix(s, "…"))
				}
				if !cut {
					t.Errorf("the long label is not cut: %q", ts)
				}
			}
		})
	}
}

func TestForRun(t *testing.T) {
	t.Parallel()
	r := typical("run-a", 1)
	cs, err := ForRun(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		root := check(t, cs[m.Metric])
		// Three samples in each of two measured cases; 16k is not
		// measured, and the short prompt's prompt rate is left out.
		want := 6
		if m.Metric == contract.MetricPromptTPS {
			want = 3
		}
		if got := len(root.all("circle")); got != want {
			t.Errorf("%s: %d sample dots, want %d", m.Metric, got, want)
		}
		ts := texts(root)
		for _, want := range []string{"short", "prompt-4k", "prompt-16k", "not measured (n=0)", humanize.Readout(r.Summary("performance", "prompt-4k", m.Metric))} {
			if !slices.Contains(ts, want) {
				t.Errorf("%s: no text %q in %q", m.Metric, want, ts)
			}
		}
	}
	if got := ticks(check(t, cs[contract.MetricPromptTPS])); strings.Join(got, " ") != "0 5k 10k 15k 20k 25k" {
		t.Errorf("prompt ticks %q", got)
	}
}

func TestForPair(t *testing.T) {
	t.Parallel()
	base := typical("base-run", 1)
	cand := typical("cand-run", 1.3)
	cand.Run.OptionalConcurrency = true // a case only the candidate has is charted too
	cs, err := ForPair(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		root := check(t, cs[m.Metric])
		var got []string
		for _, g := range root.all("g") {
			got = append(got, strings.SplitN(g.Nodes[0].Text, ":", 2)[0])
		}
		var want []string
		for _, k := range []string{"short", "prompt-4k", "prompt-16k", "short-burst ×4"} {
			want = append(want, k+", baseline", k+", candidate")
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: bars %q, want %q", m.Metric, got, want)
		}
		// Each bar and its colour key in its series' colour, alternating.
		for i, g := range root.all("g") {
			rects := g.all("rect")
			if len(rects) == 0 {
				t.Errorf("%s: bar %d has no colour key", m.Metric, i)
			}
			for _, r := range rects {
				if r.attr("fill") != colours[i%2] {
					t.Errorf("%s: bar %d in %s, want %s", m.Metric, i, r.attr("fill"), colours[i%2])
				}
			}
		}
		ts := texts(root)
		for _, want := range []string{"baseline: base-run", "candidate: cand-run"} {
			if !slices.Contains(ts, want) {
				t.Errorf("%s: no legend %q in %q", m.Metric, want, ts)
			}
		}
		// The short prompt's prompt rate is left out of both runs.
		dots := 12
		if m.Metric == contract.MetricPromptTPS {
			dots = 6
		}
		if got := len(root.all("circle")); got != dots {
			t.Errorf("%s: %d sample dots, want %d", m.Metric, got, dots)
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for i := 0; i < 2; i++ {
		a, err1 := ForRun(typical("run-a", 1))
		b, err2 := ForRun(typical("run-a", 1))
		p, err3 := ForPair(typical("run-a", 1), typical("run-b", 2))
		q, err4 := ForPair(typical("run-a", 1), typical("run-b", 2))
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			t.Fatal(err1, err2, err3, err4)
		}
		for _, m := range Metrics() {
			if !bytes.Equal(a[m.Metric], b[m.Metric]) || !bytes.Equal(p[m.Metric], q[m.Metric]) {
				t.Errorf("%s: two renders differ", m.Metric)
			}
		}
	}
}

func TestEscapes(t *testing.T) {
	t.Parallel()
	base, cand := typical(`<script>alert(1)</script>`, 1), typical("cand\x1b]0;x\x07", 1)
	cs, err := ForPair(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	s := summary("performance", "x", contract.MetricTTFT, []string{"a"}, []float64{0.42})
	one, err := SVG(Chart{Title: `<b>"t"</b>`, Metric: contract.MetricTTFT, Bars: []Bar{{Label: `<script>alert("x")</script>&`, Stat: &s, Samples: []float64{0.42}}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"pair": cs[contract.MetricTTFT], "label": one} {
		check(t, b)
		if strings.Contains(string(b), "<script") || strings.Contains(string(b), "<b>") || strings.Contains(string(b), "\x1b") {
			t.Errorf("%s: unescaped markup or control character:\n%s", name, b)
		}
		if !strings.Contains(string(b), "&lt;script&gt;") {
			t.Errorf("%s: the label is not shown escaped:\n%s", name, b)
		}
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	cs, err := ForRun(typical("run-a", 1))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ForPair(typical("run-a", 1), typical("run-b", 1.3))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{
		"run-prompt_tps.svg": cs[contract.MetricPromptTPS],
		"pair-ttft_s.svg":    pair[contract.MetricTTFT],
	} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
		}
	}
}
