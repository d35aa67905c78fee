package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestEveryEngine: a whole protocol run against the scripted server of each
// engine (wire shapes from each engine's source, cited in
// internal/simengine/engines.go and wire.go) writes a folder the validator
// accepts, with the engine identified, every primary rate either from that
// engine's own timers (its source named) or null with the reason, and every
// setting the engine cannot take named in the status reasons.
func TestEveryEngine(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, c := range []struct {
		name           string
		dialect        string
		adjust         func(*simengine.Config)
		engine         dialect.Engine
		prompt, decode string // "" : a rate from the engine's timers; else a substring of the null's reason
		notTaken       []string
		refused        string // a status reason a refused request leaves
		workload       string // a status reason the preflight's rendering leaves
	}{
		{name: "vLLM", dialect: simengine.DialectVLLM, engine: dialect.VLLM},
		{name: "vLLM without --enable-prompt-tokens-details", dialect: simengine.DialectVLLM, engine: dialect.VLLM,
			adjust: func(c *simengine.Config) { c.VLLMPromptTokensDetails = &no }, prompt: "--enable-prompt-tokens-details"},
		{name: "vLLM without --enable-per-request-metrics", dialect: simengine.DialectVLLM, engine: dialect.VLLM,
			adjust: func(c *simengine.Config) { c.VLLMPerRequestMetrics, c.VLLMPromptTokensDetails = &no, &yes },
			prompt: "--enable-per-request-metrics", decode: "--enable-per-request-metrics"},
		{name: "SGLang", dialect: simengine.DialectSGLang, engine: dialect.SGLang, prompt: "SGLang's streaming chat reports no per-request", decode: "SGLang's streaming chat reports no per-request"},
		{name: "an older SGLang refusing xhigh", dialect: simengine.DialectSGLang, engine: dialect.SGLang,
			adjust:  func(c *simengine.Config) { c.SGLangRejectXHigh = true },
			prompt:  "the warm-up was refused: sglang 0.5.6 does not take the profile's reasoning_effort xhigh",
			decode:  "the warm-up was refused: sglang 0.5.6 does not take the profile's reasoning_effort xhigh",
			refused: "the server refused the protocol's request with HTTP 400"},
		// Ollama is spoken to in its own /api/chat, which takes every
		// setting but drops the tool cases' additionalProperties (with no
		// preflight here, its source says so; in internal/cli's
		// TestOllamaWithoutHealth its rendering shows it); its
		// done line times the decode and the evaluated prompt tokens, but
		// does not say how many of the prompt's those were.
		{name: "Ollama", dialect: simengine.DialectOllama, engine: dialect.Ollama, prompt: "Ollama reports no split of the prompt",
			workload: "the engine cannot take the tool cases' tools as the protocol gives them (Ollama's api.ToolFunctionParameters has no additionalProperties field"},
		// reasoning_effort reaches ik's template inside chat_template_kwargs
		// (examples/server/server-common.cpp @8337e4c), so it is taken.
		{name: "ik_llama.cpp", dialect: simengine.DialectIKLlama, engine: dialect.IKLlamaCpp},
		{name: "LM Studio", dialect: simengine.DialectLMStudio, engine: dialect.LMStudio, prompt: "LM Studio's OpenAI-compatible endpoint documents no per-request timer", decode: "LM Studio's OpenAI-compatible endpoint documents no per-request timer",
			notTaken: []string{"min_p", "chat_template_kwargs", "reasoning_effort"}},
		// TabbyAPI's usage has no cached count before PR #452 (973b22b), so
		// the prefill's tokens, and its rate, are unknown.
		{name: "TabbyAPI", dialect: simengine.DialectTabbyAPI, engine: dialect.TabbyAPI, notTaken: []string{"seed"},
			adjust: func(c *simengine.Config) { c.PromptTPS, c.DecodeTPS = 5e5, 5e3 }, prompt: "PR #452"},
		{name: "TabbyAPI with PR #452", dialect: simengine.DialectTabbyAPI, engine: dialect.TabbyAPI, notTaken: []string{"seed"},
			// Slow enough that the 4K and 16K prefills and every decode round
			// to 0.01 s or more.
			adjust: func(c *simengine.Config) { c.PromptTPS, c.DecodeTPS, c.TabbyAPIPromptDetails = 5e5, 5e3, true }},
		{name: "an older TabbyAPI without timers", dialect: simengine.DialectTabbyAPI, engine: dialect.TabbyAPI,
			adjust: func(c *simengine.Config) { c.TabbyAPINoTimings = true }, prompt: "older TabbyAPI builds", decode: "older TabbyAPI builds", notTaken: []string{"seed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := harness{sim: func(cfg *simengine.Config) {
				cfg.Dialect = c.dialect
				if c.adjust != nil {
					c.adjust(cfg)
				}
			}}.run(t)
			o.mustBeValid(t)
			ed := o.res.Extensions.EngineDialect
			if ed == nil || ed.Dialect.Engine != string(c.engine) || ed.Dialect.Simulated {
				t.Fatalf("engine dialect %+v, want %s", ed, c.engine)
			}
			reasons := o.reasons()
			for _, n := range c.notTaken {
				if !strings.Contains(reasons, "the engine cannot take the profile's setting "+n+": ") {
					t.Errorf("%s is not named as not taken: %s", n, reasons)
				}
			}
			if len(c.notTaken) == 0 && strings.Contains(reasons, "cannot take the profile's setting") {
				t.Errorf("a setting named as not taken: %s", reasons)
			}
			if strings.Contains(reasons, "the server resolved") {
				t.Errorf("a setting read as resolved otherwise: %s", reasons)
			}
			if c.workload != "" && (!strings.Contains(reasons, c.workload) || o.res.Run.Status != contract.StatusNonconforming) {
				t.Errorf("status %s, want nonconforming for %q: %s", o.res.Run.Status, c.workload, reasons)
			}
			if c.refused != "" && !strings.Contains(reasons, c.refused) {
				t.Errorf("no refusal in %s", reasons)
			}
			if len(c.notTaken) > 0 && o.res.Run.Status != contract.StatusNonconforming {
				t.Errorf("status %s with settings not taken", o.res.Run.Status)
			}
			for i, q := range o.res.Requests {
				if q.Phase != "performance" {
					continue
				}
				for _, m := range []struct {
					rate *float64
					want string
					ptr  string
				}{{q.Metrics.PromptTPS, c.prompt, "prompt_tps"}, {q.Metrics.DecodeTPS, c.decode, "decode_tps"}} {
					if m.want == "" && m.ptr == "prompt_tps" && c.engine == dialect.TabbyAPI && q.CaseID == "short" && c.prompt == "" {
						// TabbyAPI rounds prompt_time to 0.01 s: the simulator's
						// short prefill reads 0.00, which has no rate.
						m.want = "prompt time of 0"
					}
					why := o.res.Missing[contract.Pointer("requests", i, "metrics", m.ptr)]
					switch {
					case m.want == "" && m.rate == nil:
						t.Errorf("%s %s is null: %s", q.ID, m.ptr, why)
					case m.want == "" && (q.Sources.EngineTimings == nil || *q.Sources.EngineTimings == ""):
						t.Errorf("%s %s has no named engine timer", q.ID, m.ptr)
					case m.want != "" && m.rate != nil:
						t.Errorf("%s %s = %v, want null (%s)", q.ID, m.ptr, *m.rate, m.want)
					case m.want != "" && !strings.Contains(why, m.want):
						t.Errorf("%s %s null because %q, want %q", q.ID, m.ptr, why, m.want)
					}
				}
			}
			// The body sent is the dialect's: nothing the engine cannot take.
			for _, out := range o.outs {
				if len(out.Request) == 0 || string(out.Request) == "null" {
					continue
				}
				var body map[string]json.RawMessage
				if err := json.Unmarshal(out.Request, &body); err != nil {
					t.Fatal(err)
				}
				for _, n := range c.notTaken {
					if _, sent := body[n]; sent {
						t.Errorf("%s: %s was sent", out.RequestID, n)
					}
				}
			}
		})
	}
}
