package record

import (
	"encoding/json"
	"strings"
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

// TestEventsAreWrittenAsTheirEvents: a trace written whole is its events
// each written as [seconds, kind] to the microsecond, in one array (null
// for none), and reads back as it was.
func TestEventsAreWrittenAsTheirEvents(t *testing.T) {
	t.Parallel()
	es := Events{{0.0012344, EvHeaders}, {1.5, "reasoning"}, {12.0000006, EvEnd}}
	var each []string
	for _, e := range es {
		b, _ := json.Marshal(e)
		each = append(each, string(b))
	}
	got, err := json.Marshal(Outcome{Events: es})
	if want := `"Events":[` + strings.Join(each, ",") + "]"; err != nil || !strings.Contains(string(got), want) ||
		!strings.Contains(string(got), `[0.001234,"headers"],[1.500000,"reasoning"],[12.000001,"end"]`) {
		t.Errorf("%s, want %s", got, want)
	}
	var back Outcome
	if err := json.Unmarshal(got, &back); err != nil || len(back.Events) != 3 || back.Events[1] != es[1] {
		t.Errorf("read back %+v, %v", back.Events, err)
	}
	if none, _ := json.Marshal(Outcome{}); !strings.Contains(string(none), `"Events":null`) {
		t.Errorf("no trace: %s", none)
	}
}
