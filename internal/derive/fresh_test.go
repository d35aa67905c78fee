package derive

import (
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestFreshness: an engine is shown freshly loaded when strata started it
// or it had answered no request; one that had answered some, or whose
// count is unknown, is not, and the words say which.
func TestFreshness(t *testing.T) {
	t.Parallel()
	zero, two := int64(0), int64(2)
	for _, c := range []struct {
		name  string
		e     *contract.Engine
		fresh bool
		says  string
	}{
		{"started by strata", &contract.Engine{StartedByRunner: true}, true, "freshly loaded: strata started it for this run"},
		{"serving, no request answered", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Answered: &zero}},
			true, "already serving, not started by strata; it had answered no request before this run"},
		{"serving, two answered", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Answered: &two}},
			false, "already serving, not started by strata; not freshly loaded: it had answered 2 requests before this run"},
		{"serving, at least one", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Reason: "not freshly loaded: it had answered at least one request before this run"}},
			false, "already serving, not started by strata; not freshly loaded: it had answered at least one request before this run"},
		{"serving, unknown", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Reason: "the engine's /metrics has no request or token counters"}},
			false, "already serving, not started by strata; whether it was freshly loaded is unknown: the engine's /metrics has no request or token counters"},
		{"serving, nothing recorded", &contract.Engine{}, false, "already serving, not started by strata; what it had answered before this run is not recorded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Fresh(c.e); got != c.fresh {
				t.Errorf("Fresh %v, want %v", got, c.fresh)
			}
			if got := Freshness(c.e); got != c.says {
				t.Errorf("Freshness %q, want %q", got, c.says)
			}
		})
	}
}
