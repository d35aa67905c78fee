package benchrun

import (
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestPreflightVerdict: a preflight that showed fixtures differ names the
// template and tokenizer, unless the engine's template is the bundle's:
// then its chat path changed what reached the template (Ollama's reading
// of the tools), and the verdict says the rendering differs.
func TestPreflightVerdict(t *testing.T) {
	t.Parallel()
	at := 350
	differs := []contract.PreflightFixture{{RequestID: "sanity-T1", FirstDifference: &at, FrozenTokens: 213}}
	for _, c := range []struct {
		name string
		pf   contract.Preflight
		want string
	}{
		{"another template", contract.Preflight{Verifiable: true, EngineTemplateSHA256: "aa", BundleTemplateSHA256: "bb", Fixtures: differs, Differ: 1},
			"the engine's own template and tokenizer DIFFER from the bundle"},
		{"the bundle's template", contract.Preflight{Verifiable: true, EngineTemplateSHA256: "bb", BundleTemplateSHA256: "bb", TemplateAgrees: true, Fixtures: differs, Differ: 1},
			"the engine's own rendering DIFFERS from the bundle's, with the bundle's chat template"},
		{"nothing shown", contract.Preflight{Verifiable: true, TemplateAgrees: true, Fixtures: []contract.PreflightFixture{{RequestID: "warmup", Problem: "HTTP 500"}}, Differ: 1},
			"the engine's own template and tokenizer were not checked against the bundle"},
	} {
		if got := preflightVerdict(&c.pf); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
