package contract

import "testing"

// TestDroppedText: the sentence a run and a folder's README say of the
// readings the sampler dropped, one reason after another.
func TestDroppedText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dropped []DroppedReadings
		want    string
	}{
		{nil, ""},
		{[]DroppedReadings{{Reason: "not a finite number", Count: 1}}, "1 power reading dropped (1 not a finite number)"},
		{[]DroppedReadings{{Reason: "not a finite number", Count: 5}, {Reason: "a negative draw", Count: 2}},
			"7 power readings dropped (5 not a finite number; 2 a negative draw)"},
	} {
		if got := DroppedText(c.dropped); got != c.want {
			t.Errorf("%v: %q, want %q", c.dropped, got, c.want)
		}
	}
}
