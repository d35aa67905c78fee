package simengine

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/fixtures"
)

// Strata's own server, as its source shows it: Niko1221/Strata
// serve/server.py @452325a9fe7d5ff18c3898aa5443cdf3cce493e1 (cited below as
// "server.py @452325a9 <function>") and the serve/frontend.py that matches it
// (index id 70144531177, "frontend.py <function>"). The simulated model
// behind it is the simulator's own; only the routes, shapes and wire are
// Strata's.

// strataKeyedGETs are the GET routes that need the API key when one is set
// (server.py @452325a9 Handler.do_GET); every POST needs it (Handler._post
// checks it first). /health and /api/health never do.
var strataKeyedGETs = map[string]bool{
	"/v1/status": true, "/props": true, "/slots": true, "/v1/models": true, "/models": true, "/metrics": true,
}

// strataPrefillChunk is the prompt chunk the simulated engine reads between
// two progress lines (each a keep-alive on the wire: server.py @452325a9
// StrataEngine.generate). The size of Strata's --prefill chunks is not
// defined in the files read; this is the simulator's choice.
const strataPrefillChunk = 4096

// strataQuiet is how long Strata's engine may be silent before the server
// sends a keep-alive anyway (server.py @452325a9 StrataEngine.generate: one
// heartbeat per 10 s without an engine line).
const strataQuiet = 10 * time.Second

func (s *Server) strataMux() http.Handler {
	mux := http.NewServeMux()
	// server.py @452325a9 Handler.do_GET and Handler._post: the routes the
	// simulator has a model for. There is no /tokenize, /detokenize,
	// /apply-template or /completion in the source: those are its 404.
	mux.HandleFunc("GET /health", s.strataHealth)
	mux.HandleFunc("GET /api/health", s.strataHealth)
	mux.HandleFunc("GET /v1/status", s.strataStatus)
	mux.HandleFunc("GET /props", s.strataProps)
	mux.HandleFunc("GET /slots", s.strataSlots)
	mux.HandleFunc("GET /v1/models", s.strataModels)
	mux.HandleFunc("GET /models", s.strataModels)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.strataCountTokens)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		strataJSON(w, 404, obj{{"error", obj{{"message", "not found"}}}})
	})
	return s.strataGate(mux)
}

// strataGate is what Strata's handler does before routing: the path without
// its trailing slashes (server.py @452325a9 do_GET/_post:
// self.path.split("?")[0].rstrip("/")), the API key check, and Connection:
// close on every answer (Handler.end_headers; protocol_version "HTTP/1.0").
func (s *Server) strataGate(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		if p := strings.TrimRight(r.URL.Path, "/"); p != r.URL.Path && p != "" {
			u := *r.URL
			u.Path, u.RawPath = p, ""
			r2 := *r
			r2.URL = &u
			r = &r2
		}
		if s.cfg.APIKey != "" && (r.Method == http.MethodPost || strataKeyedGETs[r.URL.Path]) && !strataAuthorized(r, s.cfg.APIKey) {
			// server.py @452325a9 Handler._authorized and its refusal.
			strataJSON(w, 401, obj{{"error", obj{{"type", "authentication_error"}, {"message", "missing or wrong API key"}}}})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// strataAuthorized is server.py @452325a9 Handler._authorized: an
// Authorization header starting "bearer " (any case) gives the key, else the
// x-api-key header; compared in constant time.
func strataAuthorized(r *http.Request, key string) bool {
	given := r.Header.Get("X-Api-Key")
	if a := r.Header.Get("Authorization"); len(a) >= 7 && strings.EqualFold(a[:7], "bearer ") {
		given = strings.TrimSpace(a[7:])
	}
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(key)) == 1
}

// strataModel is the model name Strata reports (the config's model_name;
// the simulator's is its model file's name without the extension).
func (s *Server) strataModel() string { return s.modelName() }

// strataHealth serves GET /health and /api/health: always 200, also while
// the engine loads (server.py @452325a9 Handler.do_GET /health).
func (s *Server) strataHealth(w http.ResponseWriter, r *http.Request) {
	strataJSON(w, 200, obj{{"status", "ok"}, {"max_context", s.cfg.ContextTokens}, {"model", s.strataModel()},
		{"images", false}, {"api_key", s.cfg.APIKey != ""}, {"loaded", !s.loading()}, {"service", "strata"}})
}

// strataStatus serves GET /v1/status in the shape of server.py @452325a9
// Service.v1_status: no version, engine_version or configuration keys; the
// engine's version is "engine" (the simulator's own version string).
func (s *Server) strataStatus(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	ctx := s.cfg.ContextTokens
	s.mu.Lock()
	served, inFlight, lastAt, lastT := s.served, s.inFlight, s.lastRequestAt, s.lastTimings
	s.mu.Unlock()
	busy := int64(0)
	if inFlight > 0 {
		busy = 1
	}
	var at, timings any
	if !lastAt.IsZero() {
		at = lastAt.Unix()
	}
	if lastT != nil {
		timings = lastT
	}
	strataJSON(w, 200, obj{
		{"service", "strata"}, {"model", s.strataModel()},
		{"loaded", !s.loading()}, {"auto_load", true},
		{"structured_output", obj{{"formats", []any{"json_object", "json_schema"}}, {"method", "prompt_and_validate"},
			{"constrained_decoding", false}, {"stream_buffered", true}}},
		{"engine", Version()},
		{"started", s.started.Unix()}, {"uptime_s", int64(now.Sub(s.started).Seconds())},
		{"cache_max_tokens", ctx},
		{"context", obj{{"native", ctx}, {"max_positions", ctx}}},
		{"concurrency", obj{{"serving", s.cfg.Slots}, {"requested", s.cfg.Slots}}},
		{"dialects", []any{"/v1/chat/completions", "/v1/messages", "/v1/responses"}},
		{"vision", obj{{"enabled", false}, {"available", false}, {"error", nil}}},
		{"activity", obj{{"requests", served + busy}, {"in_flight", inFlight}, {"last_request_at", at}}},
		{"last_timings", timings},
		{"vram", obj{{"elastic", false}}},
		// The simulated machine: one GPU and the host's RAM, in the
		// source's units (MiB rounded to 0 as floats, GiB to 0.1).
		{"machine", obj{{"at", now.Unix()},
			{"gpu", obj{{"name", "strata simulated GPU"}, {"used_mib", pyFloat(20480)}, {"total_mib", pyFloat(24576)},
				{"util_pct", 0}, {"temp_c", 40}, {"power_w", pyFloat(60)}}},
			{"ram", obj{{"used_gib", pyFloat(8)}, {"total_gib", pyFloat(64)}}}}},
	})
}

// strataProps serves GET /props as server.py @452325a9 Handler._props does:
// 503 while the engine is not running (the simulator's loading, or always
// with the scenario's strata_props_unavailable), else Strata's keys in
// order. It carries no simulator marker (the real one has none); the
// X-Strata-Simulator header and the "Strata strata-simulator-…" build_info
// say what it is.
func (s *Server) strataProps(w http.ResponseWriter, r *http.Request) {
	if m := r.URL.Query().Get("model"); m != "" && m != s.strataModel() {
		strataJSON(w, 404, obj{{"error", obj{{"message", "model not found"}}}})
		return
	}
	if s.loading() || s.scenario().StrataPropsUnavailable {
		strataJSON(w, 503, obj{{"error", obj{{"message", "the engine is not running"}}}})
		return
	}
	// params: the config's sampling block (setup.py's default "thinking"
	// preset, in its order) renamed to llama.cpp's names, then n_predict.
	params := obj{{"temperature", pyFloat(1)}, {"top_p", pyFloat(0.95)}, {"top_k", 20}, {"min_p", pyFloat(0)},
		{"presence_penalty", pyFloat(0)}, {"repeat_penalty", pyFloat(1)}, {"n_predict", -1}}
	caps := obj{{"supports_tools", true}, {"supports_tool_calls", true}, {"supports_system_role", true},
		{"supports_parallel_tool_calls", true}, {"supports_preserve_reasoning", true}}
	p := obj{
		{"default_generation_settings", obj{{"n_ctx", s.cfg.ContextTokens}, {"params", params}}},
		{"total_slots", s.cfg.Slots},
		{"model_alias", s.strataModel()},
		{"chat_template", s.template()},
		{"chat_template_caps", caps},
		{"modalities", obj{{"vision", false}}},
		{"models_autoload", true},
		{"is_sleeping", false},
		{"model_path", s.cfg.ModelPath},
		{"build_info", s.BuildInfo()},
	}
	strataJSON(w, 200, p.with(s.scenario().Props))
}

// strataSlots serves GET /slots: [] while the engine is not alive, else one
// entry per batch slot with only id, n_ctx, is_processing and
// n_prompt_tokens (server.py @452325a9 Handler.do_GET /slots).
func (s *Server) strataSlots(w http.ResponseWriter, r *http.Request) {
	out := []any{}
	if !s.loading() {
		s.mu.Lock()
		for i := 0; i < s.cfg.Slots; i++ {
			out = append(out, obj{{"id", i}, {"n_ctx", s.cfg.ContextTokens}, {"is_processing", s.busy[i]},
				{"n_prompt_tokens", s.last[i].promptTokens}})
		}
		s.mu.Unlock()
	}
	strataJSON(w, 200, out)
}

// strataModels serves GET /v1/models and /models: the model without
// owned_by, or no model while the engine is starting (server.py @452325a9
// Handler.do_GET /v1/models).
func (s *Server) strataModels(w http.ResponseWriter, r *http.Request) {
	data := []any{}
	if !s.loading() {
		data = append(data, obj{{"id", s.strataModel()}, {"object", "model"}, {"status", obj{{"value", "loaded"}}},
			{"meta", obj{{"n_ctx", s.cfg.ContextTokens}}},
			{"architecture", obj{{"input_modalities", []any{"text"}}, {"output_modalities", []any{"text"}}}}})
	}
	strataJSON(w, 200, obj{{"object", "list"}, {"data", data}})
}

// anthropicCount is the part of an Anthropic Messages body that
// POST /v1/messages/count_tokens renders (server.py @452325a9
// Handler._count_tokens through frontend.py anthropic_to_messages).
type anthropicCount struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	OutputConfig *struct {
		Effort json.RawMessage `json:"effort"`
	} `json:"output_config"`
}

// anthropicBlock is one content block; only the kinds that carry text the
// simulator's chat form can hold are read.
type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// blockText is frontend.py _text_of for the simulator: a string as is, or
// the text of a list's text blocks joined.
func blockText(raw json.RawMessage) (string, error) {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", fmt.Errorf("content must be a string or a list of content blocks: %w", err)
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}

// chatForm converts an Anthropic body to the simulator's chat form as
// frontend.py anthropic_to_messages does: the system text first as a system
// message, string content as is, a turn's text blocks joined, each
// tool_result its own tool message; the tools as {name, description,
// parameters: input_schema}; thinking {"type": "disabled"} turns thinking
// off, else output_config.effort goes through the effort table, else
// thinking.budget_tokens picks an effort (frontend.py budget_effort).
// Blocks the chat form cannot hold (thinking, tool_use, images) are left
// out: such a conversation is not a bundle request, whose count is
// estimated either way.
func (a *anthropicCount) chatForm() (*chatRequest, error) {
	req := &chatRequest{}
	sys, err := blockText(a.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if sys != "" {
		req.Messages = append(req.Messages, fixtures.Message{Role: "system", Content: sys})
	}
	for i, m := range a.Messages {
		msgs, err := turnMessages(i, m.Role, m.Content)
		if err != nil {
			return nil, err
		}
		req.Messages = append(req.Messages, msgs...)
	}
	// frontend.py _late_system_to_user: a system message after the first
	// becomes a user message in place.
	for i := 1; i < len(req.Messages); i++ {
		if req.Messages[i].Role == "system" {
			req.Messages[i].Role = "user"
		}
	}
	if req.Tools, err = a.openAITools(); err != nil {
		return nil, err
	}
	var effort json.RawMessage
	if a.OutputConfig != nil {
		effort = a.OutputConfig.Effort
	}
	switch {
	case a.Thinking != nil && a.Thinking.Type == "disabled":
		req.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	case len(effort) > 0 && string(effort) != "null" && string(effort) != `""`:
		if err := strataEffort(effort); err != nil {
			return nil, err
		}
		req.ReasoningEffort = effort
	case a.Thinking != nil && a.Thinking.BudgetTokens != 0:
		e := "xhigh" // frontend.py budget_effort
		switch {
		case a.Thinking.BudgetTokens < 2048:
			e = "low"
		case a.Thinking.BudgetTokens < 8192:
			e = "medium"
		}
		req.ReasoningEffort, _ = json.Marshal(e)
	}
	return req, nil
}

// turnMessages is messages[i] of an Anthropic body in the chat form:
// string content as it is; of a list of blocks, each tool_result its own
// tool message and then the text blocks joined (other blocks are left
// out).
func turnMessages(i int, role string, content json.RawMessage) ([]fixtures.Message, error) {
	var text string
	if json.Unmarshal(content, &text) == nil {
		return []fixtures.Message{{Role: role, Content: text}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, fmt.Errorf("messages[%d].content must be a string or a list of content blocks", i)
	}
	var out []fixtures.Message
	var b strings.Builder
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text)
		case "tool_result":
			t, err := blockText(bl.Content)
			if err != nil {
				return nil, fmt.Errorf("messages[%d] tool_result: %w", i, err)
			}
			out = append(out, fixtures.Message{Role: "tool", Content: t})
		}
	}
	if b.Len() > 0 {
		out = append(out, fixtures.Message{Role: role, Content: b.String()})
	}
	return out, nil
}

// openAITools are the Anthropic tools in the chat form's shape: each
// {name, description ("" when absent), parameters: input_schema ({} when
// absent)} (frontend.py anthropic_to_messages), nil for none.
func (a *anthropicCount) openAITools() (json.RawMessage, error) {
	if len(a.Tools) == 0 {
		return nil, nil
	}
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	var tools []tool
	for i, t := range a.Tools {
		if t.Name == "" {
			return nil, fmt.Errorf(`tools[%d] has no name: each tool must be {"name": ..., "input_schema": {...}}`, i)
		}
		schema := t.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{}`)
		}
		tools = append(tools, tool{"function", fn{t.Name, t.Description, schema}})
	}
	return json.Marshal(tools)
}

// strataEffort is frontend.py effort_kwargs' verdict on an effort value:
// nil for one it takes (none, false, a word that turns thinking off, an
// effort word), Strata's 400 for one it does not know. Which template
// kwargs an effort gives is the engine's business, not the count's: none,
// off, minimal, disabled and false turn thinking off; low and medium pass
// as they are; high, xhigh, max and maximum become xhigh.
func strataEffort(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		// A value of a body that was decoded always decodes again.
		return fmt.Errorf("reasoning effort %s: %w", raw, err)
	}
	var word string
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		if !x {
			return nil
		}
		word = "true" // Python's str(True).lower()
	case string:
		word = strings.ToLower(strings.TrimSpace(x))
	default:
		word = strings.TrimSpace(string(raw))
	}
	switch word {
	case "", "none", "off", "minimal", "disabled", "false", "low", "medium", "high", "xhigh", "max", "maximum":
		return nil
	}
	return fmt.Errorf("unknown reasoning effort '%s': use none, low, medium or high", word)
}

// strataCountTokens serves POST /v1/messages/count_tokens (server.py
// @452325a9 Handler._count_tokens): the Anthropic body rendered as the chat
// request of that conversation is (template, tools, effort, generation
// prompt) and counted as the simulator counts that chat request, plus the
// scenario's tokenize_skew. It needs no loaded engine. The answer is
// exactly {"input_tokens": N}.
func (s *Server) strataCountTokens(w http.ResponseWriter, r *http.Request) {
	var a anthropicCount
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		strataError(w, 400, "invalid_request_error", err.Error())
		return
	}
	req, err := a.chatForm()
	if err != nil {
		strataError(w, 400, "invalid_request_error", err.Error())
		return
	}
	id := caseID(req)
	n := s.countPrompt(req, s.fixture(id))
	if id != "" && s.fixture(id) != nil {
		n += s.scenario().TokenizeSkew[id]
	}
	strataJSON(w, 200, obj{{"input_tokens", n}})
}

// strataError is Strata's error answer (server.py @452325a9 Handler._post's
// mapping): {"error": {"type", "message"}}, no code.
func strataError(w http.ResponseWriter, status int, typ, msg string) {
	strataJSON(w, status, obj{{"error", obj{{"type", typ}, {"message", msg}}}})
}

// strataJSON writes a JSON answer as Strata's Handler._json does.
func strataJSON(w http.ResponseWriter, status int, v any) {
	body := pyDump(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// kv is one member of an ordered JSON object.
type kv struct {
	k string
	v any
}

// obj is a JSON object whose members keep the order Strata's server builds
// them in (Python dicts keep insertion order, json.dumps writes it).
type obj []kv

// with is o with the scenario's overrides: a key it names is replaced in
// place (null removes it), a new key goes last.
func (o obj) with(over map[string]json.RawMessage) obj {
	if len(over) == 0 {
		return o
	}
	out := obj{}
	for _, m := range o {
		if v, ok := over[m.k]; ok {
			if string(v) == "null" {
				continue
			}
			m.v = v
		}
		out = append(out, m)
	}
	var extra []string
	for k := range over {
		if !o.has(k) && string(over[k]) != "null" {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		out = append(out, kv{k, over[k]})
	}
	return out
}

func (o obj) has(k string) bool {
	for _, m := range o {
		if m.k == k {
			return true
		}
	}
	return false
}

// pyFloat is a number Python holds as a float: json.dumps writes 1.0, not 1.
type pyFloat float64

// pyDump is json.dumps(v, ensure_ascii=False) with Python's default
// separators (", " and ": "), which every answer and SSE line of Strata's
// server uses (server.py @452325a9 Handler._json, _sse).
func pyDump(v any) string {
	var b strings.Builder
	pyWrite(&b, v)
	return b.String()
}

func pyWrite(b *strings.Builder, v any) {
	switch x := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			pyString(b, m.k)
			b.WriteString(": ")
			pyWrite(b, m.v)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			pyWrite(b, e)
		}
		b.WriteByte(']')
	case string:
		pyString(b, x)
	case pyFloat:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) < 1e16 {
			b.WriteString(strconv.FormatFloat(f, 'f', 1, 64))
		} else {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case json.RawMessage:
		var c bytes.Buffer
		if json.Compact(&c, x) != nil {
			b.WriteString("null")
			return
		}
		b.Write(c.Bytes())
	default:
		data, err := json.Marshal(x)
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
	}
}

// pyString writes a JSON string without HTML escaping (Python escapes no
// <, > or &).
func pyString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// round is Python's round(x, digits) for the timings.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.RoundToEven(x*p) / p
}

// strataWait waits d writing a keep-alive first and then every strataQuiet,
// as Strata's server does while its engine says nothing; false when the
// client left.
func (e *engineWire) strataWait(ctx context.Context, d time.Duration) bool {
	for {
		e.cw.raw(": keep-alive\n\n")
		step := min(d, strataQuiet)
		if !sleepCtx(ctx, step) {
			return false
		}
		if d -= step; d <= 0 {
			return e.cw.err == nil
		}
	}
}

// strataPrefill reads the prompt in chunks of strataPrefillChunk tokens, a
// keep-alive for each (the engine's progress line) and at least one.
func (e *engineWire) strataPrefill(ctx context.Context, readN int, promptDur time.Duration) bool {
	chunks := max(1, (readN+strataPrefillChunk-1)/strataPrefillChunk)
	for i := 0; i < chunks; i++ {
		if !e.strataWait(ctx, promptDur/time.Duration(chunks)) {
			return false
		}
	}
	return true
}

// strataChunk writes one chunk of server.py @452325a9 openai_chunks: id,
// object, created, model, choices [{index, delta, finish_reason}], then
// extra's members; no system_fingerprint, no logprobs.
func (e *engineWire) strataChunk(delta obj, finish any, extra ...kv) {
	c := obj{{"id", e.cw.id}, {"object", "chat.completion.chunk"}, {"created", e.cw.created}, {"model", e.cw.model},
		{"choices", []any{obj{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}}
	e.cw.raw("data: " + pyDump(append(c, extra...)) + "\n\n")
}

// strataDelta is the plan's delta in Strata's shape: a tool call opens with
// its name and empty arguments (the parser's tool_start), then its argument
// pieces (tool_args).
func (e *engineWire) strataDelta(d map[string]any) {
	switch {
	case d["reasoning_content"] != nil:
		e.strataChunk(obj{{"reasoning_content", d["reasoning_content"]}}, nil)
	case d["tool_calls"] != nil:
		frag := d["tool_calls"].([]any)[0].(map[string]any)
		fn := frag["function"].(map[string]any)
		if name, ok := fn["name"]; ok {
			e.strataChunk(obj{{"tool_calls", []any{obj{{"index", 0}, {"id", fmt.Sprintf("call_%024x", e.task)},
				{"type", "function"}, {"function", obj{{"name", name}, {"arguments", ""}}}}}}}, nil)
		}
		if a, _ := fn["arguments"].(string); a != "" {
			e.strataChunk(obj{{"tool_calls", []any{obj{{"index", 0}, {"function", obj{{"arguments", a}}}}}}}, nil)
		}
	default:
		if c, _ := d["content"].(string); c != "" { // empty texts are never sent
			e.strataChunk(obj{{"content", c}}, nil)
		}
	}
}

// strataFinish writes the final chunk: delta {}, the finish reason, usage
// always (stream_options is not read) and timings in request_timings' key
// order (server.py @452325a9 openai_chunks, request_timings). The server's
// count n includes the end-of-turn token when the model stopped by itself.
// It keeps the timings for /v1/status last_timings.
func (e *engineWire) strataFinish(finish string, emitted int, decodeDur time.Duration) {
	n := emitted
	if finish == "stop" || finish == "tool_calls" {
		n++ // <|im_end|>, counted in completion_tokens and predicted_n
	}
	promptN := max(0, e.promptTokens-e.cached)
	promptMS, decodeMS := ms(e.promptDur), ms(decodeDur)
	var perTok, perSec, predTok, predSec any
	if promptN > 0 && promptMS > 0 {
		perTok, perSec = pyFloat(round(promptMS/float64(promptN), 3)), pyFloat(round(float64(promptN)/(promptMS/1000), 1))
	}
	if n > 0 && decodeMS > 0 {
		predTok, predSec = pyFloat(round(decodeMS/float64(n), 3)), pyFloat(round(float64(n)/(decodeMS/1000), 1))
	}
	predicted := n
	if e.b.PredictedNSkew != nil {
		predicted += *e.b.PredictedNSkew
	}
	timings := obj{{"cache_n", e.cached}, {"prompt_n", promptN}, {"prompt_ms", pyFloat(round(promptMS, 1))},
		{"prompt_per_token_ms", perTok}, {"prompt_per_second", perSec},
		{"predicted_n", predicted}, {"predicted_ms", pyFloat(round(decodeMS, 1))},
		{"predicted_per_token_ms", predTok}, {"predicted_per_second", predSec}}
	var extra []kv
	if !e.b.OmitUsage {
		extra = append(extra, kv{"usage", obj{{"prompt_tokens", e.promptTokens}, {"completion_tokens", n},
			{"total_tokens", e.promptTokens + n}, {"prompt_tokens_details", obj{{"cached_tokens", e.cached}}}}})
	}
	if !e.b.OmitTimings {
		extra = append(extra, kv{"timings", timings})
	}
	e.strataChunk(obj{}, finish, extra...)
	e.s.mu.Lock()
	e.s.lastTimings = append(timings, kv{"at", e.s.cfg.Now().Unix()})
	e.s.mu.Unlock()
}

// strataStreamError is a failure after the stream began (server.py
// @452325a9 Handler._openai: EngineDied / the engine's ERR line):
// an error event, then [DONE], and no final usage chunk.
func (e *engineWire) strataStreamError(msg string) {
	if msg == "" {
		msg = "the engine stopped mid-request; the next request restarts it"
	}
	b, _ := json.Marshal(msg) // json.dumps(err): ensure_ascii
	e.cw.raw(`data: {"error": {"type": "server_error", "message": ` + string(b) + "}}\n\ndata: [DONE]\n\n")
}
