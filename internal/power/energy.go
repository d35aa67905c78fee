package power

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// Reading is a sample on the run's clock: seconds from the warm-up's
// dispatch (negative before it: the idle baseline), the GPU and its watts.
// It is what the samples artifact keeps, and what energy is derived from.
type Reading struct {
	T   float64
	GPU int
	W   float64
}

// Readings places a trace's samples on the run's clock (origin: the
// warm-up's dispatch), in the samples artifact's order: by time, a lower
// GPU first at one instant (the sampler keeps one reading of a GPU an
// instant, so no two rows tie).
func Readings(tr record.PowerTrace, origin time.Time) []Reading {
	out := make([]Reading, 0, len(tr.Samples))
	for _, s := range tr.Samples {
		out = append(out, Reading{T: s.At.Sub(origin).Seconds(), GPU: s.GPU, W: s.W})
	}
	sort.SliceStable(out, func(i, j int) bool { return before(out[i], out[j]) })
	return out
}

// before is the samples artifact's order: time, then GPU.
func before(a, b Reading) bool { return a.T < b.T || a.T == b.T && a.GPU < b.GPU }

// CSVHeader is the samples artifact's first line.
const CSVHeader = "t_s,gpu,w"

// FormatCSV writes readings as the samples artifact: each number in the
// shortest form that reads back exactly, so a validator derives the same
// joules from the file as assembly did from memory.
func FormatCSV(rs []Reading) []byte {
	b := make([]byte, 0, len(CSVHeader)+1+len(rs)*24)
	b = append(b, CSVHeader+"\n"...)
	for _, r := range rs {
		b = appendReading(b, r)
		b = append(b, '\n')
	}
	return b
}

// appendReading is one reading's line, without its line end.
func appendReading(b []byte, r Reading) []byte {
	b = strconv.AppendFloat(b, r.T, 'g', -1, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.GPU), 10)
	b = append(b, ',')
	return strconv.AppendFloat(b, r.W, 'g', -1, 64)
}

// ParseCSV reads the samples artifact in its one form, the bytes
// FormatCSV writes: the header, then one reading a line, each line ended
// by "\n" and spelled as FormatCSV spells it, each draw one the sampler
// keeps, the rows in the artifact's order and each once. So a reordered,
// repeated or respelled reading is refused, not read as the same trace.
// Line numbers in errors count from 1.
func ParseCSV(data []byte) ([]Reading, error) {
	rest, ok := bytes.CutPrefix(data, []byte(CSVHeader+"\n"))
	if !ok {
		return nil, fmt.Errorf("line 1: want the header %q and a \"\\n\"", CSVHeader)
	}
	var out []Reading
	var line, form []byte
	for n := 2; len(rest) > 0; n++ {
		if line, rest, ok = bytes.Cut(rest, []byte("\n")); !ok {
			return nil, fmt.Errorf("line %d: %q has no line end", n, line)
		}
		r, err := parseReading(string(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if form = appendReading(form[:0], r); !bytes.Equal(form, line) {
			return nil, fmt.Errorf("line %d: %q is not the form strata writes of that reading, %q", n, line, form)
		}
		if len(out) > 0 && !before(out[len(out)-1], r) {
			return nil, fmt.Errorf("line %d: the reading is not after line %d's (the rows go by time, a lower GPU first at one instant, each once)", n, n-1)
		}
		out = append(out, r)
	}
	return out, nil
}

// Kept says which of the sampler's bounds the readings break, with the
// line of the samples artifact ("" when none): a reading of a GPU that
// was not sampled, or more than MaxReadings of one GPU.
func Kept(rs []Reading, gpus []int) string {
	n := map[int]int{}
	for i, r := range rs {
		if !slices.Contains(gpus, r.GPU) {
			return fmt.Sprintf("line %d: GPU %d is not one of the sampled GPUs %v", i+2, r.GPU, gpus)
		}
		if n[r.GPU]++; n[r.GPU] > MaxReadings {
			return fmt.Sprintf("line %d: GPU %d has more than the %d readings a trace keeps", i+2, r.GPU, MaxReadings)
		}
	}
	return ""
}

// CheckDropped holds a trace's dropped counts to the sampler's rules and
// its readings: each reason one of DropReasons, in their order and once,
// counting at least one, and DropCap only beside a GPU that holds
// MaxReadings. It returns the index of the first count that breaks them
// and why (-1, "" when none).
func CheckDropped(dropped []contract.DroppedReadings, rs []Reading) (int, string) {
	reasons := DropReasons()
	last := -1
	for i, d := range dropped {
		k := slices.Index(reasons, d.Reason)
		switch {
		case k < 0:
			return i, fmt.Sprintf("%q is not a reason the sampler drops a reading for (%s)", d.Reason, strings.Join(reasons, "; "))
		case k <= last:
			return i, fmt.Sprintf("%q is not after %q: the counts go in the sampler's order, each reason once", d.Reason, reasons[last])
		case d.Count < 1:
			return i, fmt.Sprintf("counts %d readings; a reason is listed only for readings it dropped", d.Count)
		case d.Reason == DropCap && !atCap(rs):
			return i, fmt.Sprintf("says readings were dropped past the cap, but no GPU holds %d readings", MaxReadings)
		}
		last = k
	}
	return -1, ""
}

// atCap says a GPU holds MaxReadings readings.
func atCap(rs []Reading) bool {
	n := map[int]int{}
	for _, r := range rs {
		if n[r.GPU]++; n[r.GPU] == MaxReadings {
			return true
		}
	}
	return false
}

// maxLineBytes bounds a line of the samples artifact: the longest time
// (23 characters, "-1.2345678901234567e-05"), a three-digit GPU index and
// the longest draw (22), with two commas and the line end, are 51.
const maxLineBytes = 64

// MaxCSVBytes is the largest samples artifact of gpus GPUs the sampler
// can fill: each at MaxReadings.
func MaxCSVBytes(gpus int) int64 {
	return int64(len(CSVHeader)+1) + int64(gpus)*MaxReadings*maxLineBytes
}

// parseReading reads "t_s,gpu,w".
func parseReading(line string) (Reading, error) {
	f := strings.Split(line, ",")
	if len(f) != 3 {
		return Reading{}, fmt.Errorf("want t_s,gpu,w, got %q", line)
	}
	t, err1 := strconv.ParseFloat(f[0], 64)
	g, err2 := strconv.Atoi(f[1])
	w, err3 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return Reading{}, fmt.Errorf("%q is not a time in seconds, a GPU index and a draw in watts", line)
	}
	if why := checkDraw(w); why != "" {
		return Reading{}, fmt.Errorf("%q: the draw is %s, a reading the sampler drops", line, why)
	}
	return Reading{T: t, GPU: g, W: w}, nil
}

// Series are the readings by GPU, each in time order.
type Series map[int][]Reading

// ByGPU groups readings by GPU, each in time order.
func ByGPU(rs []Reading) Series {
	s := Series{}
	for _, r := range rs {
		s[r.GPU] = append(s[r.GPU], r)
	}
	for g := range s {
		sort.SliceStable(s[g], func(i, j int) bool { return s[g][i].T < s[g][j].T })
	}
	return s
}

// at is the draw at t, interpolated between the readings around it; ok is
// false when t lies outside the readings.
func at(rs []Reading, t float64) (float64, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].T >= t })
	switch {
	case i == len(rs):
		return 0, false
	case rs[i].T == t:
		return rs[i].W, true
	case i == 0:
		return 0, false
	}
	a, b := rs[i-1], rs[i]
	return a.W + (b.W-a.W)*(t-a.T)/(b.T-a.T), true
}

// Joules is the energy of one GPU's readings over [from, to]: the
// trapezoid over the readings inside, the edges interpolated from the
// readings around them. A window the readings do not cover has no value,
// and the reason says which edge is missing.
func Joules(rs []Reading, from, to float64) (float64, string) {
	wFrom, ok := at(rs, from)
	if !ok {
		return 0, "no power reading at or before the window's start and after it"
	}
	wTo, ok := at(rs, to)
	if !ok {
		return 0, "no power reading at or after the window's end and before it"
	}
	j, t, w := 0.0, from, wFrom
	for _, r := range rs {
		if r.T <= from || r.T >= to {
			continue
		}
		j += (r.T - t) * (w + r.W) / 2
		t, w = r.T, r.W
	}
	return j + (to-t)*(w+wTo)/2, ""
}

// MinIntervals is the shortest window energy is given for, in sampling
// intervals: a shorter one rests on too few readings.
const MinIntervals = 3

// Window is the energy of all the GPUs over [from, to] (their sum), or nil
// with the reason: a window shorter than three sampling intervals, or one
// a GPU's readings do not cover.
func Window(s Series, gpus []int, from, to, interval float64) (*float64, string) {
	if d := to - from; d < MinIntervals*interval {
		return nil, fmt.Sprintf("the window is %s s, shorter than %d sampling intervals (%d × %s s)", fmtS(d), MinIntervals, MinIntervals, fmtS(interval))
	}
	total := 0.0
	for _, g := range gpus {
		j, why := Joules(s[g], from, to)
		if why != "" {
			return nil, fmt.Sprintf("GPU %d: %s", g, why)
		}
		total += j
	}
	return &total, ""
}

// Idle is the idle baseline: the mean draw of all the GPUs together over
// the readings before the warm-up (t < 0), each GPU's mean summed; nil with
// the reason when a GPU has none.
func Idle(s Series, gpus []int) (*float64, string) {
	total := 0.0
	for _, g := range gpus {
		sum, n := 0.0, 0
		for _, r := range s[g] {
			if r.T < 0 {
				sum += r.W
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Sprintf("GPU %d has no power reading before the warm-up", g)
		}
		total += sum / float64(n)
	}
	return &total, ""
}

func fmtS(s float64) string { return strconv.FormatFloat(s, 'g', 4, 64) }
