package site

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// Chart is one horizontal bar chart: a bar per case at the median, a
// whisker from min to max, and n. The geometry is computed here; the
// template draws it, so every label is escaped and the bytes are
// deterministic.
type Chart struct {
	Title, Unit string
	Width       int
	Height      int
	Bars        []Bar
	Ticks       []Tick
}

// Bar is one case.
type Bar struct {
	Label      string
	Y          int
	W          float64 // median bar width
	MinX, MaxX float64
	Value      string
	HasData    bool
}

// Tick is an axis mark.
type Tick struct {
	X     float64
	Label string
}

const (
	chartLeft  = 110.0
	chartWidth = 420.0
	barHeight  = 22
)

// Charts are the run page's charts: prompt rate, decode rate and TTFT per
// case with their ranges.
func Charts(r *contract.Results) []Chart {
	var out []Chart
	for _, m := range []struct{ metric, title string }{
		{contract.MetricPromptTPS, "Prompt rate"},
		{contract.MetricDecodeTPS, "Decode rate"},
		{contract.MetricTTFT, "Time to first token"},
	} {
		type item struct {
			label string
			s     *contract.Summary
		}
		var items []item
		for _, c := range protocol.PerformanceCases() {
			items = append(items, item{c, summary(r, "performance", c, m.metric)})
		}
		if r.Run.OptionalConcurrency {
			items = append(items, item{protocol.CaseShortBurst + " ×4", summary(r, "concurrency", protocol.CaseShortBurst, m.metric)})
		}
		top := 0.0
		for _, it := range items {
			if it.s != nil && it.s.Max != nil {
				top = max(top, *it.s.Max)
			}
		}
		ch := Chart{Title: m.title, Unit: contract.Unit(m.metric), Width: int(chartLeft + chartWidth + 150)}
		scale := 0.0
		if top > 0 {
			scale = chartWidth / top
		}
		for i, it := range items {
			b := Bar{Label: it.label, Y: 10 + i*(barHeight+10), Value: "not measured (n=0)"}
			if it.s != nil && it.s.N > 0 && it.s.Median != nil {
				b.HasData = true
				b.W = *it.s.Median * scale
				b.MinX, b.MaxX = chartLeft+*it.s.Min*scale, chartLeft+*it.s.Max*scale
				b.Value = fmt.Sprintf("%.3g %s (n=%d)", *it.s.Median, ch.Unit, it.s.N)
			}
			ch.Bars = append(ch.Bars, b)
		}
		ch.Height = 10 + len(items)*(barHeight+10) + 20
		for k := 0; k <= 4 && top > 0; k++ {
			v := top * float64(k) / 4
			ch.Ticks = append(ch.Ticks, Tick{X: chartLeft + v*scale, Label: fmt.Sprintf("%.3g", v)})
		}
		out = append(out, ch)
	}
	return out
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
