package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/validate"
)

func TestCompleteRun(t *testing.T) {
	t.Parallel()
	// Reasoning as long as the demo engine's: the long prompts reach the cap.
	o := harness{sim: longReasoning}.run(t)
	o.mustBeValid(t)
	r := o.res
	if r.Run.Status != contract.StatusComplete {
		t.Fatalf("status %s: %s", r.Run.Status, o.reasons())
	}
	if len(r.Requests) != 22 || r.Quality.Passed != 12 || r.Quality.Total != 12 {
		t.Fatalf("%d requests, quality %+v", len(r.Requests), r.Quality)
	}
	want := map[string]contract.Counts{
		"warmup":      {Planned: 1, Attempted: 1, Truncated: 1},
		"performance": {Planned: 9, Attempted: 9, Completed: 3, Truncated: 6},
		"sanity":      {Planned: 12, Attempted: 12, Completed: 12},
		"concurrency": {},
	}
	for phase, w := range want {
		if got := *r.RequestCounts.Phase(phase); got != w {
			t.Errorf("%s counts %+v, want %+v", phase, got, w)
		}
	}
	// Count identities and sources on a normal request.
	q := o.req(t, "performance-prompt-4k-r1")
	if *q.Tokens.InputTokens != 4089 || *q.Tokens.CachedTokens+*q.Tokens.ReadTokens != *q.Tokens.InputTokens {
		t.Errorf("tokens %+v", q.Tokens)
	}
	if *q.Sources.CachedTokens != measure.SrcCachedUsage || *q.Sources.ReadTokens != measure.SrcPromptN || *q.Sources.DecodeTokens != measure.SrcPredictedN {
		t.Errorf("sources %+v", q.Sources)
	}
	if q.Status != contract.Truncated || *q.FinishReason != "length" || q.Timings.FirstAnswerS != nil {
		t.Errorf("a capped 4K request: %+v", q)
	}
	if r.Run.OptionalDurationS != nil || r.Missing["/run/optional_duration_s"] == "" || len(r.ConcurrencyRounds) != 0 {
		t.Error("optional duration must be null with a reason when not selected")
	}
	// Summaries: all five metrics for each performance case.
	if len(r.Summaries) != 15 {
		t.Errorf("%d summaries, want 15", len(r.Summaries))
	}
	fa := summary(t, r, "prompt-16k", "first_answer_s")
	if fa.N != 0 || fa.Median != nil || len(fa.Excluded) != 3 || !strings.Contains(fa.Excluded[0].Reason, "output cap (finish_reason length) while still reasoning") {
		t.Errorf("first-answer summary of capped requests: %+v", fa)
	}
	readme, _ := os.ReadFile(filepath.Join(o.dir, contract.ReadmeFile))
	for _, want := range []string{"| prompt-16k | 3/3 |", "Sanity checks: 12/12", "left out (fixed cost)", "Cached (reused)"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	// The simulator speaks as llama.cpp b9928 here: the limitations follow
	// that build (its ignored fields, the budget it cannot be sent).
	for _, want := range []string{"reads repeat_penalty, not the spec's repetition_penalty", "b9928 ignores reasoning_budget_tokens and the top-level reasoning_effort", "Reasoning budget: not verifiable"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not state the identified build's limitation %q", want)
		}
	}
}

func TestOptionalConcurrency(t *testing.T) {
	t.Parallel()
	// Long enough a stream per request that the queue behind one slot
	// dominates any scheduling noise.
	o := harness{optional: true, slots: 1, decodeTPS: 20000, sim: longReasoning}.run(t)
	o.mustBeValid(t)
	r := o.res
	if len(r.Requests) != 34 || len(r.ConcurrencyRounds) != 3 || r.Run.OptionalDurationS == nil {
		t.Fatalf("%d requests, %d rounds", len(r.Requests), len(r.ConcurrencyRounds))
	}
	for _, rd := range r.ConcurrencyRounds {
		if len(rd.RequestIDs) != 4 || rd.OutputTokens == nil || rd.AggregateTPS == nil || rd.WallS == nil || rd.Failed != 0 {
			t.Errorf("round %+v", rd)
		}
	}
	if got := r.RequestCounts.Concurrency; got.Planned != 12 || got.Attempted != 12 {
		t.Errorf("concurrency counts %+v", got)
	}
	// One slot: the four requests queue, and the client's clock (not any
	// engine field) shows the wait.
	var ttfts []float64
	stream := math.Inf(1) // the shortest time a request streamed
	for c := 1; c <= 4; c++ {
		q := o.req(t, protocol.ConcurrencyID(2, c))
		if q.Seed != 4+c || *q.Round != 2 || q.Concurrency != 4 {
			t.Errorf("%s: seed %d round %d", q.ID, q.Seed, *q.Round)
		}
		ttfts = append(ttfts, *q.Timings.TTFTS)
		stream = min(stream, *q.Timings.TotalS-*q.Timings.TTFTS)
	}
	maxT, minT := slices.Max(ttfts), slices.Min(ttfts)
	// The last in the queue waits for the three before it to stream, so
	// its first token comes at least one request's streaming after the
	// first one's; four slots would start them together. Each duration is
	// one stream's readings, and scheduling noise on a busy machine delays
	// every request alike, so no fixed time is assumed.
	if maxT-minT < stream {
		t.Errorf("queued requests should wait for the slot: TTFTs %v, spread below one request's streaming (%.4f s)", ttfts, stream)
	}
	if len(r.Summaries) != 20 {
		t.Errorf("%d summaries, want 20", len(r.Summaries))
	}
}

func TestEarlyEOSAndWrongAnswers(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-short-r1": {ReasoningTokens: i(5), AnswerTokens: i(3)}, // early EOS
		"sanity-I1":            {Answer: s(`{"ok": true, "count": 3.0}`)},
		"sanity-I2":            {Answer: s("```json\n[-4,1,2,9]\n```")},
		"sanity-I3":            {Answer: s(`{"project":"Orion","build":17,"build":17}`)},
		"sanity-I4":            {Answer: s("ready")},
		"sanity-T1":            {ToolCall: &simengine.ToolCallSpec{Name: "lookup_record", Arguments: `{"id": "A-17"`}},
		"sanity-T2":            {NoToolCall: true},
		"sanity-T3":            {ToolCall: &simengine.ToolCallSpec{Name: "convert_units", Arguments: `{"value": 3, "from_unit": "km", "to_unit": "m", "x": 1}`}},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	short := o.req(t, "performance-short-r1")
	if short.Status != contract.Completed || *short.Tokens.OutputTokens != 8 {
		t.Errorf("early EOS: %s, %v tokens", short.Status, short.Tokens.OutputTokens)
	}
	wants := map[string]string{
		"I1": "float", "I2": "malformed output", "I3": "malformed output", "I4": "wrong answer",
		"T1": "malformed tool-call arguments", "T2": "no structured tool call", "T3": "extra key",
	}
	for id, reason := range wants {
		q := o.req(t, "sanity-"+id)
		if q.Evaluation == nil || q.Evaluation.Passed || !strings.Contains(q.Evaluation.Reason, reason) {
			t.Errorf("%s: %+v, want a failure mentioning %q", id, q.Evaluation, reason)
		}
		if q.Status != contract.Completed {
			t.Errorf("%s: a wrong answer is still a completed request, got %s", id, q.Status)
		}
	}
	if o.res.Quality.Passed != 5 || o.res.Quality.Categories.Instruction.Passed != 0 || o.res.Quality.Categories.ToolCall.Passed != 1 {
		t.Errorf("quality %+v", o.res.Quality)
	}
	if o.res.Run.Status != contract.StatusComplete {
		t.Errorf("wrong answers do not change the status: %s (%s)", o.res.Run.Status, o.reasons())
	}
}

func TestCapTruncation(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"sanity-R1": {ReasoningTokens: i(5000)},                                                                                                              // the cap inside reasoning
		"sanity-T4": {ReasoningTokens: i(2040), ToolCall: &simengine.ToolCallSpec{Name: "get_build_status", Arguments: `{"project": "Orion", "build": 17}`}}, // cap inside the arguments
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	for _, id := range []string{"sanity-R1", "sanity-T4"} {
		q := o.req(t, id)
		if q.Status != contract.Truncated || q.Evaluation.Passed || !strings.Contains(q.Evaluation.Reason, "truncated") {
			t.Errorf("%s: %s %+v", id, q.Status, q.Evaluation)
		}
		if *q.Tokens.OutputTokens != protocol.SanityCap {
			t.Errorf("%s: %d output tokens", id, *q.Tokens.OutputTokens)
		}
	}
	// The partial call is evidence, not a call.
	if tc := o.outs["sanity-T4"].ToolCalls; len(tc) != 1 || strings.HasSuffix(tc[0].Arguments, "}") {
		t.Errorf("partial call evidence %+v", tc)
	}
}

func TestStreamFaults(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-short-r1":      {ErrorEventAfter: i(3)},
		"performance-prompt-4k-r1":  {CutAfter: i(10)},
		"performance-prompt-16k-r1": {NoDone: true},
		"performance-short-r2":      {MalformedAfter: i(4)},
		"performance-prompt-4k-r2":  {DuplicateKeys: true},
		"performance-prompt-16k-r2": {InvalidUTF8After: i(2)},
		"performance-short-r3":      {HTML: true},
		"performance-prompt-4k-r3":  {LongLine: true},
		"performance-prompt-16k-r3": {HTTPStatus: 500, ErrorMessage: "out of memory"},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	wants := map[string]string{
		"performance-short-r1":      "stream_error",
		"performance-prompt-4k-r1":  "truncated_stream",
		"performance-prompt-16k-r1": "truncated_stream",
		"performance-short-r2":      "malformed_stream",
		"performance-prompt-4k-r2":  "malformed_stream",
		"performance-prompt-16k-r2": "malformed_stream",
		"performance-short-r3":      "malformed_stream",
		"performance-prompt-4k-r3":  "limit_exceeded",
		"performance-prompt-16k-r3": "http_status",
	}
	for id, kind := range wants {
		q := o.req(t, id)
		if q.Status != contract.Failed || q.Error == nil || q.Error.Kind != kind {
			t.Errorf("%s: %s %+v, want failed %s", id, q.Status, q.Error, kind)
		}
		if s := summary(t, o.res, q.CaseID, "total_s"); !strings.Contains(excluded(s, id), "failed") {
			t.Errorf("%s is not excluded from the %s summary: %+v", id, q.CaseID, s.Excluded)
		}
	}
	if q := o.req(t, "performance-short-r1"); !strings.Contains(q.Error.Message, "peg-native") {
		t.Errorf("the server's message is lost: %q", q.Error.Message)
	}
	if q := o.req(t, "performance-prompt-16k-r3"); !strings.Contains(q.Error.Message, "out of memory") {
		t.Errorf("HTTP error message: %q", q.Error.Message)
	}
	if len(o.outs["performance-short-r2"].Malformed) == 0 {
		t.Error("the malformed line is not kept as evidence")
	}
	// Every request failed but the server answered /health: the run goes on.
	if o.res.RequestCounts.Sanity.Completed != 12 || o.res.Run.Status != contract.StatusComplete {
		t.Errorf("status %s (%s), sanity %+v", o.res.Run.Status, o.reasons(), o.res.RequestCounts.Sanity)
	}
	for _, c := range protocol.PerformanceCases() {
		if s := summary(t, o.res, c, "decode_tps"); s.N != 0 || o.res.Missing[contract.Pointer("summaries", 0, "median")] == "" {
			t.Errorf("%s: n=%d, want 0 with null statistics and reasons", c, s.N)
		}
	}
}

func TestMissingUsageTimingsAndKeepAlives(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-short-r1":     {OmitUsage: true},
		"performance-short-r2":     {OmitTimings: true},
		"performance-short-r3":     {UsageOnFinish: true},
		"performance-prompt-4k-r1": {KeepAlives: 3, EmptyDeltas: 4},
		"performance-prompt-4k-r2": {PredictedNSkew: i(40)},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	r := o.res
	q := o.req(t, "performance-short-r1")
	if q.Tokens.InputTokens != nil || q.Tokens.ReadTokens == nil || *q.Sources.ReadTokens != measure.SrcPromptN || q.Metrics.DecodeTPS == nil {
		t.Errorf("no usage: %+v %+v", q.Tokens, q.Sources)
	}
	if r.Missing["/requests/1/tokens/input_tokens"] == "" {
		t.Error("input_tokens null without a reason")
	}
	q = o.req(t, "performance-short-r2")
	if q.Metrics.PromptTPS != nil || q.Metrics.DecodeTPS != nil || q.Tokens.OutputTokens == nil || q.Status != contract.Completed {
		t.Errorf("no timings: rates must be null, counts kept: %+v %+v", q.Metrics, q.Tokens)
	}
	if s := summary(t, r, "short", "decode_tps"); s.N != 2 || !strings.Contains(excluded(s, q.ID), "decode_tps is null") {
		t.Errorf("decode summary %+v", s)
	}
	q = o.req(t, "performance-short-r3")
	if q.Tokens.InputTokens != nil || q.Tokens.CachedTokens == nil || *q.Sources.CachedTokens != measure.SrcCachedTimings {
		t.Errorf("timings on the finish chunk: %+v %+v", q.Tokens, q.Sources)
	}
	// Keep-alives and empty deltas never count as the first token.
	q = o.req(t, "performance-prompt-4k-r1")
	var events [][2]any
	decode(t, q.ID+"'s events", o.outs[q.ID].Events, &events)
	comments, empties := 0, 0
	for _, e := range events {
		switch e[1] {
		case "comment":
			comments++
		case "empty":
			empties++
			if e[0].(float64) >= *q.Timings.TTFTS {
				t.Error("an empty delta arrived after TTFT; the test proves nothing")
			}
		}
	}
	if comments != 3 || empties != 4 || *q.FirstDeltaKind != "reasoning" {
		t.Errorf("comments %d, empty deltas %d, first delta %v", comments, empties, *q.FirstDeltaKind)
	}
	q = o.req(t, "performance-prompt-4k-r2")
	// predicted_n is off by 40 from what the rate implies: decode_tokens is
	// the implied count, with a note, and the raw timings stay as evidence.
	if q.TokenAccountingNote == nil || !strings.Contains(*q.TokenAccountingNote, "disagrees") || *q.Tokens.DecodeTokens == *q.Tokens.OutputTokens+40 ||
		*q.Sources.DecodeTokens != measure.SrcPredictedRate {
		t.Errorf("predicted_n skew: decode %d output %d note %v", *q.Tokens.DecodeTokens, *q.Tokens.OutputTokens, q.TokenAccountingNote)
	}
}

// TestTimeout: a request the engine never answers (queued without
// headers, or headers then silence, for longer than any test runs) fails
// as a timeout once the request timeout has passed from its dispatch, and
// the run goes on.
func TestTimeout(t *testing.T) {
	t.Parallel()
	never := int(time.Hour / time.Millisecond)
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-short-r1":     {StallBeforeMS: never}, // queued: no headers
		"performance-prompt-4k-r1": {StallAfterMS: never},  // headers, then silence
	}}
	o := harness{scenario: sc, timeout: 400 * time.Millisecond}.run(t)
	o.mustBeValid(t)
	for _, id := range []string{"performance-short-r1", "performance-prompt-4k-r1"} {
		q := o.req(t, id)
		if q.Status != contract.Failed || q.Error.Kind != "timeout" {
			t.Fatalf("%s: %s %+v", id, q.Status, q.Error)
		}
		if *q.Timings.TotalS < 0.4 {
			t.Errorf("%s: total %v s, want the 0.4 s timeout from dispatch or more", id, *q.Timings.TotalS)
		}
	}
	if o.res.RequestCounts.Sanity.Attempted != 12 {
		t.Error("a timed-out request does not end the run while the server answers /health")
	}
}

func TestServerDeath(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{"performance-prompt-4k-r2": {Die: true}}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	r := o.res
	if q := o.req(t, "performance-prompt-4k-r2"); q.Status != contract.Failed {
		t.Fatalf("the request the server died in: %s", q.Status)
	}
	after := false
	for _, q := range r.Requests {
		if q.ID == "performance-prompt-4k-r2" {
			after = true
			continue
		}
		if after && (q.Status != contract.Skipped || !strings.Contains(q.Error.Message, "/health")) {
			t.Errorf("%s: %s %+v, want skipped after the failed health check", q.ID, q.Status, q.Error)
		}
	}
	if r.Run.Status != contract.StatusPartial {
		t.Errorf("status %s, want partial", r.Run.Status)
	}
	for _, q := range r.Requests {
		if q.Phase == "sanity" && (q.Evaluation == nil || q.Evaluation.Passed || !strings.Contains(q.Evaluation.Reason, "skipped")) {
			t.Errorf("%s: %+v; all twelve sanity IDs appear with a false verdict", q.ID, q.Evaluation)
		}
	}
	if r.Quality.Total != 12 || r.RequestCounts.Sanity.Skipped != 12 {
		t.Errorf("quality %+v counts %+v", r.Quality, r.RequestCounts.Sanity)
	}
}

func TestWarmupFailureSkipsEverything(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{"warmup": {HTTPStatus: 503, ErrorMessage: "Loading model"}}}
	o := harness{scenario: sc, optional: true}.run(t)
	o.mustBeValid(t)
	r := o.res
	if r.RequestCounts.Warmup.Failed != 1 || r.RequestCounts.Performance.Skipped != 9 || r.RequestCounts.Sanity.Skipped != 12 || r.RequestCounts.Concurrency.Skipped != 12 {
		t.Fatalf("counts %+v", r.RequestCounts)
	}
	if r.Run.Status != contract.StatusPartial || len(r.Requests) != 34 {
		t.Errorf("status %s, %d records", r.Run.Status, len(r.Requests))
	}
}

// cancelInFlight puts a proxy in front of the engine that calls cancel
// once the engine has sent the headers of the answer to request id: the
// request is then in flight.
func cancelInFlight(id string, cancel context.CancelFunc) func(testing.TB, string) string {
	return func(t testing.TB, engine string) string {
		target, err := url.Parse(engine)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.FlushInterval = -1
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("[case "+id+"]")) {
				w = headersThen{w, cancel}
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// headersThen sends the headers on at once, then calls then.
type headersThen struct {
	http.ResponseWriter
	then func()
}

func (h headersThen) WriteHeader(code int) {
	h.ResponseWriter.WriteHeader(code)
	_ = http.NewResponseController(h.ResponseWriter).Flush()
	h.then()
}

func (h headersThen) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// TestCancellation: a run cancelled while a request is in flight (the
// engine sent its headers, then nothing) fails that request as cancelled
// and skips the rest.
func TestCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{"performance-prompt-16k-r1": {StallAfterMS: 5000}}}
	o := harness{scenario: sc, ctx: ctx, front: cancelInFlight("performance-prompt-16k-r1", cancel)}.run(t)
	o.mustBeValid(t)
	q := o.req(t, "performance-prompt-16k-r1")
	if q.Status != contract.Failed || q.Error.Kind != "cancelled" {
		t.Fatalf("in-flight request: %s %+v", q.Status, q.Error)
	}
	next := o.req(t, "performance-short-r2")
	if next.Status != contract.Skipped || !strings.Contains(next.Error.Message, "interrupted") {
		t.Errorf("next request: %s %+v", next.Status, next.Error)
	}
	if o.res.Run.Status != contract.StatusPartial || !o.rec.Interrupted {
		t.Errorf("status %s", o.res.Run.Status)
	}
}

func TestPayloadReuseAndRefusedSetting(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-prompt-4k-r2": {CachedTokens: i(4088)},                                                // the payload came from the cache
		"sanity-R2":                {CachedTokens: i(4000)},                                                // reuse outside the performance stage
		"sanity-I2":                {SlotParams: map[string]json.RawMessage{"temperature": []byte("0.0")}}, // resolved otherwise
		"performance-short-r1":     {CachedTokens: i(16)},                                                  // 8 + 8: the boundary allowance
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	r := o.res
	if r.Run.Status != contract.StatusNonconforming {
		t.Fatalf("status %s", r.Run.Status)
	}
	reasons := o.reasons()
	for _, want := range []string{"performance-prompt-4k-r2: unexpected cache reuse", "temperature = 0, not the 1 sent"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("reasons lack %q: %s", want, reasons)
		}
	}
	if strings.Contains(reasons, "sanity-R2") || strings.Contains(reasons, "performance-short-r1") {
		t.Errorf("only a performance request's payload reuse is nonconforming: %s", reasons)
	}
	for _, id := range []string{"performance-prompt-4k-r2"} {
		for _, m := range contract.SummaryMetrics() {
			if s := summary(t, r, "prompt-4k", m); !strings.Contains(excluded(s, id), "unexpected cache reuse") {
				t.Errorf("%s not excluded from %s: %+v", id, m, s.Excluded)
			}
		}
	}
	if s := summary(t, r, "short", "prompt_tps"); s.N != 3 {
		t.Errorf("cached 16 = 8 + 8 is within the allowance: %+v", s)
	}
	if chk := o.outs["sanity-I2"].SettingsCheck; chk.SeenFor("sanity-I2")["temperature"] != 0 || len(chk.Mismatches) == 0 {
		t.Errorf("settings evidence: %+v", chk)
	}
}

func TestBadRequestIsNonconforming(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{"sanity-T2": {HTTPStatus: 400, ErrorMessage: "Cannot use custom grammar constraints with tools."}}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	if o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(o.reasons(), "HTTP 400") {
		t.Errorf("status %s: %s", o.res.Run.Status, o.reasons())
	}
	if q := o.req(t, "sanity-T3"); q.Status != contract.Completed {
		t.Errorf("no retry and no abort: the next request runs (%s)", q.Status)
	}
}

func TestRemoteServerIsNonconforming(t *testing.T) {
	t.Parallel()
	// A name that is not loopback (and resolves nowhere): the run is
	// nonconforming whatever the server would have answered.
	o := harness{url: "http://remote.invalid:9"}.run(t)
	o.mustBeValid(t)
	if o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(o.reasons(), "not on loopback") {
		t.Errorf("status %s: %s", o.res.Run.Status, o.reasons())
	}
	if q := o.req(t, "warmup"); q.Status != contract.Failed || q.Error.Kind != "connection_error" {
		t.Errorf("warmup: %s %+v", q.Status, q.Error)
	}
}

func TestSimulatorIsNeverConforming(t *testing.T) {
	t.Parallel()
	o := harness{simulated: true}.run(t)
	o.mustBeValid(t)
	if o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(o.reasons(), "simulated engine") {
		t.Errorf("status %s: %s", o.res.Run.Status, o.reasons())
	}
}

func TestRunTwiceFlagsReuse(t *testing.T) {
	t.Parallel()
	// The same server answering the protocol twice: the second run's
	// prompts come from the engine's prompt cache (all but one token), so
	// its payload reuse is flagged and the run is nonconforming.
	sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 300, Accuracy: 1, Slots: 1,
		ContextTokens: 32768, ModelPath: "m.gguf", Bundle: bundle(t), Scenario: &simengine.Scenario{Props: asLlama}})
	url := resulttest.Unmarked(t, sim)
	first := harness{url: url}.run(t)
	if first.res.Run.Status != contract.StatusComplete {
		t.Fatalf("first run: %s (%s)", first.res.Run.Status, first.reasons())
	}
	second := harness{url: url}.run(t)
	second.mustBeValid(t)
	if second.res.Run.Status != contract.StatusNonconforming || !strings.Contains(second.reasons(), "unexpected cache reuse") {
		t.Fatalf("second run: %s (%s)", second.res.Run.Status, second.reasons())
	}
	if s := summary(t, second.res, "prompt-16k", "prompt_tps"); s.N != 0 {
		t.Errorf("reused payloads stay out of the speed summaries: %+v", s)
	}
}

// TestLlamaCaptures replays real llama-server streams for some requests and
// checks that each result field comes from the source the spec's table names.
func TestLlamaCaptures(t *testing.T) {
	t.Parallel()
	dir := sharedpath.Path(t, "wire", "llama-server", "captures")
	sc := &simengine.Scenario{CapturesDir: dir, Requests: map[string]simengine.Behaviour{
		"warmup":                   {Replay: "chat-warmup-stream-max128"},
		"performance-prompt-4k-r1": {Replay: "chat-prompt4k-stream-max512"},
		"sanity-T1":                {Replay: "scripted-T1-tools-auto-stream"},
		"sanity-I4":                {Replay: "grammar-think-warmup-stream-max128"},
		"performance-short-r1":     {Replay: "rawmodel-warmup-max512-peg-error-after-invalid-utf8"},
		"performance-short-r2":     {Replay: "ctx2048-prompt100rec-stream-context-fills-during-generation"},
		"sanity-T2":                {Replay: "ctx2048-prompt4k-stream-exceeds-context"},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	w := o.req(t, "warmup")
	// chat-warmup-stream-max128: usage {completion 128, prompt 30, cached 0},
	// timings {prompt_n 30, prompt_ms 3.148, predicted_n 128, predicted_ms 291.187}.
	if *w.Tokens.InputTokens != 30 || *w.Tokens.CachedTokens != 0 || *w.Tokens.ReadTokens != 30 || *w.Tokens.OutputTokens != 128 || *w.Tokens.DecodeTokens != 128 {
		t.Errorf("warmup tokens %+v", w.Tokens)
	}
	if !approx(*w.Timings.PromptS, 0.003148) || !approx(*w.Timings.DecodeS, 0.291187) || !approx(*w.Metrics.DecodeTPS, 128/0.291187) {
		t.Errorf("warmup timings %+v metrics %+v", w.Timings, w.Metrics)
	}
	p4 := o.req(t, "performance-prompt-4k-r1")
	if *p4.Tokens.InputTokens != 3833 || *p4.Tokens.CachedTokens != 5 || *p4.Sources.InputTokens != "usage.prompt_tokens" {
		t.Errorf("4K tokens %+v", p4.Tokens)
	}
	if !strings.Contains(o.reasons(), "3833 of prompt-4k is not within 2%") {
		t.Errorf("the capture's 3,833-token 4K prompt breaks the length rule: %s", o.reasons())
	}
	if q := o.req(t, "sanity-T1"); !q.Evaluation.Passed || *q.FirstDeltaKind != "reasoning" || *q.FinishReason != "tool_calls" {
		t.Errorf("T1 from the real tool-call stream: %+v", q.Evaluation)
	}
	if q := o.req(t, "sanity-I4"); !q.Evaluation.Passed {
		t.Errorf("I4 (READY after reasoning): %+v", q.Evaluation)
	}
	if q := o.req(t, "performance-short-r1"); q.Status != contract.Failed || q.Error.Kind != "stream_error" || q.TokenAccountingNote != nil && q.Tokens.InputTokens != nil {
		t.Errorf("error after 200: %s %+v", q.Status, q.Error)
	}
	if q := o.req(t, "performance-short-r2"); q.Status != contract.Truncated || *q.Tokens.OutputTokens != 211 {
		t.Errorf("context filled during generation ends like the cap: %s %v", q.Status, q.Tokens.OutputTokens)
	}
	if q := o.req(t, "sanity-T2"); q.Status != contract.Failed || q.Error.Kind != "http_status" {
		t.Errorf("HTTP 400 exceed_context_size_error: %s %+v", q.Status, q.Error)
	}
}

func TestNullReasonsAndUnknownFormat(t *testing.T) {
	t.Parallel()
	o := harness{}.run(t)
	o.mustBeValid(t)
	data, err := os.ReadFile(filepath.Join(o.dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(name string, f func(m map[string]any)) string {
		var m map[string]any
		decode(t, contract.ResultsFile, data, &m)
		f(m)
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{contract.OutputsFile, contract.ConfigFile, contract.TemplateFile, contract.ReadmeFile} {
			b, err := os.ReadFile(filepath.Join(o.dir, n))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, n), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		out, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, contract.ResultsFile), out, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name string
		f    func(m map[string]any)
		want string
	}{
		{"unknown schema version", func(m map[string]any) { m["schema_version"] = 2 }, "unknown schema version"},
		{"unknown format", func(m map[string]any) { m["format"] = "strata-bench-legacy" }, "unknown format"},
		{"null without reason", func(m map[string]any) { delete(m["missing"].(map[string]any), "/model/revision") }, "/model/revision: null without a reason"},
		{"reason for a value", func(m map[string]any) { m["missing"].(map[string]any)["/run/id"] = "x" }, "which is not null"},
		{"unknown key", func(m map[string]any) { m["run"].(map[string]any)["score"] = 99 }, "score"},
		{"integer as float", func(m map[string]any) {
			m["quality"].(map[string]any)["passed"] = 12.5
		}, "/quality/passed"},
		{"tampered verdict", func(m map[string]any) {
			req := m["requests"].([]any)[10].(map[string]any)
			req["evaluation"].(map[string]any)["passed"] = false
		}, "quality"},
		{"tampered metric", func(m map[string]any) {
			req := m["requests"].([]any)[2].(map[string]any)
			req["metrics"].(map[string]any)["decode_tps"] = 99999.0
		}, "decode_tps"},
		{"absolute path", func(m map[string]any) {
			m["artifacts"].([]any)[0].(map[string]any)["path"] = "/etc/passwd"
		}, "/artifacts/0/path"},
		{"status complete after a skip", func(m map[string]any) {
			req := m["requests"].([]any)[21].(map[string]any)
			req["status"] = "skipped"
		}, "/requests/21"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := validate.Dir(mutate(c.name, c.f), bundle(t))
			if err != nil {
				t.Fatal(err)
			}
			all := ""
			for _, x := range v.Violations {
				all += x.String() + "\n"
			}
			if !strings.Contains(all, c.want) {
				t.Errorf("violations lack %q:\n%s", c.want, all)
			}
		})
	}
	// An altered artifact.
	if err := os.WriteFile(filepath.Join(o.dir, contract.OutputsFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, _ := validate.Dir(o.dir, bundle(t))
	found := false
	for _, x := range v.Violations {
		found = found || strings.Contains(x.String(), "changed after the run")
	}
	if !found {
		t.Errorf("an altered outputs.jsonl is not caught: %v", v.Violations)
	}
}

func approx(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }

// TestNothingPrivateReachesTheFolder plants private data where a server can
// put it (props, model path, error messages) and checks every file.
func TestNothingPrivateReachesTheFolder(t *testing.T) {
	t.Parallel()
	planted := []string{"/home/alice", "alice@example.com", "192.168.7.42", "sk-live-ABCDEFGHIJKLMNOPQRSTU", "/srv/private/models", "fe80::aa:bb:cc:dd"}
	props := map[string]json.RawMessage{
		"build_info":  json.RawMessage(`"b9928-81ff7ab"`),
		"model_path":  json.RawMessage(`"/home/alice/models/q.gguf"`),
		"model_alias": json.RawMessage(`"/srv/private/models/q.gguf"`),
		"owner":       json.RawMessage(`"alice@example.com via 192.168.7.42 and fe80::aa:bb:cc:dd"`),
	}
	sc := &simengine.Scenario{Props: props, Requests: map[string]simengine.Behaviour{
		"sanity-I1": {HTTPStatus: 500, ErrorMessage: "backend 192.168.7.42 rejected key sk-live-ABCDEFGHIJKLMNOPQRSTU from /home/alice"},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	entries, _ := os.ReadDir(o.dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(o.dir, e.Name()))
		for _, p := range planted {
			if strings.Contains(string(b), p) {
				t.Errorf("%s contains %q", e.Name(), p)
			}
		}
	}
	if id := o.res.Model.ID; id == nil || strings.Contains(*id, "/") || *id != "model-00001-of-00001.gguf" {
		t.Errorf("model id %v: a machine path never reaches a result", id)
	}
}

// TestHostileStreamsEndTheirRequest: a stream that never closes its event,
// one of endless tiny deltas and one of endless content each fail their
// request at a bound, with the heap bounded, the rest of the run goes on,
// and the folder validates.
func TestHostileStreamsEndTheirRequest(t *testing.T) {
	t.Parallel()
	sc := &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-short-r1":      {Flood: "lines"},
		"performance-prompt-4k-r1":  {Flood: "deltas"},
		"performance-prompt-16k-r1": {Flood: "content"},
	}}
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	o := harness{scenario: sc}.run(t)
	close(stop)
	heap := <-peak
	o.mustBeValid(t)
	for id, says := range map[string]string{
		"performance-short-r1":      "SSE event larger than the limit",
		"performance-prompt-4k-r1":  "more than 65536 events",
		"performance-prompt-16k-r1": "grew past 4194304 bytes",
	} {
		q := o.req(t, id)
		if q.Status != contract.Failed || q.Error == nil || q.Error.Kind != record.ErrLimit || !strings.Contains(q.Error.Message, says) {
			t.Errorf("%s: %s %+v, want failed %s (%s)", id, q.Status, q.Error, record.ErrLimit, says)
		}
	}
	if o.res.RequestCounts.Sanity.Completed != 12 {
		t.Errorf("the run did not go on: sanity %+v", o.res.RequestCounts.Sanity)
	}
	// The bounds hold what one request may keep to about 10 MiB; the
	// whole run (bundle, server and runner in this process) stays far
	// below what the unbounded streams took (gigabytes).
	if heap > 400<<20 {
		t.Errorf("peak heap %d MiB", heap>>20)
	}
	t.Logf("peak heap in use: %d MiB", heap>>20)
}

// TestContradictoryEngineNumbers: streams whose usage sends a count as a
// JSON string, claims more cached tokens than the prompt, or reports a
// decode rate that implies ten thousand times the tokens it returned. The
// run writes nulls with reasons where those numbers would be, the folder
// validates (report derives the same nulls from outputs.jsonl), and the
// raw values stay there as received.
func TestContradictoryEngineNumbers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := func(usage, timings string) string {
		return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
			`data: {"choices":[{"index":0,"delta":{"content":"READY"}}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
			`data: {"choices":[],"usage":` + usage + `,"timings":` + timings + "}\n\ndata: [DONE]\n\n"
	}
	const timings = `{"cache_n":0,"prompt_n":30,"prompt_ms":3,"predicted_n":3,"predicted_ms":6,"predicted_per_second":500}`
	for name, body := range map[string]string{
		"string-count":         stream(`{"completion_tokens":"999999","prompt_tokens":30}`, timings),
		"cached-over-input":    stream(`{"completion_tokens":3,"prompt_tokens":30,"prompt_tokens_details":{"cached_tokens":1000}}`, timings),
		"rate-over-completion": stream(`{"completion_tokens":3,"prompt_tokens":30}`, `{"prompt_n":30,"prompt_ms":3,"predicted_n":3,"predicted_ms":30,"predicted_per_second":1000000}`),
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".resp.raw"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc := &simengine.Scenario{CapturesDir: dir, Requests: map[string]simengine.Behaviour{
		"performance-short-r1": {Replay: "string-count"},
		"performance-short-r2": {Replay: "cached-over-input"},
		"performance-short-r3": {Replay: "rate-over-completion"},
	}}
	o := harness{scenario: sc}.run(t)
	o.mustBeValid(t)
	missing := func(q contract.Request, ptr string) string {
		for i, r := range o.res.Requests {
			if r.ID == q.ID {
				return o.res.Missing[contract.Pointer("requests", i)+ptr]
			}
		}
		return ""
	}
	q := o.req(t, "performance-short-r1")
	if q.Tokens.OutputTokens != nil || !strings.Contains(missing(q, "/tokens/output_tokens"), `usage.completion_tokens ("999999") is not a nonnegative JSON integer`) {
		t.Errorf("a count sent as a string: output_tokens %v (%s)", q.Tokens.OutputTokens, missing(q, "/tokens/output_tokens"))
	}
	if !strings.Contains(string(o.outs[q.ID].Usage), `"completion_tokens":"999999"`) {
		t.Errorf("the raw usage is not kept as received: %s", o.outs[q.ID].Usage)
	}
	q = o.req(t, "performance-short-r2")
	if q.Tokens.ReadTokens != nil || q.Metrics.PromptTPS != nil || !strings.Contains(missing(q, "/metrics/prompt_tps"), "contradictory evidence: usage.prompt_tokens_details.cached_tokens (1000) exceeds usage.prompt_tokens (30)") {
		t.Errorf("cached above input: read %v prompt_tps %v (%s)", q.Tokens.ReadTokens, q.Metrics.PromptTPS, missing(q, "/metrics/prompt_tps"))
	}
	// The engine's cached count stays, and the reuse rule holds it to it.
	if q.Tokens.CachedTokens == nil || *q.Tokens.CachedTokens != 1000 || !strings.Contains(o.reasons(), "performance-short-r2: unexpected cache reuse") {
		t.Errorf("cached %v, reasons %s", q.Tokens.CachedTokens, o.reasons())
	}
	q = o.req(t, "performance-short-r3")
	if q.Tokens.DecodeTokens != nil || q.Metrics.DecodeTPS != nil || !strings.Contains(missing(q, "/metrics/decode_tps"), "the count that implies (30000) exceeds the API's completion_tokens (3)") {
		t.Errorf("a rate far from the count: decode %v decode_tps %v (%s)", q.Tokens.DecodeTokens, q.Metrics.DecodeTPS, missing(q, "/metrics/decode_tps"))
	}
	if s := summary(t, o.res, "short", "decode_tps"); !strings.Contains(excluded(s, q.ID), "contradictory evidence") {
		t.Errorf("decode summary %+v", s)
	}
}
