package humanize

import (
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

func TestNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want string
	}{
		{Rate(1964.4), "1,964 tok/s"},
		{Rate(5.4e6), "5.40 M tok/s"},
		{Rate(54e6), "54.0 M tok/s"},
		{Rate(42), "42.0 tok/s"},
		{Rate(20000), "20,000 tok/s"},
		{Rate(0.5), "0.500 tok/s"},
		{Rate(0), "0 tok/s"},
		{Seconds(0.42), "0.420 s"},
		{Seconds(4.2), "4.20 s"},
		{Seconds(1234.5), "1,234 s"},
		{Seconds(0.0042), "0.0042 s"},
		{Seconds(-0.00004), "-0.000040 s"},
		{Seconds(0.0000001), "0.000000 s"},
		{Number(-1234.5), "-1,234"},
		{Grouped(1234567.891, 2), "1,234,567.89"},
		{Bytes(512), "512 B"},
		{Bytes(1_500_000), "1.50 MB"},
		{Bytes(17_600_000_000), "17.6 GB"},
		{Bytes(1_234_000_000_000), "1,234 GB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestCell(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	s := &contract.Summary{Metric: contract.MetricPromptTPS, Median: f(5.4e6), Min: f(5.4e6), Max: f(5.8e6), N: 3}
	if got, want := Cell(s), "5.40 M tok/s (5.40 M–5.80 M tok/s, n=3)"; got != want {
		t.Errorf("Cell = %q, want %q", got, want)
	}
	s = &contract.Summary{Metric: contract.MetricTTFT, Median: f(0.42), Min: f(0.4), Max: f(0.5), N: 3}
	if got, want := Cell(s), "0.420 s (0.400–0.500 s, n=3)"; got != want {
		t.Errorf("Cell = %q, want %q", got, want)
	}
	if got := Cell(nil); got != "not measured (n=0)" {
		t.Errorf("Cell(nil) = %q", got)
	}
}

func TestTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		top  float64
		want string
	}{
		{44800, "0 10k 20k 30k 40k 50k"},
		{2e4, "0 5k 10k 15k 20k"},
		{0.42, "0 0.1 0.2 0.3 0.4 0.5"},
		{1964, "0 500 1,000 1,500 2,000"},
		{5.8e6, "0 2M 4M 6M"},
		{2.2e6, "0 0.5M 1.0M 1.5M 2.0M 2.5M"},
		{3, "0 1 2 3"},
		{0.07, "0 0.02 0.04 0.06 0.08"},
	} {
		ts := Ticks(c.top, 4)
		labels := TickLabels(ts)
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("Ticks(%g) = %q, want %q", c.top, got, c.want)
		}
		if ts[len(ts)-1] < c.top {
			t.Errorf("Ticks(%g) ends below the top", c.top)
		}
		for _, l := range labels {
			if strings.Contains(l, "e+") || strings.Contains(l, "e-") {
				t.Errorf("tick %q in exponent notation", l)
			}
		}
	}
}

// TestReadout: the README's tables and the charts write a summary in one
// format, without its unit (the column or the chart's title names it).
func TestReadout(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		s    *contract.Summary
		want string
	}{
		{&contract.Summary{Metric: contract.MetricPromptTPS, Median: f(20000), Min: f(20000), Max: f(20000), N: 3}, "20,000 (20,000–20,000, n=3)"},
		{&contract.Summary{Metric: contract.MetricPromptTPS, Median: f(5.4e6), Min: f(5.4e6), Max: f(5.8e6), N: 3}, "5.40 M (5.40 M–5.80 M, n=3)"},
		{&contract.Summary{Metric: contract.MetricDecodeTPS, Median: f(898.46), Min: f(700.2), Max: f(898.9), N: 3}, "898 (700–899, n=3)"},
		{&contract.Summary{Metric: contract.MetricTTFT, Median: f(0.42), Min: f(0.4), Max: f(0.5), N: 3}, "0.420 (0.400–0.500, n=3)"},
		{&contract.Summary{Metric: contract.MetricJoules, Median: f(42), Min: f(40), Max: f(44), N: 3}, "42.0 (40.0–44.0, n=3)"},
		{&contract.Summary{Metric: contract.MetricTTFT, N: 0}, "not measured (n=0)"},
		{nil, "not measured (n=0)"},
	} {
		if got := Readout(c.s); got != c.want {
			t.Errorf("Readout = %q, want %q", got, c.want)
		}
	}
}

// TestLeftOut: the prompt rate of the short prompt's cases (short, and the
// concurrency stage's short-burst) is left out of the readouts as fixed
// cost; every other case and metric is shown.
func TestLeftOut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		caseID, metric, want string
	}{
		{"short", contract.MetricPromptTPS, "left out (fixed cost)"},
		{"short-burst", contract.MetricPromptTPS, "left out (fixed cost)"},
		{"short", contract.MetricDecodeTPS, ""},
		{"short", contract.MetricTTFT, ""},
		{"prompt-4k", contract.MetricPromptTPS, ""},
		{"prompt-16k", contract.MetricPromptTPS, ""},
	} {
		if got := LeftOut(c.caseID, c.metric); got != c.want {
			t.Errorf("LeftOut(%s, %s) = %q, want %q", c.caseID, c.metric, got, c.want)
		}
	}
}
