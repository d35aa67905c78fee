package measure_test

import (
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/measure"
)

// TestInputBoundCoversTheBundle holds InputBound's premise: every
// fixture's messages and tools are at most measure.InputFactor bytes per
// frozen token, so no tokenizer's count of them reaches the bound.
func TestInputBoundCoversTheBundle(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range b.SortedIDs() {
		f := b.Fixtures[id]
		n := len(f.Tools)
		for _, m := range f.Messages {
			n += len(m.Content)
		}
		if n > measure.InputFactor*f.InputTokens {
			t.Errorf("%s: %d bytes of messages and tools for %d frozen tokens, more than %d per token", id, n, f.InputTokens, measure.InputFactor)
		}
	}
}
