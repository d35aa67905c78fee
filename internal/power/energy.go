package power

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
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
// warm-up's dispatch).
func Readings(tr Trace, origin time.Time) []Reading {
	out := make([]Reading, 0, len(tr.Samples))
	for _, s := range tr.Samples {
		out = append(out, Reading{T: s.At.Sub(origin).Seconds(), GPU: s.GPU, W: s.W})
	}
	return out
}

// CSVHeader is the samples artifact's first line.
const CSVHeader = "t_s,gpu,w"

// FormatCSV writes readings as the samples artifact: each number in the
// shortest form that reads back exactly, so a validator derives the same
// joules from the file as assembly did from memory.
func FormatCSV(rs []Reading) []byte {
	var b bytes.Buffer
	b.WriteString(CSVHeader + "\n")
	for _, r := range rs {
		b.WriteString(strconv.FormatFloat(r.T, 'g', -1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(r.GPU))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(r.W, 'g', -1, 64))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseCSV reads the samples artifact strictly: the header, then one
// reading a line (line numbers in errors count from 1).
func ParseCSV(data []byte) ([]Reading, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != CSVHeader {
		return nil, fmt.Errorf("line 1: want the header %q", CSVHeader)
	}
	var out []Reading
	for n := 2; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want t_s,gpu,w, got %q", n, sc.Text())
		}
		t, err1 := strconv.ParseFloat(f[0], 64)
		g, err2 := strconv.Atoi(f[1])
		w, err3 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || err3 != nil || math.IsNaN(t) || math.IsInf(t, 0) || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("line %d: %q is not a time in seconds, a GPU index and a draw in watts", n, sc.Text())
		}
		out = append(out, Reading{T: t, GPU: g, W: w})
	}
	return out, sc.Err()
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
