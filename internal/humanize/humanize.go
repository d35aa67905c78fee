// Package humanize writes the result's numbers for people: a rate as
// "1,964 tok/s" or "5.40 M tok/s", a time as "0.42 s", never in %g
// notation, with a precision that suits the size of the number; and the
// "nice" ticks of a chart's axis (1, 2 or 5 times a power of ten). The
// result files keep every digit; this is only how they are shown.
package humanize

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// Grouped writes v with d decimals and thousands separated by commas.
func Grouped(v float64, d int) string {
	s := strconv.FormatFloat(v, 'f', d, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Number writes v with about three significant figures and no unit:
// 0.0042, 0.42, 4.20, 42.0, 420, 4,200, 42,000; from ten million on, with
// an M (12.3 M) so a runaway value stays short. The same magnitude always
// gets the same number of decimals, so a column reads evenly.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "not a number"
	case a >= 1e7:
		return Grouped(v/1e6, decimals(a/1e6)) + " M"
	default:
		return Grouped(v, decimals(a))
	}
}

func decimals(a float64) int {
	switch {
	case a == 0 || a >= 100:
		return 0
	case a >= 10:
		return 1
	case a >= 1:
		return 2
	case a >= 0.01:
		return 3
	}
	// Two significant figures of a small number, down to a millionth.
	return min(6, 1-int(math.Floor(math.Log10(a))))
}

// Rate writes a token rate: "1,964 tok/s", "42.0 tok/s", "5.40 M tok/s".
func Rate(v float64) string {
	if math.Abs(v) >= 1e6 && math.Abs(v) < 1e7 {
		return Grouped(v/1e6, 2) + " M tok/s"
	}
	return Number(v) + " tok/s"
}

// Seconds writes a duration in seconds: "0.420 s", "4.20 s", "1,234 s".
func Seconds(v float64) string { return Number(v) + " s" }

// Of writes v in the unit of a summary metric.
func Of(metric string, v float64) string {
	if u := energyUnit(metric); u != "" {
		return Number(v) + " " + u
	}
	if contract.Unit(metric) == contract.UnitRate {
		return Rate(v)
	}
	return Seconds(v)
}

// Cell writes a summary as "median (min–max, n=N)" in its metric's unit,
// or "not measured (n=0)".
func Cell(s *contract.Summary) string {
	if s == nil || s.N == 0 || s.Median == nil || s.Min == nil || s.Max == nil {
		return "not measured (n=0)"
	}
	lo, hi := Of(s.Metric, *s.Min), Of(s.Metric, *s.Max)
	unit := " " + UnitWord(s.Metric)
	if strings.HasSuffix(lo, unit) && strings.HasSuffix(hi, unit) {
		lo = strings.TrimSuffix(lo, unit)
	}
	return fmt.Sprintf("%s (%s–%s, n=%d)", Of(s.Metric, *s.Median), lo, hi, s.N)
}

// Readout writes a summary as the result folder's readouts show it (the
// README's tables and the charts, which name the unit in a column's head
// or a chart's title): "median (min–max, n=N)" in Of's numbers without the
// unit, or "not measured (n=0)". One format for both, so a chart and the
// table beside it never show one value two ways.
func Readout(s *contract.Summary) string {
	if s == nil || s.N == 0 || s.Median == nil || s.Min == nil || s.Max == nil {
		return "not measured (n=0)"
	}
	bare := func(v float64) string { return strings.TrimSuffix(Of(s.Metric, v), " "+UnitWord(s.Metric)) }
	return fmt.Sprintf("%s (%s–%s, n=%d)", bare(*s.Median), bare(*s.Min), bare(*s.Max), s.N)
}

// LeftOut is what the readouts (the README's tables and the charts) show
// in place of a case's metric they leave out, or "" for one they show.
// The short prompt (the short case, and the concurrency stage's
// short-burst, which sends it four at a time) is about 80 tokens, so its
// prompt rate measures the fixed cost of a request (the spec's "Reading it
// out"); results.json keeps it.
func LeftOut(caseID, metric string) string {
	if metric == contract.MetricPromptTPS && (caseID == protocol.CaseShort || caseID == protocol.CaseShortBurst) {
		return "left out (fixed cost)"
	}
	return ""
}

// UnitWord is the unit a metric's values are written in: "tok/s", "s",
// "J" or "tok/J".
func UnitWord(metric string) string {
	if u := energyUnit(metric); u != "" {
		return u
	}
	if contract.Unit(metric) == contract.UnitRate {
		return "tok/s"
	}
	return "s"
}

// energyUnit is the unit of an energy metric ("" for the others).
func energyUnit(metric string) string {
	switch metric {
	case contract.MetricJoules:
		return "J"
	case contract.MetricDecodeTokensPerJoule:
		return "tok/J"
	}
	return ""
}

// Ticks returns the axis ticks from 0 to at least top: about want steps of
// 1, 2 or 5 times a power of ten. The last tick is never below top, so a
// bar never runs past the axis.
func Ticks(top float64, want int) []float64 {
	if !(top > 0) || math.IsInf(top, 0) || want < 1 {
		return []float64{0}
	}
	raw := top / float64(want)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	// The step whose count of intervals is nearest want; on a tie the
	// smaller step, whose last tick lies closer to top.
	step, n := 0.0, 0
	for _, m := range []float64{1, 2, 5, 10} {
		k := int(math.Ceil(top/(m*mag) - 1e-9))
		if step == 0 || abs(k-want) < abs(n-want) {
			step, n = m*mag, k
		}
	}
	out := make([]float64, 0, n+1)
	for k := 0; k <= n; k++ {
		// Multiplying (not adding) keeps 0.1+0.2-style errors out of labels.
		out = append(out, math.Round(float64(k)*step/mag*1e6)/1e6*mag)
	}
	return out
}

func abs(k int) int { return max(k, -k) }

// TickLabels writes the labels of ticks from Ticks, as short as the step
// allows and alike along the axis (10k 20k, 0.5M 1.0M, 0.25); the axis
// title carries the unit.
func TickLabels(ts []float64) []string {
	out := make([]string, len(ts))
	if len(ts) < 2 {
		for i := range ts {
			out[i] = "0"
		}
		return out
	}
	step, last := ts[1]-ts[0], ts[len(ts)-1]
	for i, v := range ts {
		switch {
		case v == 0:
			out[i] = "0"
		case last >= 1e6:
			out[i] = Grouped(v/1e6, places(step/1e6)) + "M"
		case last >= 1e4 && math.Mod(step, 1000) == 0:
			out[i] = Grouped(v/1e3, 0) + "k"
		default:
			out[i] = Grouped(v, places(step))
		}
	}
	return out
}

// places is the number of decimals x needs (at most six).
func places(x float64) int {
	d := 0
	for d < 6 && math.Abs(x*math.Pow(10, float64(d))-math.Round(x*math.Pow(10, float64(d)))) > 1e-9 {
		d++
	}
	return d
}

// Count writes n with the noun in its number: "1 entry", "3 entries".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Grouped(float64(n), 0) + " " + many
}

// Bytes writes a size in decimal units: "512 B", "1.50 MB", "17.6 GB".
func Bytes(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB"} {
		if math.Abs(v) < 1000 || u == "GB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return Number(v) + " " + u
		}
		v /= 1000
	}
	return ""
}
