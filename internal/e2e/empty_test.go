package e2e

import (
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestNoEmptyStringForAnUnknownValue: a complete folder, from the
// simulator as it is and from scripted servers of llama.cpp's, vLLM's and
// Ollama's shapes, holds no empty string in results.json but a value
// another party sent as one: what strata does not know is null with a
// reason. A final answer that is empty is evidence, and lives in
// outputs.jsonl.
func TestNoEmptyStringForAnUnknownValue(t *testing.T) {
	t.Parallel()
	engine := func(name string) func(*simengine.Config) {
		return func(c *simengine.Config) { c.Dialect = name }
	}
	for name, h := range map[string]harness{
		"the simulator": {simulated: true},
		"llama.cpp":     {},
		"vLLM":          {sim: engine(simengine.DialectVLLM)},
		"Ollama":        {sim: engine(simengine.DialectOllama)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := h.run(t)
			o.mustBeValid(t)
			for _, p := range resulttest.EmptyStrings(t, o.dir) {
				t.Errorf("%s is an empty string; an unknown value is null with a reason", p)
			}
		})
	}
}
