package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
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
	profile := func(args ...string) record.EngineView {
		return record.EngineView{Args: args, Env: []string{}, Where: "the command line and environment of the engine the runner started"}
	}
	for _, c := range []struct {
		name      string
		sim       func(*simengine.Config)
		view      record.EngineView
		engine    dialect.Engine
		budget    int
		state     string
		reasoning int // reasoning tokens the warm-up got (the engine's own reading of the budget)
		nonconf   string
		readme    string
	}{
		{"llama.cpp b10470 with a server budget of 0", as(simengine.DialectLlamaCpp, 10470, 0), profile("--reasoning-budget", "0"),
			dialect.LlamaCpp, dialect.LlamaNoBudget, "overridden per request", 40, "", "reasoning arrived on all 22"},
		{"llama.cpp b9982, the first build that reads the field", as(simengine.DialectLlamaCpp, 9982, -1), record.EngineView{},
			dialect.LlamaCpp, dialect.LlamaNoBudget, "overridden per request", 40, "", "reasoning arrived on all 22"},
		{"llama.cpp b9981 with a budget in its command line", as(simengine.DialectLlamaCpp, 9981, 8), profile("--reasoning-budget", "8"),
			dialect.LlamaCpp, dialect.LlamaNoBudget, "limited", 8, "--reasoning-budget 8", "reasoning arrived on all 22"},
		{"llama.cpp b9928 without a visible command line", as(simengine.DialectLlamaCpp, 9928, -1), record.EngineView{},
			dialect.LlamaCpp, dialect.LlamaNoBudget, "not verifiable", 40, "", "reasoning arrived on all 22"},
		// Speaking as these two, the simulator's own version string is what
		// the engine reports, so the run is known to be simulated.
		{"Strata's server", as(simengine.DialectStrata, 0, -1), record.EngineView{},
			dialect.StrataServer, 0, "sent per request", 40, "simulated engine", "reasoning arrived on all 22"},
		{"an engine strata cannot identify", as(simengine.DialectUnknown, 0, -1), record.EngineView{},
			dialect.Unknown, 0, "not verifiable", 0, "simulated engine", "22 of 22 dispatched requests produced no reasoning"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := harness{scenario: &simengine.Scenario{Props: map[string]json.RawMessage{}}, sim: c.sim, view: c.view}.run(t)
			o.mustBeValid(t)
			ed := o.res.Extensions.EngineDialect
			if ed == nil || ed.Dialect.Engine != string(c.engine) || ed.BudgetCheck.State != c.state {
				t.Errorf("engine dialect %+v", ed)
			}
			for id, out := range o.outs {
				var body map[string]json.RawMessage
				decode(t, id+"'s request", out.Request, &body)
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
	decode(t, contract.ResultsFile, data, &doc)
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

// TestTabbyAPIServerBudget: TabbyAPI from f1f2c85 reads
// reasoning_budget_tokens per request, and one absent (or negative) defers
// to the server's model.reasoning_budget_tokens, which no route shows
// (endpoints/OAI/utils/chat_completion.py @e632af4
// _resolve_reasoning_budget). Against a TabbyAPI with a server budget of 8
// every request carries 2147483647, so thinking runs its whole length; the
// engine is identified by /.well-known/serviceinfo, and the template its
// /props serves (endpoints/core/router.py l.137–156) is the result's,
// verified against the bundle's.
func TestTabbyAPIServerBudget(t *testing.T) {
	t.Parallel()
	budget := 8
	o := harness{sim: func(c *simengine.Config) {
		c.Dialect, c.ReasoningBudget, c.ReasoningTokens, c.PromptTPS = simengine.DialectTabbyAPI, &budget, 40, 5e5
	}}.run(t)
	o.mustBeValid(t)
	ed := o.res.Extensions.EngineDialect
	if ed == nil || ed.Dialect.Engine != string(dialect.TabbyAPI) || ed.BudgetCheck.State != "overridden per request" ||
		!strings.Contains(ed.Dialect.IdentifiedBy, ".well-known/serviceinfo") {
		t.Fatalf("engine dialect %+v", ed)
	}
	sent := 0
	for id, out := range o.outs {
		if len(out.Request) == 0 || string(out.Request) == "null" {
			continue
		}
		sent++
		var body map[string]json.RawMessage
		decode(t, id+"'s request", out.Request, &body)
		if string(body["reasoning_budget_tokens"]) != "2147483647" {
			t.Errorf("%s was sent reasoning_budget_tokens %s", id, body["reasoning_budget_tokens"])
		}
	}
	if sent != 22 {
		t.Errorf("%d requests sent", sent)
	}
	if got := len(strings.Fields(*o.outs["warmup"].Reasoning)); got < 40 {
		t.Errorf("the warm-up got %d reasoning tokens: the server budget of %d applied", got, budget)
	}
	_, sum, _ := prompts.Template(bundle(t))
	if tm := o.res.Configuration.Template; tm == nil || tm.SHA256 != sum {
		t.Errorf("template %+v, want the bundle's %s", tm, sum)
	}
	if r := o.reasons(); strings.Contains(r, "chat template is unknown") {
		t.Errorf("reasons %s", r)
	}
	// TabbyAPI's usage has no prompt_tokens_details until PR #452
	// (973b22b): the prompt rate is null, with that reason.
	for i, q := range o.res.Requests {
		if q.Phase == "performance" && q.Metrics.PromptTPS != nil {
			t.Errorf("%s prompt_tps %v without a cached count", q.ID, *q.Metrics.PromptTPS)
		}
		if why := o.res.Missing[contract.Pointer("requests", i, "metrics", "prompt_tps")]; q.Phase == "performance" && !strings.Contains(why, "PR #452") {
			t.Errorf("%s prompt_tps null because %q", q.ID, why)
		}
	}
}

// TestTabbyAPIForcedOverride: a sampler override TabbyAPI forces on a
// profile setting replaces every request's value
// (common/sampling.py @e632af4 apply_forced_sampler_overrides): the run is
// nonconforming with the setting named, and the validator agrees.
func TestTabbyAPIForcedOverride(t *testing.T) {
	t.Parallel()
	o := harness{sim: func(c *simengine.Config) {
		c.Dialect, c.TabbyAPIForced = simengine.DialectTabbyAPI, map[string]any{"temperature": 0.6}
	}}.run(t)
	o.mustBeValid(t)
	if r := o.reasons(); o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(r, "the engine cannot take the profile's setting temperature: TabbyAPI's /v1/sampling/overrides forces temperature to 0.6") {
		t.Errorf("status %s, reasons %s", o.res.Run.Status, r)
	}
}
