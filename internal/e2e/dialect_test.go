package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestDialects: the simulator speaks as each engine the dialect layer
// knows, so every decision has a fast test: what budget each is sent, what
// its reading of that value does to thinking, and what the result says.
func TestDialects(t *testing.T) {
	t.Parallel()
	as := func(dialectName string, build, serverBudget int) func(*simengine.Config) {
		return func(c *simengine.Config) {
			c.Dialect, c.Build, c.ReasoningBudget = dialectName, build, &serverBudget
			c.ReasoningTokens = 40
		}
	}
	profile := func(args ...string) dialect.EngineView {
		return dialect.EngineView{Args: args, Env: []string{}, Where: "the command line and environment of the engine the runner started"}
	}
	for _, c := range []struct {
		name      string
		sim       func(*simengine.Config)
		view      dialect.EngineView
		engine    dialect.Engine
		budget    int
		state     string
		reasoning int // reasoning tokens the warm-up got (the engine's own reading of the budget)
		nonconf   string
		readme    string
	}{
		{"llama.cpp b10470 with a server budget of 0", as(simengine.DialectLlamaCpp, 10470, 0), profile("--reasoning-budget", "0"),
			dialect.LlamaCpp, dialect.LlamaNoBudget, "overridden per request", 40, "", "reasoning arrived on all 22"},
		{"llama.cpp b9982, the first build that reads the field", as(simengine.DialectLlamaCpp, 9982, -1), dialect.EngineView{},
			dialect.LlamaCpp, dialect.LlamaNoBudget, "overridden per request", 40, "", "reasoning arrived on all 22"},
		{"llama.cpp b9981 with a budget in its command line", as(simengine.DialectLlamaCpp, 9981, 8), profile("--reasoning-budget", "8"),
			dialect.LlamaCpp, dialect.LlamaNoBudget, "limited", 8, "--reasoning-budget 8", "reasoning arrived on all 22"},
		{"llama.cpp b9928 without a visible command line", as(simengine.DialectLlamaCpp, 9928, -1), dialect.EngineView{},
			dialect.LlamaCpp, dialect.LlamaNoBudget, "not verifiable", 40, "", "reasoning arrived on all 22"},
		// Speaking as these two, the simulator's own version string is what
		// the engine reports, so the run is known to be simulated.
		{"Strata's server", as(simengine.DialectStrata, 0, -1), dialect.EngineView{},
			dialect.StrataServer, 0, "sent per request", 40, "simulated engine", "reasoning arrived on all 22"},
		{"an engine strata cannot identify", as(simengine.DialectUnknown, 0, -1), dialect.EngineView{},
			dialect.Unknown, 0, "not verifiable", 0, "simulated engine", "22 of 22 dispatched requests produced no reasoning"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := harness{scenario: &simengine.Scenario{Props: map[string]json.RawMessage{}}, sim: c.sim, view: c.view}.run(t)
			o.mustBeValid(t)
			ed := o.res.Extensions.EngineDialect
			if ed == nil || ed.Dialect.Engine != c.engine || ed.BudgetCheck.State != c.state {
				t.Errorf("engine dialect %+v", ed)
			}
			for id, out := range o.outs {
				var body map[string]json.RawMessage
				json.Unmarshal(out.Request, &body)
				if string(body["reasoning_budget_tokens"]) != itoa(c.budget) {
					t.Errorf("%s was sent reasoning_budget_tokens %s, want %d", id, body["reasoning_budget_tokens"], c.budget)
				}
				_, penalty := body["repeat_penalty"]
				if penalty != (c.engine == dialect.LlamaCpp) {
					t.Errorf("%s: repeat_penalty sent %v for %s", id, penalty, c.engine)
				}
			}
			if got := len(strings.Fields(*o.outs["warmup"].Reasoning)); got != c.reasoning {
				t.Errorf("the warm-up got %d reasoning tokens, want %d", got, c.reasoning)
			}
			reasons := o.reasons()
			if c.nonconf != "" && (o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(reasons, c.nonconf)) {
				t.Errorf("status %s, reasons %s", o.res.Run.Status, reasons)
			}
			if c.nonconf == "" && o.res.Run.Status != contract.StatusComplete {
				t.Errorf("status %s: %s", o.res.Run.Status, reasons)
			}
			readme, _ := os.ReadFile(filepath.Join(o.dir, contract.ReadmeFile))
			if !strings.Contains(string(readme), c.readme) {
				t.Errorf("README lacks %q", c.readme)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// keysAndPlaceholders walks results.json: strata writes no key with an
// upper-case letter (Go field names once leaked into extensions) and no
// empty-string placeholder (an unknown value is null with a reason, or
// left out of extensions with its reason beside it).
func keysAndPlaceholders(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	json.Unmarshal(data, &doc)
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				// Keys that are data keep their own form (request IDs such
				// as sanity-T1, JSON Pointers, engine option names); a key
				// starting with a capital is a Go field name.
				if k != "" && unicode.IsUpper(rune(k[0])) {
					t.Errorf("%s: key %q is a Go field name, not snake_case", ptr, k)
				}
				walk(ptr+"/"+k, c)
			}
		case []any:
			for i, c := range x {
				walk(ptr+"/"+itoa(i), c)
			}
		case string:
			if x == "" {
				t.Errorf("%s: an empty-string placeholder", ptr)
			}
		}
	}
	walk("", doc)
}

func TestNoGoNamesNoPlaceholders(t *testing.T) {
	t.Parallel()
	for _, sc := range []*simengine.Scenario{nil, {Requests: map[string]simengine.Behaviour{"sanity-R1": {Die: true}}}} {
		o := harness{scenario: sc, optional: true}.run(t)
		o.mustBeValid(t)
		keysAndPlaceholders(t, o.dir)
	}
}
