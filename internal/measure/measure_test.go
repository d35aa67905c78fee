package measure

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

func TestAccountLlamaCapture(t *testing.T) {
	t.Parallel()
	// From chat-warmup-stream-max128: the usage chunk's usage and timings.
	a := Account(Evidence{
		Usage:   []byte(`{"completion_tokens":128,"prompt_tokens":30,"total_tokens":158,"prompt_tokens_details":{"cached_tokens":0}}`),
		Timings: []byte(`{"cache_n":0,"prompt_n":30,"prompt_ms":3.148,"prompt_per_token_ms":0.10493333333333334,"prompt_per_second":9529.860228716645,"predicted_n":128,"predicted_ms":291.187,"predicted_per_token_ms":2.2748984375,"predicted_per_second":439.5800636704248}`),
		TTFT:    ptr(0.031), FirstAnswer: ptr(0.031), Total: ptr(0.300), Status: contract.Truncated,
	})
	want := map[string]int64{"input": 30, "cached": 0, "read": 30, "output": 128, "decode": 128}
	got := map[string]*int64{"input": a.Tokens.InputTokens, "cached": a.Tokens.CachedTokens, "read": a.Tokens.ReadTokens, "output": a.Tokens.OutputTokens, "decode": a.Tokens.DecodeTokens}
	for k, w := range want {
		if got[k] == nil || *got[k] != w {
			t.Errorf("%s = %v, want %d", k, got[k], w)
		}
	}
	if *a.Sources.CachedTokens != SrcCachedUsage || *a.Sources.ReadTokens != SrcPromptN || *a.Sources.DecodeTokens != SrcPredictedN {
		t.Errorf("sources %+v", a.Sources)
	}
	if d := *a.Metrics.PromptTPS - 30/0.003148; d > 1e-9 || d < -1e-9 {
		t.Errorf("prompt_tps %v", *a.Metrics.PromptTPS)
	}
	if d := *a.Metrics.DecodeTPS - 128/0.291187; d > 1e-9 || d < -1e-9 {
		t.Errorf("decode_tps %v", *a.Metrics.DecodeTPS)
	}
	if a.Note != nil {
		t.Errorf("note %q for agreeing counts", *a.Note)
	}
	if a.Missing["/token_accounting_note"] == "" {
		t.Error("a null note needs a reason")
	}
}

func ptr(f float64) *float64 { return &f }

func TestAccountRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                  string
		usage, timings        string
		decode                *int64
		decodeSrc, note, miss string
		promptNull            bool
	}{
		{name: "predicted_n disagrees with the rate",
			usage: `{"completion_tokens":100,"prompt_tokens":10}`, timings: `{"prompt_n":10,"prompt_ms":10,"predicted_n":100,"predicted_ms":1000,"predicted_per_second":80.0}`,
			decode: i64(80), decodeSrc: SrcPredictedRate, note: "disagrees"},
		{name: "within tolerance (0.05 x s + 1)",
			usage: `{"completion_tokens":100,"prompt_tokens":10}`, timings: `{"prompt_n":10,"prompt_ms":10,"predicted_n":100,"predicted_ms":10000,"predicted_per_second":9.95}`,
			decode: i64(100), decodeSrc: SrcPredictedN},
		{name: "cached from timings, read derived",
			usage: `{"completion_tokens":5,"prompt_tokens":30}`, timings: `{"cache_n":29,"prompt_ms":1,"predicted_n":5,"predicted_ms":10,"predicted_per_second":500}`,
			decode: i64(5), decodeSrc: SrcPredictedN, note: "read_tokens derived"},
		{name: "whole prompt cached",
			usage: `{"completion_tokens":5,"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":30}}`, timings: `{"prompt_n":0,"prompt_ms":0,"predicted_n":5,"predicted_ms":10,"predicted_per_second":500}`,
			decode: i64(5), decodeSrc: SrcPredictedN, promptNull: true, miss: "whole prompt came from the cache"},
		{name: "output differs from decode",
			usage: `{"completion_tokens":7,"prompt_tokens":30}`, timings: `{"prompt_n":30,"prompt_ms":1,"predicted_n":5,"predicted_ms":10,"predicted_per_second":500}`,
			decode: i64(5), decodeSrc: SrcPredictedN, note: "differ"},
		{name: "no timings at all",
			usage: `{"completion_tokens":7,"prompt_tokens":30}`, timings: ``,
			promptNull: true, miss: "carried no timings.predicted_n"},
		{name: "wrong types are invalid evidence",
			usage: `{"completion_tokens":"7","prompt_tokens":-1}`, timings: `{"prompt_n":1.5}`,
			promptNull: true, miss: "invalid evidence"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Account(Evidence{Usage: []byte(c.usage), Timings: []byte(c.timings), Total: ptr(1), Status: contract.Completed})
			if (c.decode == nil) != (a.Tokens.DecodeTokens == nil) || c.decode != nil && *c.decode != *a.Tokens.DecodeTokens {
				t.Errorf("decode %v, want %v", a.Tokens.DecodeTokens, c.decode)
			}
			if c.decodeSrc != "" && (a.Sources.DecodeTokens == nil || *a.Sources.DecodeTokens != c.decodeSrc) {
				t.Errorf("decode source %v", a.Sources.DecodeTokens)
			}
			if c.note != "" && (a.Note == nil || !strings.Contains(*a.Note, c.note)) {
				t.Errorf("note %v lacks %q", a.Note, c.note)
			}
			if c.promptNull != (a.Metrics.PromptTPS == nil) {
				t.Errorf("prompt_tps %v", a.Metrics.PromptTPS)
			}
			if c.miss != "" {
				found := false
				for _, r := range a.Missing {
					found = found || strings.Contains(r, c.miss)
				}
				if !found {
					t.Errorf("no missing reason contains %q: %v", c.miss, a.Missing)
				}
			}
			// Every nil field has a reason.
			checkNulls(t, a)
		})
	}
}

func checkNulls(t *testing.T, a Accounting) {
	t.Helper()
	pairs := map[string]bool{
		"/tokens/input_tokens": a.Tokens.InputTokens == nil, "/tokens/cached_tokens": a.Tokens.CachedTokens == nil,
		"/tokens/read_tokens": a.Tokens.ReadTokens == nil, "/tokens/output_tokens": a.Tokens.OutputTokens == nil,
		"/tokens/decode_tokens": a.Tokens.DecodeTokens == nil, "/timings/prompt_s": a.Timings.PromptS == nil,
		"/timings/decode_s": a.Timings.DecodeS == nil, "/metrics/prompt_tps": a.Metrics.PromptTPS == nil,
		"/metrics/decode_tps": a.Metrics.DecodeTPS == nil, "/sources/decode_tokens": a.Sources.DecodeTokens == nil,
	}
	for p, isNull := range pairs {
		if isNull != (a.Missing[p] != "") {
			t.Errorf("%s: null %v, reason %q", p, isNull, a.Missing[p])
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("odd median %v", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("even median %v", m)
	}
}

func TestCacheReuseAndLength(t *testing.T) {
	t.Parallel()
	if r, _ := CacheReuse(i64(20), 12); r {
		t.Error("12 + 8 = 20 is allowed")
	}
	if r, why := CacheReuse(i64(21), 12); !r || !strings.Contains(why, "21 > max_shared_prefix_tokens 12 + 8") {
		t.Errorf("21 > 20 is reuse: %v %q", r, why)
	}
	if v, _ := LengthViolation("prompt-4k", i64(3833)); !v {
		t.Error("3,833 tokens is outside 2 % of 4,096")
	}
	if v, _ := LengthViolation("prompt-16k", i64(16384)); v {
		t.Error("16,384 is within")
	}
	if v, _ := LengthViolation("short", i64(80)); v {
		t.Error("the short case has no length rule")
	}
}

func TestSummariesAndRounds(t *testing.T) {
	t.Parallel()
	one := func(v float64) *float64 { return &v }
	round := func(r int) *int { return &r }
	reqs := []contract.Request{
		{ID: "performance-short-r1", Phase: "performance", CaseID: "short", Status: contract.Completed, Metrics: contract.Metrics{PromptTPS: one(100), DecodeTPS: one(10)}, Timings: contract.Timings{TTFTS: one(1), FirstAnswerS: one(2), TotalS: one(3)}},
		{ID: "performance-short-r2", Phase: "performance", CaseID: "short", Status: contract.Truncated, Metrics: contract.Metrics{PromptTPS: one(200), DecodeTPS: one(20)}, Timings: contract.Timings{TTFTS: one(2), TotalS: one(4)}},
		{ID: "performance-short-r3", Phase: "performance", CaseID: "short", Status: contract.Failed, Error: &contract.ErrorInfo{Kind: "timeout", Message: "x"}},
		{ID: "performance-prompt-4k-r1", Phase: "performance", CaseID: "prompt-4k", Status: contract.Completed, Metrics: contract.Metrics{PromptTPS: one(1000)}, Timings: contract.Timings{TotalS: one(5)}},
		{ID: "concurrency-r1-c1", Phase: "concurrency", CaseID: "short-burst", Round: round(1), Status: contract.Completed, Tokens: contract.Tokens{OutputTokens: i64(100)}},
		{ID: "concurrency-r1-c2", Phase: "concurrency", CaseID: "short-burst", Round: round(1), Status: contract.Truncated, Tokens: contract.Tokens{OutputTokens: i64(512)}},
		{ID: "concurrency-r1-c3", Phase: "concurrency", CaseID: "short-burst", Round: round(1), Status: contract.Failed},
	}
	nulls := Nulls{}
	for _, q := range reqs {
		nulls[q.ID] = map[string]string{}
		for _, p := range []string{contract.ReqMetricsPromptTPS, contract.ReqMetricsDecodeTPS, contract.ReqTimingsTTFTS, contract.ReqTimingsFirstAnswerS, contract.ReqTimingsTotalS} {
			nulls[q.ID][p] = "reason for " + q.ID
		}
	}
	sums := Summaries(reqs, ReuseExclusions{"performance-prompt-4k-r1": "unexpected cache reuse"}, true, nulls)
	if len(sums) != 20 {
		t.Fatalf("%d summaries, want 20 (4 cases x 5 metrics)", len(sums))
	}
	s := sums[0] // short prompt_tps
	if s.N != 2 || *s.Median != 150 || *s.Min != 100 || *s.Max != 200 || len(s.Excluded) != 1 || !strings.Contains(s.Excluded[0].Reason, "failed (timeout)") {
		t.Errorf("short prompt_tps: %+v", s)
	}
	fa := sums[3] // short first_answer_s: r2 reached the cap while reasoning
	if fa.Metric != "first_answer_s" || fa.N != 1 || len(fa.Excluded) != 2 || !strings.Contains(fa.Excluded[0].Reason, "reason for performance-short-r2") {
		t.Errorf("short first_answer_s: %+v", fa)
	}
	p4 := sums[5]
	if p4.CaseID != "prompt-4k" || p4.N != 0 || p4.Median != nil || p4.Excluded[0].Reason != "unexpected cache reuse" {
		t.Errorf("prompt-4k prompt_tps: %+v", p4)
	}
	rounds, missing := Rounds(reqs, map[string]RoundTiming{
		"concurrency-r1-c1": {Total: 2, Dispatched: true}, "concurrency-r1-c2": {Offset: 0.001, Total: 3.5, Dispatched: true}, "concurrency-r1-c3": {Offset: 0.002, Total: 1, Dispatched: true},
	})
	if len(rounds) != 1 || *rounds[0].WallS != 3.501 || *rounds[0].OutputTokens != 612 || rounds[0].Failed != 1 {
		t.Fatalf("rounds %+v", rounds)
	}
	if d := *rounds[0].AggregateTPS - 612/3.501; d > 1e-9 || d < -1e-9 {
		t.Errorf("aggregate %v", *rounds[0].AggregateTPS)
	}
	if len(missing) != 0 {
		t.Errorf("missing %v", missing)
	}
}

// TestNumbersStayFinite: engine timers that make a rate infinite (a prompt
// time of 1e-320 ms, a rate of 1e308) give nulls with reasons, never a
// value JSON cannot hold.
func TestNumbersStayFinite(t *testing.T) {
	t.Parallel()
	for _, timings := range []string{
		`{"prompt_n":30,"prompt_ms":1e-320,"predicted_n":5,"predicted_ms":1e-320,"predicted_per_second":300}`,
		`{"prompt_n":30,"prompt_ms":5,"predicted_n":5,"predicted_ms":1e10,"predicted_per_second":1e308}`,
	} {
		a := Account(Evidence{Usage: json.RawMessage(`{"prompt_tokens":30,"completion_tokens":5}`), Timings: json.RawMessage(timings), Total: f64(1), Status: "completed"})
		for _, v := range []*float64{a.Metrics.PromptTPS, a.Metrics.DecodeTPS, a.Timings.PromptS, a.Timings.DecodeS} {
			if v != nil && (math.IsInf(*v, 0) || math.IsNaN(*v)) {
				t.Errorf("%s: a non-finite value %v", timings, *v)
			}
		}
		if d := a.Tokens.DecodeTokens; d != nil && *d < 0 {
			t.Errorf("%s: decode_tokens %d", timings, *d)
		}
		if _, err := json.Marshal(a); err != nil {
			t.Errorf("%s: %v", timings, err)
		}
	}
	a := Account(Evidence{Usage: json.RawMessage(`{"prompt_tokens":30,"completion_tokens":5}`), Timings: json.RawMessage(`{"prompt_n":30,"prompt_ms":1e-320}`), Total: f64(1)})
	if a.Metrics.PromptTPS != nil || !strings.Contains(a.Missing["/metrics/prompt_tps"], Impossible) {
		t.Errorf("prompt_tps %v, reason %q", a.Metrics.PromptTPS, a.Missing["/metrics/prompt_tps"])
	}
}

// TestEngineNumberRules: a count is a JSON integer literal that int64
// holds, cached tokens above the prompt and a rate that implies more
// decoded tokens than the API returned are contradictions. Each gives
// nulls with a reason naming the evidence; what it does not touch stays.
func TestEngineNumberRules(t *testing.T) {
	t.Parallel()
	const timings = `"prompt_n":30,"prompt_ms":3,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500`
	cases := []struct {
		name, usage, timings string
		cap                  int // the request's max_tokens (0: none known)
		frozen               int // the fixture's frozen input_tokens (0: none known)
		// null maps each pointer that must be null to a part of its reason;
		// kept are pointers that must keep a value.
		null map[string]string
		kept []string
	}{
		{name: "a count sent as a string", usage: `{"completion_tokens":"999999","prompt_tokens":30}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/output_tokens": `invalid evidence: usage.completion_tokens ("999999") is not a nonnegative JSON integer`},
			kept: []string{"/tokens/input_tokens", "/tokens/decode_tokens", "/metrics/decode_tps"}},
		// The value quoted is redacted before it is cut.
		{name: "a token as a count", usage: `{"completion_tokens":"token ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Fg0Ja8Se2U","prompt_tokens":30}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/output_tokens": `usage.completion_tokens ("token <secret>") is not a nonnegative JSON integer`}},
		{name: "a count with a fraction", usage: `{"completion_tokens":3.0,"prompt_tokens":30}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/output_tokens": "usage.completion_tokens (3.0) is not a nonnegative JSON integer"}},
		{name: "a count with an exponent", usage: `{"completion_tokens":3,"prompt_tokens":3e1}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/input_tokens": "usage.prompt_tokens (3e1) is not"}, kept: []string{"/tokens/output_tokens"}},
		{name: "a negative count", usage: `{"completion_tokens":-5,"prompt_tokens":30}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/output_tokens": "(-5) is not a nonnegative JSON integer"}},
		{name: "a count past int64", usage: `{"completion_tokens":3,"prompt_tokens":30}`, timings: `{"prompt_n":9223372036854775808,"prompt_ms":3,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null: map[string]string{"/tokens/read_tokens": "timings.prompt_n (9223372036854775808) is not a nonnegative JSON integer within int64", "/metrics/prompt_tps": "read_tokens or prompt_s is null"}},
		{name: "the largest int64 is a count", usage: `{"completion_tokens":3,"prompt_tokens":9223372036854775807}`, timings: `{` + timings + `}`,
			kept: []string{"/tokens/input_tokens", "/tokens/read_tokens"}},
		{name: "a count given as a string in timings", usage: `{"completion_tokens":3,"prompt_tokens":30}`, timings: `{"prompt_n":"30","prompt_ms":3,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null: map[string]string{"/tokens/read_tokens": `timings.prompt_n ("30") is not`}},
		{name: "cached above input (usage)", usage: `{"completion_tokens":3,"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":1000}}`, timings: `{` + timings + `}`,
			null: map[string]string{
				"/tokens/read_tokens": "contradictory evidence: usage.prompt_tokens_details.cached_tokens (1000) exceeds usage.prompt_tokens (30)",
				"/metrics/prompt_tps": "read_tokens or prompt_s is null: contradictory evidence",
			},
			// cached_tokens stays the engine's count, which the reuse rule reads.
			kept: []string{"/tokens/input_tokens", "/tokens/cached_tokens", "/timings/prompt_s", "/tokens/decode_tokens", "/metrics/decode_tps"}},
		{name: "cached above input (timings.cache_n, read_tokens derived)", usage: `{"completion_tokens":3,"prompt_tokens":30}`,
			timings: `{"cache_n":31,"prompt_ms":3,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null:    map[string]string{"/tokens/read_tokens": "timings.cache_n (31) exceeds usage.prompt_tokens (30)", "/metrics/prompt_tps": "contradictory evidence"}},
		{name: "the whole prompt cached is no contradiction", usage: `{"completion_tokens":3,"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":30}}`, timings: `{` + timings + `}`,
			kept: []string{"/tokens/cached_tokens", "/tokens/read_tokens"}},
		{name: "a rate that implies far more tokens than completion_tokens", usage: `{"completion_tokens":3,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":3,"predicted_ms":30,"predicted_per_second":1000000}`,
			null: map[string]string{
				"/tokens/decode_tokens": "contradictory evidence: timings.predicted_n (3) disagrees with predicted_per_second x predicted_ms/1000, and the count that implies (30000) exceeds the API's completion_tokens (3) by more than 0.05 x decode_s + 1",
				"/metrics/decode_tps":   "decode_tokens or decode_s is null: contradictory evidence",
			},
			kept: []string{"/tokens/output_tokens", "/timings/decode_s", "/metrics/prompt_tps"}},
		{name: "a rate that implies completion_tokens + the slack", usage: `{"completion_tokens":3,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":10,"predicted_ms":1000,"predicted_per_second":4.0}`,
			kept:    []string{"/tokens/decode_tokens", "/metrics/decode_tps"}},
		{name: "a rate that implies one token past the slack", usage: `{"completion_tokens":3,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":10,"predicted_ms":1000,"predicted_per_second":5.0}`,
			null:    map[string]string{"/tokens/decode_tokens": "the count that implies (5) exceeds the API's completion_tokens (3)"}},
		{name: "predicted_n absent and the rate implies too many", usage: `{"completion_tokens":3,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_ms":30,"predicted_per_second":1000000}`,
			null:    map[string]string{"/tokens/decode_tokens": "contradictory evidence: the count predicted_per_second x predicted_ms/1000 implies (30000) exceeds"}},
		{name: "without completion_tokens the implied count stands", usage: `{"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":3,"predicted_ms":30,"predicted_per_second":1000000}`,
			kept:    []string{"/tokens/decode_tokens"}},
		// Numbers no engine can give.
		{name: "a prompt time of 1e-300 ms", usage: `{"completion_tokens":3,"prompt_tokens":3828}`,
			timings: `{"prompt_n":3828,"prompt_ms":1e-300,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null: map[string]string{
				"/timings/prompt_s":   "impossible engine evidence: the engine reported a prompt time of 1e-303 s for 3828 tokens, faster than 1e+08 tokens/s",
				"/metrics/prompt_tps": "read_tokens or prompt_s is null: impossible engine evidence",
			},
			kept: []string{"/tokens/read_tokens", "/timings/decode_s", "/metrics/decode_tps"}},
		{name: "a rate of exactly 10^8 tokens/s", usage: `{"completion_tokens":3,"prompt_tokens":1000}`,
			timings: `{"prompt_n":1000,"prompt_ms":0.01,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			kept:    []string{"/timings/prompt_s", "/metrics/prompt_tps"}},
		{name: "a rate just above 10^8 tokens/s", usage: `{"completion_tokens":3,"prompt_tokens":1000}`,
			timings: `{"prompt_n":1000,"prompt_ms":0.0099,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null:    map[string]string{"/timings/prompt_s": "impossible engine evidence"}},
		{name: "a prompt time of 0 for no tokens read", usage: `{"completion_tokens":3,"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":30}}`,
			timings: `{"prompt_n":0,"prompt_ms":0,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null:    map[string]string{"/metrics/prompt_tps": "the whole prompt came from the cache"}, kept: []string{"/timings/prompt_s"}},
		{name: "completion_tokens of 2^63-1 on a request capped at 512", cap: 512, usage: `{"completion_tokens":9223372036854775807,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":470,"predicted_ms":1000,"predicted_per_second":470}`,
			null: map[string]string{
				"/tokens/output_tokens":  "impossible engine evidence: usage.completion_tokens (9223372036854775807) exceeds the request's max_tokens (512)",
				"/sources/output_tokens": "no output_tokens: impossible engine evidence",
			},
			kept: []string{"/tokens/decode_tokens", "/timings/decode_s", "/metrics/decode_tps"}},
		{name: "prompt_tokens of 2^63-1 for a fixture of 30 tokens", frozen: 30, usage: `{"completion_tokens":3,"prompt_tokens":9223372036854775807}`, timings: `{` + timings + `}`,
			null: map[string]string{
				"/tokens/input_tokens":  "impossible engine evidence: usage.prompt_tokens (9223372036854775807) exceeds 4 x the fixture's frozen input_tokens (30) + 1024",
				"/sources/input_tokens": "no input_tokens: impossible engine evidence",
			},
			kept: []string{"/tokens/read_tokens", "/metrics/prompt_tps", "/tokens/output_tokens"}},
		{name: "prompt_tokens at 4 x the frozen count + 1024", frozen: 30, usage: `{"completion_tokens":3,"prompt_tokens":1144}`, timings: `{` + timings + `}`,
			kept: []string{"/tokens/input_tokens"}},
		{name: "prompt_tokens one past 4 x the frozen count + 1024", frozen: 30, usage: `{"completion_tokens":3,"prompt_tokens":1145}`, timings: `{` + timings + `}`,
			null: map[string]string{"/tokens/input_tokens": "usage.prompt_tokens (1145) exceeds 4 x the fixture's frozen input_tokens (30) + 1024"}},
		{name: "prompt_n above prompt_tokens", frozen: 16384, usage: `{"completion_tokens":3,"prompt_tokens":16384}`,
			timings: `{"prompt_n":60000,"prompt_ms":1000,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null: map[string]string{
				"/tokens/read_tokens": "contradictory evidence: timings.prompt_n (60000) exceeds usage.prompt_tokens (16384)",
				"/metrics/prompt_tps": "read_tokens or prompt_s is null: contradictory evidence",
			},
			kept: []string{"/tokens/input_tokens", "/timings/prompt_s", "/metrics/decode_tps"}},
		{name: "prompt_n past the bound where prompt_tokens is none", frozen: 30, usage: `{"completion_tokens":3,"prompt_tokens":9223372036854775807}`,
			timings: `{"prompt_n":5000000,"prompt_ms":1000,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`,
			null: map[string]string{
				"/tokens/read_tokens": "impossible engine evidence: timings.prompt_n (5000000) exceeds 4 x the fixture's frozen input_tokens (30) + 1024",
				"/metrics/prompt_tps": "read_tokens or prompt_s is null: impossible engine evidence",
			}},
		{name: "completion_tokens at the cap", cap: 512, usage: `{"completion_tokens":512,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":512,"predicted_ms":1000,"predicted_per_second":512}`,
			kept:    []string{"/tokens/output_tokens", "/tokens/decode_tokens", "/metrics/decode_tps"}},
		{name: "predicted_n above the cap", cap: 512, usage: `{"completion_tokens":470,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":100000,"predicted_ms":1000,"predicted_per_second":100000}`,
			null: map[string]string{
				"/tokens/decode_tokens": "impossible engine evidence: decode_tokens (100000) exceeds the request's max_tokens (512)",
				"/metrics/decode_tps":   "decode_tokens or decode_s is null: impossible engine evidence",
			},
			kept: []string{"/tokens/output_tokens", "/timings/decode_s"}},
		{name: "predicted_ms 0 with predicted_n 470", cap: 512, usage: `{"completion_tokens":470,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_n":470,"predicted_ms":0,"predicted_per_second":350.5}`,
			null: map[string]string{
				"/timings/decode_s":     "impossible engine evidence: the engine reported a decode time of 0 s for 470 tokens",
				"/tokens/decode_tokens": "timings.predicted_n (470) cannot be checked against the engine's rate: impossible engine evidence",
				"/metrics/decode_tps":   "impossible engine evidence",
			},
			kept: []string{"/tokens/output_tokens", "/metrics/prompt_tps"}},
		{name: "predicted_ms 0 without predicted_n", cap: 512, usage: `{"completion_tokens":470,"prompt_tokens":30}`,
			timings: `{"prompt_n":30,"prompt_ms":3,"predicted_ms":0,"predicted_per_second":350.5}`,
			null: map[string]string{
				"/timings/decode_s":     "a decode time of 0 s for 470 tokens",
				"/tokens/decode_tokens": "impossible engine evidence",
			},
			kept: []string{"/tokens/output_tokens"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := Account(Evidence{Usage: []byte(c.usage), Timings: []byte(c.timings), Total: ptr(1), Status: contract.Completed, Cap: c.cap, FrozenInput: c.frozen})
			checkNulls(t, a)
			values := map[string]bool{
				"/tokens/input_tokens": a.Tokens.InputTokens != nil, "/tokens/cached_tokens": a.Tokens.CachedTokens != nil,
				"/tokens/read_tokens": a.Tokens.ReadTokens != nil, "/tokens/output_tokens": a.Tokens.OutputTokens != nil,
				"/tokens/decode_tokens": a.Tokens.DecodeTokens != nil, "/timings/prompt_s": a.Timings.PromptS != nil,
				"/timings/decode_s": a.Timings.DecodeS != nil, "/metrics/prompt_tps": a.Metrics.PromptTPS != nil,
				"/metrics/decode_tps": a.Metrics.DecodeTPS != nil,
			}
			for p, says := range c.null {
				if values[p] || !strings.Contains(a.Missing[p], says) {
					t.Errorf("%s: value %v, reason %q; want null with %q", p, values[p], a.Missing[p], says)
				}
			}
			for _, p := range c.kept {
				if !values[p] {
					t.Errorf("%s is null (%s), want a value", p, a.Missing[p])
				}
			}
		})
	}
}

// TestEngineBounds: the bounds an engine's numbers are held to, which the
// validator applies to a record as they are (Rate holds the rate to them).
func TestEngineBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		tokens  int64
		seconds float64
		limit   int
		timer   bool // TimerBound gives a reason
		count   bool // CountBound gives a reason
		input   bool // InputBound gives a reason for tokens as a prompt count of a fixture of limit tokens
	}{
		{"a rate of 10^8 tokens/s", 100, 1e-6, 512, false, false, false},
		{"a rate above 10^8 tokens/s", 101, 1e-6, 512, true, false, false},
		{"a timer of 0 for tokens", 470, 0, 512, true, false, false},
		{"a timer of 0 for no tokens", 0, 0, 512, false, false, false},
		{"a count at the cap", 512, 1, 512, false, false, false},
		{"a count one past the cap", 513, 1, 512, false, true, false},
		{"a count with no cap known", 1 << 30, 1800, 0, false, false, false},
		{"a prompt count at 4 x the frozen count + 1024", 3072, 1, 512, false, true, false},
		{"a prompt count one past 4 x the frozen count + 1024", 3073, 1, 512, false, true, true},
		{"a prompt count of 2^63-1", math.MaxInt64, 1800, 512, true, true, true},
		{"a timer at the request timeout", 10, 1800, 512, false, false, false},
		{"a timer past the request timeout", 10, 1800.001, 512, true, false, false},
		{"a timer of 1e299 s", 10, 1e299, 512, true, false, false},
		{"a timer past the request timeout for no tokens", 0, 1e299, 512, true, false, false},
	} {
		if got := TimerBound(c.tokens, c.seconds, "decode time") != ""; got != c.timer {
			t.Errorf("%s: TimerBound says %v, want %v", c.name, got, c.timer)
		}
		if got := CountBound(c.tokens, c.limit, "decode_tokens") != ""; got != c.count {
			t.Errorf("%s: CountBound says %v, want %v", c.name, got, c.count)
		}
		if got := InputBound(c.tokens, c.limit, "input_tokens") != ""; got != c.input {
			t.Errorf("%s: InputBound says %v, want %v", c.name, got, c.input)
		}
		rate, why := Rate(&c.tokens, &c.seconds, "decode_tokens", "decode_s", "decode time")
		if c.tokens > 0 && (rate == nil) != c.timer {
			t.Errorf("%s: Rate %v (%s), want null %v", c.name, rate, why, c.timer)
		}
	}
}

// TestDecodeCount: the decode-count agreement over 10 s of decoding
// allows 0.05 x 10 + 1 = 1.5 tokens either way; above is only a count
// beyond that over what was expected, and the slack is said in words.
func TestDecodeCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		count, expected float64
		agrees, above   bool
	}{
		{100, 98.5, true, false}, {100, 98.4, false, true}, {97, 98.5, true, false}, {96.9, 98.5, false, false},
	} {
		agrees, above, slack := DecodeCount(c.count, c.expected, 10)
		if agrees != c.agrees || above != c.above || slack != "0.05 x decode_s + 1" {
			t.Errorf("DecodeCount(%v, %v, 10) = %v, %v, %q; want %v, %v, \"0.05 x decode_s + 1\"", c.count, c.expected, agrees, above, slack, c.agrees, c.above)
		}
	}
}
