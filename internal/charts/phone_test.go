package charts

import (
	"slices"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
)

// withBurst is typical with the concurrency stage measured.
func withBurst(id string, k float64) *contract.Results {
	return results(id, map[string][]sample{
		protocol.CaseShort:      {{1890 * k, 41.2 * k, 0.081 / k}, {1964 * k, 42.0 * k, 0.078 / k}, {2011 * k, 42.9 * k, 0.090 / k}},
		protocol.CasePrompt4K:   {{19500 * k, 39.1 * k, 0.40 / k}, {20000 * k, 38.7 * k, 0.42 / k}, {20400 * k, 38.2 * k, 0.45 / k}},
		protocol.CasePrompt16K:  {{5.4e6 * k, 36.1 * k, 3.1 / k}, {5.5e6 * k, 35.7 * k, 3.2 / k}, {5.8e6 * k, 35.2 * k, 3.3 / k}},
		protocol.CaseShortBurst: {{1500 * k, 30.1 * k, 0.2 / k}, {1600 * k, 31.0 * k, 0.25 / k}, {1700 * k, 32.9 * k, 0.3 / k}},
	})
}

// everyChart is each chart of runs and pairs whose names run long: a
// CJK run ID, markup, a label far wider than the chart.
func everyChart(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	add := func(name string, cs map[string][]byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		for m, b := range cs {
			out[name+"/"+m] = b
		}
	}
	cs, err := ForRun(typical("run-a", 1))
	add("run", cs, err)
	cs, err = ForRun(withBurst("run-b", 1))
	add("run with burst", cs, err)
	cs, err = ForPair(withBurst(strings.Repeat("基準実行", 20), 1), typical(`<script>alert("x")</script>`+strings.Repeat("-long", 30), 1.3))
	add("pair", cs, err)
	s := summary("performance", "x", contract.MetricTTFT, []string{"a"}, []float64{0.42})
	one, err := SVG(Chart{Title: "A title far longer than a phone is wide, in several words", Metric: contract.MetricTTFT,
		Bars: []Bar{{Label: strings.Repeat("very-long-label-", 20), Stat: &s, Samples: []float64{0.42}}}})
	add("long", map[string][]byte{"ttft": one}, err)
	return out
}

// TestReadsOnAPhone: every chart is laid out Width wide, whatever its
// labels, with no text under 10 px: shown at its own width (a README on
// GitHub) or scaled up to a column at least that wide (the site's pages,
// from a 390 px phone on), no text of it is smaller than 10 CSS px.
func TestReadsOnAPhone(t *testing.T) {
	t.Parallel()
	for name, b := range everyChart(t) {
		root := check(t, b)
		if w := root.num(t, "width"); w != Width {
			t.Errorf("%s: %g wide, want %g", name, w, Width)
		}
		for _, e := range root.all("text") {
			size := 11.0
			if e.attr("font-size") != "" {
				size = e.num(t, "font-size")
			}
			if size < 10 {
				t.Errorf("%s: text %q at %g px", name, e.Text, size)
			}
		}
	}
}

// TestReadoutsAsTheReadme: each bar's value is written as the README's
// table writes it (humanize.Readout), and the short prompt's prompt rate
// the README leaves out is left out here too, in the same words, with no
// bar, and the axis is drawn for what is shown.
func TestReadoutsAsTheReadme(t *testing.T) {
	t.Parallel()
	r := withBurst("run-a", 1)
	cs, err := ForRun(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		root := check(t, cs[m.Metric])
		ts := texts(root)
		for _, k := range Cases(r) {
			want := humanize.Readout(r.Summary(k.Phase, k.ID, m.Metric))
			if out := humanize.LeftOut(k.ID, m.Metric); out != "" {
				want = out
				if slices.Contains(ts, humanize.Readout(r.Summary(k.Phase, k.ID, m.Metric))) {
					t.Errorf("%s: %s is left out of the README but charted", m.Metric, k.Label)
				}
			}
			if !slices.Contains(ts, want) {
				t.Errorf("%s %s: no value %q in %q", m.Metric, k.Label, want, ts)
			}
		}
	}
	// Two cases are left out of the prompt rate: two bars and their six
	// dots are drawn, and the axis ends at the 16k case's largest rate.
	root := check(t, cs[contract.MetricPromptTPS])
	if got := len(root.all("circle")); got != 6 {
		t.Errorf("prompt rate: %d dots, want 6 (short and short-burst left out)", got)
	}
	if got := strings.Join(ticks(root), " "); got != "0 2M 4M 6M" {
		t.Errorf("prompt rate: ticks %q, want 0 2M 4M 6M", got)
	}
}

// TestFiles: a run's charts as its folder holds them, one per charted
// metric, in Metrics order, the bytes ForRun draws.
func TestFiles(t *testing.T) {
	t.Parallel()
	r := typical("run-a", 1)
	files, err := Files(r)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ForRun(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, f := range files {
		names = append(names, f.Name)
		if m := Metrics()[i].Metric; f.Name != FileName(m) || string(f.Data) != string(cs[m]) {
			t.Errorf("file %d: %s, want %s with ForRun's bytes", i, f.Name, FileName(m))
		}
	}
	if got := strings.Join(names, " "); got != "chart-prompt_tps.svg chart-decode_tps.svg chart-ttft_s.svg" {
		t.Errorf("files %s", got)
	}
}
