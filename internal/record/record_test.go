package record

import (
	"testing"
	"time"
)

// TestWallIsTheOriginPlusTheMonotonicTime: a run's wall times are its
// origin's wall reading plus the time since it on the run's clock, in UTC;
// with the injected clock of a test (no monotonic readings) the same
// arithmetic holds on the wall clock.
func TestWallIsTheOriginPlusTheMonotonicTime(t *testing.T) {
	t.Parallel()
	now := time.Now()
	fake := time.Date(2026, 12, 3, 13, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, c := range []struct {
		name   string
		origin time.Time
	}{{"the process clock", now}, {"an injected clock", fake}} {
		r := &Run{Origin: c.origin}
		for _, d := range []time.Duration{0, time.Microsecond, 1500 * time.Millisecond, 31 * time.Minute} {
			got := r.Wall(c.origin.Add(d))
			if want := c.origin.Round(0).Add(d).UTC(); !got.Equal(want) || got.Location() != time.UTC || got != got.Round(0) {
				t.Errorf("%s, +%v: %v, want %v in UTC without a monotonic reading", c.name, d, got, want)
			}
		}
	}
}
