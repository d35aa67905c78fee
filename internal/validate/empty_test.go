package validate

import (
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/internal/contract"
)

// TestAnEmptyStringIsNoUnknownValue: "Unavailable values are null, not
// zero, empty strings": an empty string planted where strata writes a
// value, in the contract or in extensions, is a violation at its pointer;
// one the engine itself sent, kept as it sent it, is its value.
func TestAnEmptyStringIsNoUnknownValue(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	for _, c := range []struct {
		ptr   string
		plant func(doc map[string]any)
		says  string // the schema says it of the fields it allows null
	}{
		{contract.PtrModelQuantization, func(doc map[string]any) { at(doc, "model")["quantization"] = "" }, "is an empty string"},
		{contract.PtrEnergySource, func(doc map[string]any) { at(doc, "extensions", "energy")["source"] = "" }, "minLength"},
		{contract.PtrEngineDialectBudgetField, func(doc map[string]any) {
			at(doc, "extensions", "engine_dialect", "reasoning_budget")["field"] = ""
		}, "minLength"},
		{"/extensions/thinking/source", func(doc map[string]any) { at(doc, "extensions", "thinking")["source"] = "" }, "is an empty string"},
		{"/extensions/limitations/0", func(doc map[string]any) { at(doc, "extensions")["limitations"].([]any)[0] = "" }, "is an empty string"},
	} {
		t.Run(c.ptr, func(t *testing.T) {
			t.Parallel()
			fsys := folder(t, "baseline")
			editJSON(t, fsys, contract.ResultsFile, c.plant)
			mustCatch(t, fsys, b, c.ptr, c.says)
		})
	}
	t.Run("the engine's own empty string", func(t *testing.T) {
		t.Parallel()
		fsys := folder(t, "baseline")
		editJSON(t, fsys, contract.ResultsFile, func(doc map[string]any) {
			reported := at(doc, "extensions", "engine_config")["reported"].([]any)
			params := reported[0].(map[string]any)["values"].(map[string]any)["params"].(map[string]any)
			params["generation_prompt"] = "" // llama-server's /props says so
		})
		mustBeClean(t, fsys)
	})
}

// mustBeClean validates a folder and wants no violation at all.
func mustBeClean(t *testing.T, fsys fstest.MapFS) {
	t.Helper()
	rehash(t, fsys)
	for _, v := range FS(fsys, bundle(t)).Violations {
		t.Errorf("violation: %s", v)
	}
}
