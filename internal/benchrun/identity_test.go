package benchrun

import (
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestTrackSaysTheRulesWords: a --track that is not one of the
// protocol's is a usage error in the words a profile's check uses.
func TestTrackSaysTheRulesWords(t *testing.T) {
	t.Parallel()
	fast := "fast"
	_, err := Declared{Track: &fast}.merge(nil)
	want := `--track "fast": expected "default" or "custom"`
	if err == nil || err.Error() != want || exitcode.Of(t.Context(), err) != exitcode.Usage {
		t.Errorf("merge: %v, want the usage error %q", err, want)
	}
}
