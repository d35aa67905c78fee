package simengine

import (
	"encoding/json"
	"math"
	"time"
)

// engineWire writes the streaming chat wire of a dialect other than
// llama-server's. generate drives it with the simulator's model (prefill,
// the plan's tokens, the finish reason); it only changes the shapes.
type engineWire struct {
	s            *Server
	cw           *chunkWriter
	dialect      string
	includeUsage bool
	promptTokens int
	cached       int
	queued       time.Duration
	b            Behaviour
	task         int64
	roleSent     bool

	prefillStart time.Time
	promptDur    time.Duration
	first, last  time.Time
	tokens       int
	reasoning    int
	// tool is a whole tool call being gathered (Ollama, TabbyAPI send it in
	// one delta).
	tool     map[string]any
	toolArgs string
	// native is Ollama's own /api/chat, whose NDJSON lines ollamaLine
	// writes.
	native bool
}

func (s *Server) newEngineWire(cw *chunkWriter, req *chatRequest, promptTokens, cached int, queued time.Duration, b Behaviour) *engineWire {
	cw.fingerprint = ""
	if s.cfg.Dialect == DialectOllama {
		// ollama openai/openai.go ToChunk (@00988753) and toChunk and
		// FinishChunk (@fb30760): every chunk.
		cw.fingerprint = "fp_ollama"
	}
	return &engineWire{s: s, cw: cw, dialect: s.cfg.Dialect, includeUsage: req.StreamOptions.IncludeUsage,
		promptTokens: promptTokens, cached: cached, queued: queued, b: b, native: req.native}
}

// lead is how many decode steps the first token waits after the prefill:
// none in vLLM, whose first token is sampled by the prefill step (its
// generation_time_ms then covers completion_tokens-1 tokens); one
// elsewhere, as llama-server's timings count it.
func (e *engineWire) lead() int {
	if e.dialect == DialectVLLM {
		return 0
	}
	return 1
}

// write writes one chunk: the engine's envelope (id, object, created,
// model, choices; the fingerprint where the engine sends one) and extra.
func (e *engineWire) write(choices []any, extra map[string]any) {
	m := map[string]any{"id": e.cw.id, "object": "chat.completion.chunk", "created": e.cw.created, "model": e.cw.model, "choices": choices}
	if e.cw.fingerprint != "" {
		m["system_fingerprint"] = e.cw.fingerprint
	}
	if e.dialect == DialectSGLang {
		// SGLang serializes chunks with model_dump_json (no exclude_none).
		m["usage"] = nil
	}
	for k, v := range extra {
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	e.cw.raw("data: " + string(data) + "\n\n")
}

// choice is one choice of a chunk in the engine's shape.
func (e *engineWire) choice(delta map[string]any, finish any) map[string]any {
	c := map[string]any{"index": 0, "delta": delta, "finish_reason": finish}
	switch e.dialect {
	case DialectVLLM, DialectLMStudio:
		c["logprobs"] = nil
	case DialectSGLang:
		c["logprobs"] = nil
		c["matched_stop"] = nil
	}
	return c
}

// sglangDelta fills a DeltaMessage's unset fields with null, as SGLang's
// model_dump_json writes them (python/sglang/srt/entrypoints/openai/
// protocol.py @004c82e0 DeltaMessage{role, content, reasoning_content,
// tool_calls}).
func sglangDelta(d map[string]any) map[string]any {
	out := map[string]any{"role": nil, "content": nil, "reasoning_content": nil, "tool_calls": nil}
	for k, v := range d {
		out[k] = v
	}
	return out
}

// role writes the engine's first chunk.
func (e *engineWire) role() {
	switch e.dialect {
	case DialectVLLM, DialectLMStudio:
		// vllm/entrypoints/openai/chat_completion/serving.py @006c49d4: the
		// first chunk is DeltaMessage(role, content="").
		e.write([]any{e.choice(map[string]any{"role": "assistant", "content": ""}, nil)}, nil)
	case DialectSGLang:
		// serving_chat.py @002897c2: role "assistant", content "".
		e.write([]any{e.choice(sglangDelta(map[string]any{"role": "assistant", "content": ""}), nil)}, nil)
	case DialectIKLlama:
		// server-task.cpp @04786943: llama-server's role chunk.
		e.write([]any{e.choice(map[string]any{"role": "assistant", "content": nil}, nil)}, nil)
	case DialectStrata:
		// serve/server.py @452325a9 openai_chunks: always first, before the
		// engine runs (generate writes it then; later calls are no-ops).
		if !e.roleSent {
			e.strataChunk(obj{{"role", "assistant"}, {"content", ""}}, nil)
			e.roleSent = true
		}
	case DialectOllama, DialectTabbyAPI:
		// Ollama puts role in its deltas (ollamaDelta); TabbyAPI never
		// sends role (endpoints/OAI/utils/chat_completion.py @0158fb48
		// _compose_serialize_stream_chunk).
	}
}

// ollamaDelta is Ollama's delta around d: content always there as a
// string (openai.Delta.Content is any with omitempty, given the message's
// string), reasoning and tool_calls only when set; role in every delta
// before v0.32.6 (openai.go @00988753 ToChunk), in the first one only since
// (openai.go @fb30760 toChunk, includeRole from middleware/openai.go
// ChatWriter.firstChunkSent).
func (e *engineWire) ollamaDelta(d map[string]any) map[string]any {
	od := map[string]any{"content": ""}
	if !e.roleSent || !e.s.ollamaOpenAIStream() {
		od["role"] = "assistant"
		e.roleSent = true
	}
	for k, v := range d {
		od[k] = v
	}
	return od
}

// token writes one token's delta (d is the plan's: reasoning_content,
// content or a tool_calls fragment).
func (e *engineWire) token(d map[string]any) {
	if c, ok := d["content"].(string); !ok || c != "" {
		now := e.s.cfg.Now()
		if e.tokens == 0 {
			e.first = now
		}
		e.last = now
		e.tokens++
	}
	if r, ok := d["reasoning_content"]; ok {
		e.reasoning++
		if e.dialect == DialectVLLM || e.dialect == DialectOllama {
			// vllm/entrypoints/generate/base/protocol.py @022e555d DeltaMessage
			// and ollama openai/openai.go @00988753 Message: "reasoning".
			d = map[string]any{"reasoning": r}
		}
	}
	if tc, ok := d["tool_calls"].([]any); ok && (e.dialect == DialectOllama || e.dialect == DialectTabbyAPI) {
		// Ollama (openai.go @00988753 ToToolCalls) and TabbyAPI
		// (chat_completion.py @0158fb48 _chat_stream_collector) send each
		// call whole.
		frag := tc[0].(map[string]any)
		fn := frag["function"].(map[string]any)
		if e.tool == nil {
			e.tool = map[string]any{"index": 0, "id": frag["id"], "type": "function", "name": fn["name"]}
		}
		e.toolArgs += fn["arguments"].(string)
		return
	}
	switch {
	case e.native:
		e.ollamaToken(d)
	case e.dialect == DialectStrata:
		e.strataDelta(d)
	case e.dialect == DialectSGLang:
		e.write([]any{e.choice(sglangDelta(d), nil)}, nil)
	case e.dialect == DialectOllama:
		e.write([]any{e.choice(e.ollamaDelta(d), nil)}, nil)
	default:
		e.write([]any{e.choice(d, nil)}, nil)
	}
}

// wholeTool is the gathered call in OpenAI's tool_calls shape.
func (e *engineWire) wholeTool() []any {
	return []any{map[string]any{"index": 0, "id": e.tool["id"], "type": "function",
		"function": map[string]any{"name": e.tool["name"], "arguments": e.toolArgs}}}
}

// flushTool writes Ollama's whole call (finish is nil: the finish chunk
// follows).
func (e *engineWire) flushTool(finish any) {
	e.write([]any{e.choice(e.ollamaDelta(map[string]any{"tool_calls": e.wholeTool()}), finish)}, nil)
	e.tool = nil
}

func (e *engineWire) counts(completion int) map[string]any {
	return map[string]any{"prompt_tokens": e.promptTokens, "completion_tokens": completion, "total_tokens": e.promptTokens + completion}
}

// finish writes the finish and usage chunks (generate writes [DONE]).
func (e *engineWire) finish(finish string, emitted int, decodeDur time.Duration) {
	usage := e.includeUsage && !e.b.OmitUsage
	if e.native {
		e.ollamaDone(finish, emitted, decodeDur)
		return
	}
	switch e.dialect {
	case DialectStrata:
		e.strataFinish(finish, emitted, decodeDur)
	case DialectVLLM:
		e.vllmFinish(finish, emitted, usage)
	case DialectSGLang:
		e.sglangFinish(finish, emitted, usage)
	case DialectOllama:
		e.ollamaFinish(finish, emitted, usage)
	case DialectIKLlama:
		e.ikFinish(finish, emitted, usage, decodeDur)
	case DialectLMStudio:
		// LM Studio's OpenAI-compatible stream is not documented
		// (1_developer/3_openai-compat/chat-completions.md @51c92c69):
		// an OpenAI-style finish chunk and a usage chunk of three counts.
		e.write([]any{e.choice(map[string]any{}, finish)}, nil)
		if usage {
			e.write([]any{}, map[string]any{"usage": e.counts(emitted)})
		}
	case DialectTabbyAPI:
		e.tabbyFinish(finish, emitted, usage, decodeDur)
	}
}

// vllmFinish: serving.py @006c49d4: the last choice carries finish_reason
// and vLLM's stop_reason; then, with include_usage, a chunk with choices
// [] and usage (exclude_none: unset details are omitted) and, with
// --enable-per-request-metrics, metrics.
func (e *engineWire) vllmFinish(finish string, emitted int, usage bool) {
	c := e.choice(map[string]any{"content": ""}, finish)
	c["stop_reason"] = nil
	e.write([]any{c}, nil)
	if usage {
		extra := map[string]any{"usage": e.vllmUsage(emitted)}
		if e.s.vllmPerRequestMetrics() && !e.b.OmitTimings {
			extra["metrics"] = e.vllmMetrics(emitted)
		}
		e.write([]any{}, extra)
	}
}

// sglangFinish: serving_chat.py @002897c2: finish_reason in its own chunk
// after the content, with matched_stop; usage chunk with choices [].
func (e *engineWire) sglangFinish(finish string, emitted int, usage bool) {
	c := e.choice(sglangDelta(nil), finish)
	if finish == "stop" {
		c["matched_stop"] = 151645 // Qwen3's <|im_end|>
	}
	e.write([]any{c}, nil)
	if usage {
		// protocol.py @004c82e0 UsageInfo; usage_processor.py @056c7ec2
		// _details_if_cached: details only when cached > 0, else null.
		var details any
		if e.cached > 0 {
			details = map[string]any{"cached_tokens": e.cached}
		}
		e.write([]any{}, map[string]any{"usage": map[string]any{"prompt_tokens": e.promptTokens, "total_tokens": e.promptTokens + emitted,
			"completion_tokens": emitted, "prompt_tokens_details": details, "reasoning_tokens": e.reasoning}})
	}
}

// ollamaFinish: finish_reason from done_reason (tool_calls when a call
// was sent, and since v0.32.6 only in place of stop); usage {prompt,
// completion, total} only, on a chunk of choices [].
func (e *engineWire) ollamaFinish(finish string, emitted int, usage bool) {
	if e.tool != nil {
		e.flushTool(nil)
	}
	if !e.s.ollamaOpenAIStream() {
		// openai.go @00988753: the metrics-only trailer is a chunk of
		// its own, carrying finish_reason.
		e.write([]any{e.choice(e.ollamaDelta(nil), finish)}, nil)
	} else {
		// middleware/openai.go @fb30760 writeResponse: no chunk for the
		// empty trailer once a chunk was sent (a wholly empty answer
		// still opens with its role chunk), then openai.FinishChunk:
		// an empty delta.
		if !e.roleSent {
			e.write([]any{e.choice(e.ollamaDelta(nil), nil)}, nil)
		}
		e.write([]any{e.choice(map[string]any{}, finish)}, nil)
	}
	if usage {
		e.write([]any{}, map[string]any{"usage": e.counts(emitted)})
	}
}

// ikFinish: examples/server/server-task.cpp @8337e4c
// to_json_oaicompat_chat_stream (l.412–470): since #2189 (0a4e10c7f) no
// chunk but the last has usage. The finish chunk, then with include_usage
// a chunk of choices [] and usage, whose
// prompt_tokens_details.cached_tokens is there since #1647 (7b6507dda,
// l.137–144); timings (no cache_n; prompt_n counts the evaluated tokens,
// at least 1) ride on the last.
func (e *engineWire) ikFinish(finish string, emitted int, usage bool, decodeDur time.Duration) {
	timings := map[string]any{}
	if !e.b.OmitTimings {
		timings["timings"] = e.ikTimings(emitted, decodeDur)
	}
	if !usage {
		e.write([]any{e.choice(map[string]any{}, finish)}, timings)
		return
	}
	e.write([]any{e.choice(map[string]any{}, finish)}, nil)
	u := e.counts(emitted)
	u["prompt_tokens_details"] = map[string]any{"cached_tokens": e.cached}
	timings["usage"] = u
	e.write([]any{}, timings)
}

// tabbyFinish: endpoints/OAI/utils/chat_completion.py @0158fb48: tool
// calls are parsed at the end and sent whole in the last content chunk;
// with include_usage that chunk's finish_reason moves to the usage chunk,
// whose choices is [{"index","delta":{},"finish_reason"}].
func (e *engineWire) tabbyFinish(finish string, emitted int, usage bool, decodeDur time.Duration) {
	var last any = finish
	if usage {
		last = nil
	}
	if e.tool != nil {
		e.write([]any{e.choice(map[string]any{"tool_calls": e.wholeTool()}, last)}, nil)
	} else if !usage {
		e.write([]any{e.choice(map[string]any{}, finish)}, nil)
	}
	if usage {
		e.write([]any{e.choice(map[string]any{}, finish)}, map[string]any{"usage": e.tabbyUsage(emitted, decodeDur)})
	}
}

// vllmUsage is vLLM's UsageInfo (vllm/entrypoints/serve/engine/protocol.py
// @f1bf7bd0; serving.py @006c49d4 _make_prompt_tokens_details: present with
// --enable-prompt-tokens-details, 0 included; completion_tokens_details
// with a --reasoning-parser, which the simulator speaks as having).
func (e *engineWire) vllmUsage(emitted int) map[string]any {
	u := e.counts(emitted)
	if e.s.vllmPromptTokensDetails() {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": e.cached}
	}
	u["completion_tokens_details"] = map[string]any{"reasoning_tokens": e.reasoning}
	return u
}

// vllmMetrics is vLLM's per-request metrics (generate/base/serving.py
// build_per_request_timing_metrics; docs/features/per_request_metrics.md
// @0377ba9a): time_to_first_token_ms from scheduling (the prefill start,
// no queueing) to the first token, generation_time_ms first to last
// token, queue_time_ms the wait for a slot, mean_itl_ms over n-1 (omitted,
// as None, for n <= 1), tokens_per_second n over scheduling to last token.
func (e *engineWire) vllmMetrics(n int) map[string]any {
	m := map[string]any{"queue_time_ms": ms(e.queued)}
	if n == 0 || e.tokens == 0 {
		return m
	}
	gen := e.last.Sub(e.first)
	m["time_to_first_token_ms"] = ms(e.first.Sub(e.prefillStart))
	m["generation_time_ms"] = ms(gen)
	if n > 1 {
		m["mean_itl_ms"] = ms(gen) / float64(n-1)
	}
	m["tokens_per_second"] = rate(n, e.last.Sub(e.prefillStart))
	return m
}

// ikTimings is ik_llama.cpp's timings (server-context.cpp @0192b22b
// get_formated_timings): no cache_n; n_ctx and n_past instead.
func (e *engineWire) ikTimings(emitted int, decodeDur time.Duration) map[string]any {
	promptN := max(e.promptTokens-e.cached, 1)
	predicted := emitted
	if e.b.PredictedNSkew != nil {
		predicted += *e.b.PredictedNSkew
	}
	return map[string]any{
		"prompt_n": promptN, "prompt_ms": ms(e.promptDur), "prompt_per_token_ms": perToken(e.promptDur, promptN),
		"prompt_per_second": rate(promptN, e.promptDur),
		"predicted_n":       predicted, "predicted_ms": ms(decodeDur), "predicted_per_token_ms": perToken(decodeDur, emitted),
		"predicted_per_second": rate(emitted, decodeDur),
		"n_ctx":                e.s.cfg.ContextTokens, "n_past": e.promptTokens + emitted,
	}
}

// tabbyUsage is TabbyAPI's UsageStats (endpoints/OAI/types/common.py
// @e632af4 l.9–19: no prompt_tokens_details; filled by endpoints/OAI/utils/common_.py @39c9fd88
// get_usage_stats from backends/exllamav3/model.py @004e8374
// handle_finish_chunk): prompt_time rounded to 0.01 s before the zero
// test, rates "Indeterminate" at a zero time, the prefill rate over the
// uncached tokens, total_time including the queue. With the older
// TabbyAPI option (endpoints/OAI/types/common.py @035269c0) only the three
// counts.
func (e *engineWire) tabbyUsage(emitted int, decodeDur time.Duration) map[string]any {
	if e.s.tabbyNoTimings() || e.b.OmitTimings {
		return e.counts(emitted)
	}
	promptTime := round2(e.promptDur.Seconds())
	var promptRate any = "Indeterminate"
	if promptTime != 0 {
		promptRate = round2(float64(e.promptTokens-e.cached) / promptTime)
	}
	genTime := decodeDur.Seconds()
	var genRate any = "Indeterminate"
	if genTime != 0 {
		genRate = round2(float64(emitted) / genTime)
	}
	u := map[string]any{
		"prompt_tokens": e.promptTokens,
		"prompt_time":   promptTime, "prompt_tokens_per_sec": promptRate,
		"completion_tokens": emitted,
		"completion_time":   round2(genTime), "completion_tokens_per_sec": genRate,
		"total_tokens": e.promptTokens + emitted,
		"total_time":   round2(e.queued.Seconds() + promptTime + genTime),
	}
	if e.s.cfg.TabbyAPIPromptDetails {
		// PR #452 (973b22b, not merged at e632af4): cached_tokens always,
		// completion details only with a draft model.
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": e.cached}
		u["completion_tokens_details"] = nil
	}
	return u
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
