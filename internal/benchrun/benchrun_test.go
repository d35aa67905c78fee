package benchrun

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/procstate"
)

// TestRunNeedsAFinish: a run given nothing to write its folder with is
// refused before anything is checked or sent, not lost at its end.
func TestRunNeedsAFinish(t *testing.T) {
	t.Parallel()
	out, err := Run(context.Background(), procstate.State{}, Options{Target: Target{Simulate: true}})
	if out != nil || err == nil || !strings.Contains(err.Error(), "no Finish") {
		t.Errorf("Run: %v, %v; want a refusal naming the missing Finish", out, err)
	}
}
