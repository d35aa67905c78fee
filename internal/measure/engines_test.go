package measure

import (
	"math"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// TestAccountEngines: every engine's rates come from its own count and its
// own duration of the same work, or are null with the reason.
func TestAccountEngines(t *testing.T) {
	t.Parallel()
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9 }
	for _, c := range []struct {
		name           string
		ev             Evidence
		prompt, decode float64 // 0: null
		cached         int64   // -1: null
		missing        string  // a reason the nulls carry
	}{
		{
			// vllm/entrypoints/generate/base/serving.py build_per_request_timing_metrics:
			// the final usage chunk's metrics (kept in the timings slot).
			name: "vLLM with both flags",
			ev: Evidence{Timers: dialect.TimersVLLM,
				Usage:   []byte(`{"prompt_tokens":4000,"completion_tokens":513,"total_tokens":4513,"prompt_tokens_details":{"cached_tokens":96},"completion_tokens_details":{"reasoning_tokens":500}}`),
				Timings: []byte(`{"time_to_first_token_ms":400.0,"generation_time_ms":8000.0,"queue_time_ms":12.0,"mean_itl_ms":15.6,"tokens_per_second":61.0}`)},
			prompt: 3904 / 0.4, decode: 512 / 8.0, cached: 96,
		},
		{
			name: "vLLM without --enable-prompt-tokens-details",
			ev: Evidence{Timers: dialect.TimersVLLM,
				Usage:   []byte(`{"prompt_tokens":4000,"completion_tokens":513,"total_tokens":4513}`),
				Timings: []byte(`{"time_to_first_token_ms":400.0,"generation_time_ms":8000.0}`)},
			decode: 512 / 8.0, cached: -1, missing: "--enable-prompt-tokens-details",
		},
		{
			name: "vLLM without --enable-per-request-metrics",
			ev: Evidence{Timers: dialect.TimersVLLM,
				Usage: []byte(`{"prompt_tokens":4000,"completion_tokens":513,"total_tokens":4513,"prompt_tokens_details":{"cached_tokens":0}}`)},
			cached: 0, missing: "--enable-per-request-metrics",
		},
		{
			// backends/exllamav3/model.py @004e837 handle_finish_chunk.
			name: "TabbyAPI",
			ev: Evidence{Timers: dialect.TimersTabbyAPI,
				Usage: []byte(`{"prompt_tokens":4000,"prompt_tokens_details":{"cached_tokens":0},"prompt_time":0.5,"prompt_tokens_per_sec":8000.0,"completion_tokens":512,"completion_time":6.4,"completion_tokens_per_sec":80.0,"total_tokens":4512,"total_time":6.9}`)},
			prompt: 4000 / 0.5, decode: 512 / 6.4, cached: 0,
		},
		{
			name: "TabbyAPI prefill under 5 ms",
			ev: Evidence{Timers: dialect.TimersTabbyAPI,
				Usage: []byte(`{"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":0},"prompt_time":0.0,"prompt_tokens_per_sec":"Indeterminate","completion_tokens":100,"completion_time":1.0,"completion_tokens_per_sec":100.0,"total_tokens":130,"total_time":1.0}`)},
			decode: 100, cached: 0,
		},
		{
			name: "an older TabbyAPI: counts only",
			ev: Evidence{Timers: dialect.TimersTabbyAPI,
				Usage: []byte(`{"prompt_tokens":30,"completion_tokens":100,"total_tokens":130}`)},
			cached: -1, missing: "older TabbyAPI builds",
		},
		{
			// examples/server/server-context.cpp @0192b22: no cache_n.
			name: "ik_llama.cpp",
			ev: Evidence{Timers: dialect.TimersIKLlamaCpp,
				Usage:   []byte(`{"completion_tokens":128,"prompt_tokens":4000,"total_tokens":4128}`),
				Timings: []byte(`{"prompt_n":3904,"prompt_ms":390.4,"prompt_per_token_ms":0.1,"prompt_per_second":10000.0,"predicted_n":128,"predicted_ms":2560.0,"predicted_per_token_ms":20.0,"predicted_per_second":50.0,"n_ctx":32768,"n_past":4128}`)},
			prompt: 10000, decode: 50, cached: 96,
		},
		{
			// llm/llama_server.go @96fb6d2fa l.2016–2019: the done line of
			// Ollama's /api/chat (a real one: think "max", tiny-qwen3-thinker),
			// kept as the request's timings; no cached/evaluated split.
			name: "Ollama's done line",
			ev: Evidence{Timers: dialect.TimersOllama,
				Timings: []byte(ollamaDone)},
			decode: 7 / 0.666165, cached: -1, missing: "Ollama reports no split of the prompt",
		},
		{
			name: "Ollama's done line with the split from its log",
			ev: Evidence{Timers: dialect.TimersOllama, Timings: []byte(ollamaDone),
				Split: &Split{Cached: 13, Read: 1, Source: "engine log: the helper's cached n_tokens and print_timing lines"}},
			prompt: 1 / 0.002915, decode: 7 / 0.666165, cached: 13,
		},
		{
			name: "Ollama's done line with a split of another prompt",
			ev: Evidence{Timers: dialect.TimersOllama, Timings: []byte(ollamaDone),
				Split: &Split{Cached: 10, Read: 1, Source: "engine log"}},
			decode: 7 / 0.666165, cached: -1, missing: "do not add up to input_tokens (14)",
		},
		{
			name: "SGLang: no timer",
			ev: Evidence{Timers: dialect.TimersNone, NoTimers: "SGLang's streaming chat reports no per-request prefill or decode time",
				Usage: []byte(`{"prompt_tokens":4000,"total_tokens":4512,"completion_tokens":512,"prompt_tokens_details":null,"reasoning_tokens":400}`)},
			cached: -1, missing: "SGLang's streaming chat reports no per-request",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.ev.TTFT, c.ev.FirstAnswer, c.ev.Total, c.ev.Status = ptr(0.5), ptr(7), ptr(9), contract.Truncated
			a := Account(c.ev)
			check := func(what string, got *float64, want float64, ptr string) {
				switch {
				case want == 0 && got != nil:
					t.Errorf("%s = %v, want null", what, *got)
				case want == 0 && !strings.Contains(a.Missing[ptr], c.missing):
					t.Errorf("%s null because %q, want %q", what, a.Missing[ptr], c.missing)
				case want != 0 && !near(got, want):
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("prompt rate", a.Metrics.PromptTPS, c.prompt, "/metrics/prompt_tps")
			check("decode rate", a.Metrics.DecodeTPS, c.decode, "/metrics/decode_tps")
			switch {
			case c.cached < 0 && a.Tokens.CachedTokens != nil:
				t.Errorf("cached = %d, want null", *a.Tokens.CachedTokens)
			case c.cached >= 0 && (a.Tokens.CachedTokens == nil || *a.Tokens.CachedTokens != c.cached):
				t.Errorf("cached = %v, want %d", a.Tokens.CachedTokens, c.cached)
			}
			if a.Metrics.PromptTPS != nil || a.Metrics.DecodeTPS != nil {
				if a.Sources.EngineTimings == nil {
					t.Error("a rate without a named engine timer source")
				}
			}
		})
	}
}

// ollamaDone is the done line of a real /api/chat stream
// (internal/client/testdata/ollama/chat-think-max.ndjson), as the client
// keeps it.
const ollamaDone = `{"model":"tiny-qwen3-thinker","created_at":"2026-12-06T06:32:12.820684993Z","done":true,"done_reason":"stop","total_duration":1897564111,"load_duration":1221566342,"prompt_eval_count":14,"prompt_eval_duration":2915000,"eval_count":7,"eval_duration":666165000}`

// TestAccountOllama: Ollama's counts and timers are its done line's:
// input_tokens is prompt_eval_count (cached tokens included), output and
// decode tokens eval_count (thinking included), the durations its
// nanoseconds; each source names the field; cached_tokens and read_tokens
// are null with Ollama's reason, or the request's own when it failed.
func TestAccountOllama(t *testing.T) {
	t.Parallel()
	a := Account(Evidence{Timers: dialect.TimersOllama, Timings: []byte(ollamaDone), TTFT: ptr(0.3), FirstAnswer: ptr(0.6), Total: ptr(0.7), Status: contract.Completed, Cap: 64})
	tk, tm := a.Tokens, a.Timings
	if tk.InputTokens == nil || *tk.InputTokens != 14 || *tk.OutputTokens != 7 || *tk.DecodeTokens != 7 || tm.PromptS == nil || *tm.PromptS != 0.002915 || *tm.DecodeS != 0.666165 {
		t.Fatalf("tokens %+v timings %+v", tk, tm)
	}
	for name, src := range map[string]*string{"input": a.Sources.InputTokens, "output": a.Sources.OutputTokens, "decode": a.Sources.DecodeTokens, "timers": a.Sources.EngineTimings} {
		if src == nil || !strings.Contains(*src, "Ollama's done line") {
			t.Errorf("%s source %v", name, src)
		}
	}
	if !strings.Contains(*a.Sources.InputTokens, "prompt_eval_count") || !strings.Contains(*a.Sources.DecodeTokens, "eval_count") {
		t.Errorf("sources %+v", a.Sources)
	}
	if tk.CachedTokens != nil || tk.ReadTokens != nil || !strings.Contains(a.Missing[contract.ReqSourcesReadTokens], "no read_tokens: Ollama reports no split") {
		t.Errorf("cached %v read %v: %q", tk.CachedTokens, tk.ReadTokens, a.Missing[contract.ReqSourcesReadTokens])
	}
	failed := Account(Evidence{Timers: dialect.TimersOllama, Status: contract.Failed, NoDataReason: "the request failed (stream_error) before the engine reported it"})
	if failed.Tokens.InputTokens != nil || !strings.Contains(failed.Missing[contract.ReqTokensCachedTokens], "stream_error") ||
		!strings.Contains(failed.Missing[contract.ReqTokensInputTokens], "stream_error") {
		t.Errorf("failed: %+v %v", failed.Tokens, failed.Missing)
	}
	forged := strings.Replace(ollamaDone, `"prompt_eval_count":14`, `"prompt_eval_count":9223372036854775807`, 1)
	bound := Account(Evidence{Timers: dialect.TimersOllama, Timings: []byte(forged), Cap: 64, FrozenInput: 14})
	if want := "impossible engine evidence: timings.prompt_eval_count (9223372036854775807) exceeds 4 x the fixture's frozen input_tokens (14) + 1024"; bound.Tokens.InputTokens != nil ||
		!strings.HasPrefix(bound.Missing[contract.ReqTokensInputTokens], want) {
		t.Errorf("prompt_eval_count 2^63-1: input_tokens %v (%q), want null with %q", bound.Tokens.InputTokens, bound.Missing[contract.ReqTokensInputTokens], want)
	}
	over := Account(Evidence{Timers: dialect.TimersOllama, Timings: []byte(ollamaDone), Cap: 3})
	if over.Tokens.OutputTokens != nil || over.Tokens.DecodeTokens != nil ||
		!strings.HasPrefix(over.Missing[contract.ReqTokensOutputTokens], "impossible engine evidence: timings.eval_count (7) exceeds") {
		t.Errorf("eval_count 7 with num_predict 3: %+v, %q", over.Tokens, over.Missing[contract.ReqTokensOutputTokens])
	}
}
