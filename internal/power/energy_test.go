package power

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/record"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestJoules: the trapezoid over the readings inside the window, its edges
// interpolated, each value computed by hand.
func TestJoules(t *testing.T) {
	t.Parallel()
	// 100 W at 0 s, 200 W at 1 s, 100 W at 2 s, 300 W at 3 s.
	rs := []Reading{{0, 0, 100}, {1, 0, 200}, {2, 0, 100}, {3, 0, 300}}
	for _, c := range []struct {
		name     string
		from, to float64
		want     float64
		why      string
	}{
		{"on readings", 0, 2, 150 + 150, ""},
		// 0.5 s → 150 W, 1 s → 200 W, 2 s → 100 W, 2.5 s → 200 W:
		// 0.5×(150+200)/2 + 1×(200+100)/2 + 0.5×(100+200)/2 = 87.5+150+75.
		{"edges interpolated", 0.5, 2.5, 312.5, ""},
		// Inside one interval: 1.25 s → 175 W, 1.75 s → 125 W: 0.5×150.
		{"between two readings", 1.25, 1.75, 75, ""},
		{"the whole trace", 0, 3, 150 + 150 + 200, ""},
		{"starts before the first reading", -0.1, 1, 0, "start"},
		{"ends after the last reading", 2, 3.1, 0, "end"},
	} {
		got, why := Joules(rs, c.from, c.to)
		if c.why != "" {
			if !strings.Contains(why, c.why) {
				t.Errorf("%s: reason %q, want one about the window's %s", c.name, why, c.why)
			}
			continue
		}
		if why != "" || !approx(got, c.want) {
			t.Errorf("%s: %v J (%q), want %v", c.name, got, why, c.want)
		}
	}
}

// TestWindow: the GPUs' joules add up; a window shorter than three
// sampling intervals, or one a GPU does not cover, has none, with why.
func TestWindow(t *testing.T) {
	t.Parallel()
	s := ByGPU([]Reading{{0, 0, 100}, {0, 1, 50}, {1, 0, 100}, {1, 1, 50}, {2, 0, 100}, {2, 1, 50}, {3, 0, 100}})
	j, why := Window(s, []int{0, 1}, 0, 0.9, 0.3)
	if j == nil || !approx(*j, 0.9*150) {
		t.Errorf("0.9 s at 150 W: %v (%q)", j, why)
	}
	if j, why := Window(s, []int{0, 1}, 0, 0.89, 0.3); j != nil || !strings.Contains(why, "shorter than 3 sampling intervals (3 × 0.3 s)") {
		t.Errorf("shorter than three intervals: %v %q", j, why)
	}
	if j, why := Window(s, []int{0, 1}, 1, 2.5, 0.1); j != nil || !strings.HasPrefix(why, "GPU 1: no power reading at or after the window's end") {
		t.Errorf("GPU 1 stops at 2 s: %v %q", j, why)
	}
}

// TestIdle: the mean draw before the warm-up (t < 0), summed over GPUs.
func TestIdle(t *testing.T) {
	t.Parallel()
	s := ByGPU([]Reading{{-0.2, 0, 30}, {-0.1, 0, 40}, {-0.1, 1, 20}, {0, 0, 900}, {0.1, 1, 900}})
	if w, why := Idle(s, []int{0, 1}); w == nil || !approx(*w, 35+20) {
		t.Errorf("idle %v (%q), want 55 W", w, why)
	}
	if w, why := Idle(s, []int{0, 2}); w != nil || why != "GPU 2 has no power reading before the warm-up" {
		t.Errorf("a GPU without readings before the warm-up: %v %q", w, why)
	}
}

// TestCSVRoundTrip: the samples artifact reads back exactly, so the
// validator derives the very joules assembly wrote; a bad line is refused.
func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rs := []Reading{{-0.123456789012345, 0, 61.2}, {0.1 + 0.2, 1, 1e-7}, {1234.5, 0, 0}}
	got, err := ParseCSV(FormatCSV(rs))
	if err != nil || len(got) != 3 {
		t.Fatal(got, err)
	}
	for i := range rs {
		if got[i] != rs[i] {
			t.Errorf("line %d: %+v, want %+v", i+2, got[i], rs[i])
		}
	}
	for _, bad := range []string{"t,gpu,w\n", CSVHeader + "\n1,0\n", CSVHeader + "\n1,0,-5\n", CSVHeader + "\n1,x,5\n", CSVHeader + "\nNaN,0,5\n"} {
		if _, err := ParseCSV([]byte(bad)); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
}

// TestParseCSVReadsOnlyTheCanonicalForm: the samples artifact is read only
// in the exact bytes FormatCSV writes: rows in time order (a GPU's before
// a higher one's at the same instant), each once, each number in its
// shortest form, "\n" line ends. Every other spelling of the same
// readings is refused, naming its line.
func TestParseCSVReadsOnlyTheCanonicalForm(t *testing.T) {
	t.Parallel()
	canonical := FormatCSV([]Reading{{-0.5, 0, 61.2}, {-0.5, 1, 30}, {0.25, 0, 100}, {0.25, 1, 35.5}, {1, 0, 0}})
	if _, err := ParseCSV(canonical); err != nil {
		t.Fatalf("the canonical form: %v", err)
	}
	for _, c := range []struct{ name, data, line string }{
		{"rows reordered", "t_s,gpu,w\n-0.5,0,61.2\n0.25,0,100\n-0.5,1,30\n0.25,1,35.5\n1,0,0\n", "line 4"},
		{"GPUs of one instant reordered", "t_s,gpu,w\n-0.5,1,30\n-0.5,0,61.2\n0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 3"},
		{"a row duplicated", "t_s,gpu,w\n-0.5,0,61.2\n-0.5,1,30\n-0.5,1,30\n0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 4"},
		{"a draw with a trailing zero", "t_s,gpu,w\n-0.5,0,61.20\n-0.5,1,30\n0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 2"},
		{"a draw with an exponent", "t_s,gpu,w\n-0.5,0,61.2\n-0.5,1,3e1\n0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 3"},
		{"a time with a plus sign", "t_s,gpu,w\n-0.5,0,61.2\n-0.5,1,30\n+0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 4"},
		{"a GPU with a leading zero", "t_s,gpu,w\n-0.5,0,61.2\n-0.5,01,30\n0.25,0,100\n0.25,1,35.5\n1,0,0\n", "line 3"},
		{"CRLF line ends", strings.ReplaceAll(string(canonical), "\n", "\r\n"), "line 1"},
		{"no final line end", strings.TrimSuffix(string(canonical), "\n"), "line 6"},
		{"a blank line at the end", string(canonical) + "\n", "line 7"},
		{"a draw above MaxW", "t_s,gpu,w\n-0.5,0,61.2\n-0.5,1,10000.5\n", "line 3"},
	} {
		_, err := ParseCSV([]byte(c.data))
		if err == nil || !strings.HasPrefix(err.Error(), c.line+":") {
			t.Errorf("%s: %v, want an error at %s", c.name, err, c.line)
		}
	}
}

// TestReadingsAreInCanonicalOrder: readings of two GPUs stamped at the
// same instant are written the lower GPU first, so the artifact strata
// writes is always the one form the validator reads.
func TestReadingsAreInCanonicalOrder(t *testing.T) {
	t.Parallel()
	origin := time.Unix(1000, 0)
	tr := record.PowerTrace{Samples: []record.PowerSample{{At: origin, GPU: 1, W: 30}, {At: origin, GPU: 0, W: 60}, {At: origin.Add(time.Millisecond), GPU: 1, W: 31}}}
	got := Readings(tr, origin)
	if want := []Reading{{0, 0, 60}, {0, 1, 30}, {0.001, 1, 31}}; !slices.Equal(got, want) {
		t.Errorf("readings %v, want %v", got, want)
	}
	if _, err := ParseCSV(FormatCSV(got)); err != nil {
		t.Errorf("the artifact strata writes is refused: %v", err)
	}
}

// TestMaxCSVBytesHoldsTheLongestLine: the longest line strata can write
// (the longest time and draw in shortest form, a three-digit GPU) fits
// the bound the validator reads power.csv under.
func TestMaxCSVBytesHoldsTheLongestLine(t *testing.T) {
	t.Parallel()
	longest := FormatCSV([]Reading{{-1.2345678901234567e-05, 999, 1.2345678901234567e-05}})
	if line := len(longest) - len(CSVHeader) - 1; line > maxLineBytes {
		t.Errorf("a line of %d bytes, over the bound of %d", line, maxLineBytes)
	}
	if got, want := MaxCSVBytes(2), int64(len(CSVHeader)+1+2*MaxReadings*maxLineBytes); got != want {
		t.Errorf("MaxCSVBytes(2) = %d, want %d", got, want)
	}
}
