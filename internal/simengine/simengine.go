// Package simengine is a simulated llama-server-compatible engine: /health
// (503 while "loading", then 200), /props, /v1/models, /slots and streaming
// /v1/chat/completions with the chunk shapes of the real captures (role
// chunk, reasoning_content, content, tool_calls fragments, a finish chunk,
// the usage chunk with llama.cpp's timings, [DONE]).
//
// By default it models a plausible engine (prompt and decode speed,
// reasoning length, mostly right answers) so a first run works without a
// GPU; a Scenario scripts each request's behaviour and faults for tests, and
// can replay real llama-server captures. It says what it is in /props
// (strata_simulator: true, where the dialect is llama-server's) and in an
// X-Strata-Simulator header on every response, whatever a scenario says, so
// a result from it can never pass for a real run (dialect.SimulatorTraces
// names every trace it leaves).
//
// The other dialects (Strata's own server, strata.go; vLLM, SGLang, Ollama,
// ik_llama.cpp, LM Studio, TabbyAPI, engines.go and wire.go) serve that
// engine's identification endpoints and streaming wire over the same
// simulated model.
package simengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/gguf"
)

// Config is the simulated engine's model.
type Config struct {
	// Now is the simulator's clock (nil: the runtime's).
	Now clock.Func
	// PromptTPS and DecodeTPS are the simulated speeds (tokens/s).
	PromptTPS float64
	DecodeTPS float64
	// ReasoningTokens is the typical reasoning length; long prompts reason
	// about twice as long (and so usually reach the 512-token cap).
	ReasoningTokens int
	// Accuracy is the share of sanity cases answered right (0..1),
	// decided deterministically per request.
	Accuracy float64
	// Slots is the number of parallel slots (llama-server's -np).
	Slots int
	// ContextTokens is the per-slot context.
	ContextTokens int
	// LoadTime is how long /health answers 503 (Strata's: /props, while
	// /health says loaded false and chat requests wait).
	LoadTime time.Duration
	// ModelPath is reported by /props (model_path) and /v1/models.
	ModelPath string
	// Bundle supplies exact prompt token counts and expected answers.
	Bundle   *fixtures.Bundle
	Scenario *Scenario
	// Dialect is the engine the simulator speaks as (one of Dialects;
	// DialectLlamaCpp with Build); "" is llama.cpp DefaultBuild.
	Dialect string
	Build   int
	// ReasoningBudget is the server-level budget, as llama-server's
	// --reasoning-budget (nil or -1: unrestricted).
	ReasoningBudget *int
	// Template is the chat template served in /props and used by
	// /apply-template (the bundle's; "" serves a minimal stand-in).
	Template string
	// APIKey, when set, is the key Strata's server asks for (its
	// --api-key): the Strata dialect then answers 401 to every POST and to
	// the GET routes Strata protects without it (strata.go).
	APIKey string

	// Options of the other engines' dialects (a scenario may override
	// each). VLLMPerRequestMetrics is vLLM's --enable-per-request-metrics
	// and VLLMPromptTokensDetails its --enable-prompt-tokens-details (nil:
	// on). SGLangRejectXHigh speaks as an older SGLang that answers 400 to
	// reasoning_effort values other than low, medium and high.
	// TabbyAPINoTimings speaks as an older TabbyAPI whose usage has only
	// the three counts.
	VLLMPerRequestMetrics   *bool
	VLLMPromptTokensDetails *bool
	SGLangRejectXHigh       bool
	TabbyAPINoTimings       bool
	// VLLMRejectXHigh speaks as a vLLM whose reasoning_effort Literal is
	// low, medium and high, and VLLMNoRender as one without
	// /v1/chat/completions/render. SGLangPromptTokenize speaks as an older
	// SGLang whose /v1/tokenize takes only a prompt.
	VLLMRejectXHigh      bool
	VLLMNoRender         bool
	SGLangPromptTokenize bool
	// OllamaVersion is the version Ollama's /api/version reports (""
	// is ollamaVersion); before 0.32.12 its OpenAI-compatible endpoint
	// refuses reasoning_effort xhigh, and before 0.22.0 its /api/chat
	// refuses think "max".
	OllamaVersion string
	// TabbyAPIPromptDetails speaks as a TabbyAPI with PR #452, whose usage
	// has prompt_tokens_details.cached_tokens; TabbyAPIForced are the
	// forced sampler overrides its /v1/sampling/overrides lists (name to
	// value). ReasoningBudget is its model.reasoning_budget_tokens.
	TabbyAPIPromptDetails bool
	TabbyAPIForced        map[string]any
}

// WriteModel writes the simulator's stand-in model into dir: a small,
// metadata-only GGUF, so a run against the simulator exercises model-file
// discovery, hashing and GGUF reading like a real one. It returns the path.
// Its bytes never change (dialect.SimulatorModelSHA256 is their hash, a
// trace of the simulator like its name).
func WriteModel(dir string) (string, error) {
	path := filepath.Join(dir, dialect.SimulatorModelFile)
	err := gguf.Write(path, []gguf.KV{
		{Key: "general.architecture", Value: "qwen3"},
		{Key: "general.name", Value: dialect.SimulatorModelName},
		{Key: "general.file_type", Value: uint32(0)},
		{Key: "general.parameter_count", Value: uint64(0)},
		{Key: "qwen3.context_length", Value: uint32(32768)},
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "qwen2"},
		{Key: "tokenizer.chat_template", Value: simTemplate},
	})
	return path, err
}

// DefaultConfig is the demo engine: fast enough for a full run in well
// under a minute, slow enough to look like one.
func DefaultConfig() Config {
	return Config{PromptTPS: 20000, DecodeTPS: 900, ReasoningTokens: 300, Accuracy: 0.85, Slots: 1,
		ContextTokens: 32768, LoadTime: 300 * time.Millisecond, ModelPath: "simulated-qwen3.gguf",
		Dialect: DialectLlamaCpp, Build: DefaultBuild}
}

// Server is a running simulated engine.
type Server struct {
	cfg     Config
	started time.Time
	slots   chan int
	mu      sync.Mutex
	last    map[int]slotState // per slot: last task
	seen    map[string]bool   // every prompt served: the host-memory prompt cache
	task    int64
	served  int64
	// What Strata's /v1/status and /slots report: requests inside the
	// chat handler, when one last arrived or ended, the last timings, and
	// the slots generating now.
	inFlight      int64
	lastRequestAt time.Time
	lastTimings   obj
	busy          map[int]bool
	srv           *http.Server
	ln            net.Listener
	dead          chan struct{}
	dieOnce       sync.Once
	// servedTemplate is the template /apply-template renders with, and bundleRender
	// each fixture rendered with the configured (the bundle's) template:
	// both are made once, not on each of a run's 34 preflight requests
	// (parsing and rendering the template is most of what answering one
	// costs).
	servedTemplate func() (*chattemplate.Template, error)
	bundleRender   func(f *fixtures.Fixture) (string, bool)
}

type slotState struct {
	prompt       string
	promptTokens int
	params       map[string]any
	task         int64
}

// New returns a server for cfg (not yet listening).
func New(cfg Config) *Server {
	if cfg.Slots <= 0 {
		cfg.Slots = 1
	}
	cfg.Now = clock.Or(cfg.Now)
	switch cfg.Dialect {
	case "":
		cfg.Dialect = DialectLlamaCpp
	case DialectStrataAlias:
		cfg.Dialect = DialectStrata
	}
	if cfg.Dialect == DialectLlamaCpp && cfg.Build == 0 {
		cfg.Build = DefaultBuild
	}

	s := &Server{cfg: cfg, slots: make(chan int, cfg.Slots), last: map[int]slotState{}, busy: map[int]bool{}, seen: map[string]bool{}, dead: make(chan struct{})}
	for i := 0; i < cfg.Slots; i++ {
		s.slots <- i
	}
	s.servedTemplate = sync.OnceValues(func() (*chattemplate.Template, error) { return chattemplate.Parse(s.template()) })
	s.bundleRender = renderings(cfg.Template)
	return s
}

// renderings returns a fixture rendered with tmpl, made on first asking
// and kept by request ID (false: no template, or it does not render it).
func renderings(tmpl string) func(f *fixtures.Fixture) (string, bool) {
	parsed := sync.OnceValues(func() (*chattemplate.Template, error) { return chattemplate.Parse(tmpl) })
	var mu sync.Mutex
	done := map[string]*string{}
	return func(f *fixtures.Fixture) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if out, ok := done[f.RequestID]; ok {
			return deref(out), out != nil
		}
		done[f.RequestID] = nil
		if tmpl == "" {
			return "", false
		}
		t, err := parsed()
		if err != nil {
			return "", false
		}
		out, err := corpus.Render(t, f)
		if err != nil {
			return "", false
		}
		done[f.RequestID] = &out
		return out, true
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Start listens on addr (host:port; port 0 picks a free one) and serves in
// the background. It returns the base URL.
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("simulated engine: listen on %s: %w", addr, err)
	}
	s.ln = ln
	s.started = s.cfg.Now()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	// Serve ends when Close (or a scripted death) closes the server; a
	// server that failed otherwise shows as its clients' errors.
	go func() { _ = s.srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// Serve serves until ctx is done.
func (s *Server) Serve(ctx context.Context, addr string, ready func(url string)) error {
	url, err := s.Start(addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(url)
	}
	select {
	case <-ctx.Done():
	case <-s.dead:
	}
	return s.Close()
}

// Close stops the server at once, cutting open streams.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Dead is closed when the simulated engine dies (a scenario's "die"), so
// a server in front of it can stop answering too.
func (s *Server) Dead() <-chan struct{} { return s.dead }

// die simulates an engine crash: the listener and every connection close.
func (s *Server) die() {
	s.dieOnce.Do(func() {
		close(s.dead)
		// The listener closes before the dying handler returns, so nothing
		// the client sends after the crash is answered.
		// The engine dies on purpose: what closing says is of no use.
		if s.ln != nil {
			_ = s.ln.Close()
		}
		if s.srv != nil {
			go func() { _ = s.srv.Close() }()
		}
	})
}

// Handler routes the llama-server endpoints, or the other engine's of a
// non-llama dialect (engines.go).
func (s *Server) Handler() http.Handler {
	if s.cfg.Dialect == DialectStrata {
		return s.serverHeader(s.strataMux())
	}
	if !s.llamaServer() {
		return s.serverHeader(s.engineMux())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /props", s.props)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /models", s.models)
	mux.HandleFunc("GET /slots", s.slotsHandler)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /apply-template", s.applyTemplate)
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 404, "not_found_error", "File Not Found")
	})
	return s.serverHeader(mux)
}

func (s *Server) serverHeader(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.dead:
			// A dead engine answers nothing, also on a connection that was
			// open before it died.
			panic(http.ErrAbortHandler)
		default:
		}
		if s.cfg.Dialect == DialectIKLlama {
			// ik_llama.cpp examples/server/server.cpp @bb7e35c6:
			// svr->set_default_headers({{"Server", "ik_llama.cpp"}}).
			w.Header().Set("Server", "ik_llama.cpp")
		} else {
			w.Header().Set("Server", dialect.SimulatorOwner)
		}
		// The simulator says what it is on every response of every
		// dialect, also where the engine has no /props to carry the
		// strata_simulator marker; no scenario can turn it off.
		w.Header().Set(dialect.SimulatorHeaderName, Version())
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeText writes a plain body after its headers. As with writeJSON, a
// write that fails means the client has gone: the simulator has no one
// else to tell.
func writeText(w io.Writer, text string) { _, _ = io.WriteString(w, text) }

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Connection", "close")
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}})
}

func (s *Server) loading() bool { return s.cfg.Now().Sub(s.started) < s.cfg.LoadTime }

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		writeError(w, 503, "unavailable_error", "Loading model")
		return
	}
	writeJSON(w, 200, map[string]string{"status": "ok"})
}

func (s *Server) props(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		writeError(w, 503, "unavailable_error", "Loading model")
		return
	}
	p := map[string]any{
		"default_generation_settings": map[string]any{
			"params": map[string]any{"seed": 4294967295, "temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "n_predict": -1},
			"n_ctx":  s.cfg.ContextTokens,
		},
		"total_slots":   s.cfg.Slots,
		"model_alias":   s.cfg.ModelPath,
		"model_path":    s.cfg.ModelPath,
		"chat_template": s.template(),
	}
	p["build_info"] = s.BuildInfo()
	writeJSON(w, 200, s.markedProps(p))
}

// markedProps is a /props answer with the scenario's fields (null removes
// one), then the simulator's markers, which no scenario can remove or
// change.
func (s *Server) markedProps(p map[string]any) map[string]any {
	for k, v := range s.scenario().Props {
		if string(v) == "null" {
			delete(p, k)
		} else {
			p[k] = v
		}
	}
	p["strata_simulator"], p["strata_simulator_version"] = true, Version()
	return p
}

// simTemplate is the template the simulator reports (Qwen3's, as llama.cpp
// would from the GGUF).
const simTemplate = "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"object": "list",
		"data":   []any{map[string]any{"id": s.cfg.ModelPath, "object": "model", "owned_by": dialect.SimulatorOwner}},
	})
}

func (s *Server) slotsHandler(w http.ResponseWriter, r *http.Request) {
	if s.slotsRefused(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []any
	for i := 0; i < s.cfg.Slots; i++ {
		st, ok := s.last[i]
		slot := map[string]any{"id": i, "n_ctx": s.cfg.ContextTokens, "speculative": false, "is_processing": false}
		if ok {
			slot["id_task"] = st.task
			slot["params"] = st.params
		}
		out = append(out, slot)
	}
	writeJSON(w, 200, out)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := s.served
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	name := dialect.SimulatorMetricPrefix + "requests_total"
	writeText(w, fmt.Sprintf("# HELP %s Chat requests answered.\n# TYPE %s counter\n%s %d\n", name, name, name, n))
}

// chatRequest is the part of a chat body the simulator reads.
type chatRequest struct {
	Messages          []fixtures.Message `json:"messages"`
	Tools             json.RawMessage    `json:"tools"`
	MaxTokens         *int               `json:"max_tokens"`
	MaxCompletion     *int               `json:"max_completion_tokens"`
	NPredict          *int               `json:"n_predict"`
	Seed              *int64             `json:"seed"`
	Temperature       *float64           `json:"temperature"`
	TopP              *float64           `json:"top_p"`
	TopK              *int               `json:"top_k"`
	MinP              *float64           `json:"min_p"`
	PresencePenalty   *float64           `json:"presence_penalty"`
	FrequencyPenalty  *float64           `json:"frequency_penalty"`
	ReasoningEffort   json.RawMessage    `json:"reasoning_effort"`
	RepeatPenalty     *float64           `json:"repeat_penalty"`
	RepetitionPenalty *float64           `json:"repetition_penalty"`
	Stream            bool               `json:"stream"`
	ReasoningBudget   *int               `json:"reasoning_budget_tokens"`
	ThinkingBudget    *int               `json:"thinking_budget_tokens"`
	// TabbyAPI's aliases of reasoning_budget_tokens
	// (endpoints/OAI/types/chat_completion.py @e632af4 l.122).
	ReasoningBudgetAlias *int           `json:"reasoning_budget"`
	ThinkingBudgetAlias  *int           `json:"thinking_budget"`
	ThinkingTokenBudget  *int           `json:"thinking_token_budget"`
	ChatTemplateKwargs   map[string]any `json:"chat_template_kwargs"`
	StreamOptions        struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// native is a request of Ollama's own /api/chat (ollama.go), answered
	// in its NDJSON.
	native bool
}

var caseMarker = regexp.MustCompile(`^\[case ([A-Za-z0-9-]+)\]\n`)

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	strata := s.cfg.Dialect == DialectStrata
	if s.loading() {
		if !strata {
			writeError(w, 503, "unavailable_error", "Loading model")
			return
		}
		// Strata's server starts its engine and the request waits for it
		// (serve/server.py @452325a9 Service.load): no 503 while loading.
		if !sleepCtx(r.Context(), s.cfg.LoadTime-s.cfg.Now().Sub(s.started)) {
			return
		}
	}
	s.arrive(1)
	defer s.arrive(-1)
	req, ok := s.readChat(w, r)
	if !ok {
		return
	}
	s.answer(w, r, req)
}

// answer answers a chat request that was read: the engine's refusals,
// the scenario's behaviour, then a slot and the generation.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *chatRequest) {
	if s.cfg.Dialect == DialectVLLM && s.cfg.VLLMRejectXHigh && vllmRejects(w, req.ReasoningEffort) {
		return
	}
	if s.cfg.Dialect == DialectOllama && !req.native && s.ollamaRejects(w, req.ReasoningEffort) {
		return
	}
	arrived := s.cfg.Now()
	id := caseID(req)
	b := s.cfg.Scenario.For(id)
	if b.StallBeforeMS > 0 {
		if !sleepCtx(r.Context(), time.Duration(b.StallBeforeMS)*time.Millisecond) {
			return
		}
	}
	if b.HTTPStatus != 0 {
		msg := b.ErrorMessage
		if msg == "" {
			msg = "scripted error"
		}
		typ := "invalid_request_error"
		if b.HTTPStatus >= 500 {
			typ = "server_error"
		}
		s.chatError(w, b.HTTPStatus, typ, msg)
		return
	}
	// A slot takes the request; until then the client gets nothing, not
	// even headers (as llama.cpp does for queued requests).
	var slot int
	select {
	case slot = <-s.slots:
	case <-r.Context().Done():
		return
	}
	s.setBusy(slot, true)
	defer func() {
		s.setBusy(slot, false)
		s.slots <- slot
	}()
	if b.HTML {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		writeText(w, "<html><body><h1>502 Bad Gateway</h1></body></html>\n")
		return
	}
	if b.Replay != "" {
		s.replay(w, b.Replay)
		return
	}
	if b.Flood != "" {
		flood(w, r, b.Flood)
		return
	}
	s.generate(w, r, req, id, slot, b, s.cfg.Now().Sub(arrived))
}

// readChat reads and checks a chat body, answering the dialect's error
// when it is not one; ok is false then.
func (s *Server) readChat(w http.ResponseWriter, r *http.Request) (req *chatRequest, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, 500, "server_error", err.Error())
		return nil, false
	}
	req = &chatRequest{}
	strata := s.cfg.Dialect == DialectStrata
	switch err := json.Unmarshal(body, req); {
	case err != nil && strata: // a ValueError: Handler._post's 400
		strataError(w, 400, "invalid_request_error", err.Error())
		return nil, false
	case err != nil:
		writeError(w, 500, "server_error", "[json.exception.parse_error] "+err.Error())
		return nil, false
	case len(req.Messages) == 0 && strata:
		strataError(w, 400, "invalid_request_error", "messages must be a list of objects")
		return nil, false
	case len(req.Messages) == 0:
		writeError(w, 400, "invalid_request_error", "'messages' is required")
		return nil, false
	}
	if strata {
		// frontend.py effort_kwargs: an unknown effort is a 400.
		if err := strataEffort(req.ReasoningEffort); err != nil {
			strataError(w, 400, "invalid_request_error", err.Error())
			return nil, false
		}
	} else if v, ok := req.ChatTemplateKwargs["enable_thinking"]; ok {
		if _, isBool := v.(bool); !isBool {
			writeError(w, 400, "invalid_request_error", `invalid type for "enable_thinking" (expected boolean, got string)`)
			return nil, false
		}
	}
	if s.cfg.Dialect == DialectSGLang && s.sglangRejectXHigh() && sglangRejects(w, req.ReasoningEffort) {
		return nil, false
	}
	return req, true
}

// chatError is a chat request's error answer in the dialect's shape.
func (s *Server) chatError(w http.ResponseWriter, status int, typ, msg string) {
	if s.cfg.Dialect == DialectStrata {
		strataError(w, status, typ, msg)
		return
	}
	writeError(w, status, typ, msg)
}

// caseID is a bundle request's ID, from the [case <id>] marker that starts
// its first message ("" for any other request).
func caseID(req *chatRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	if m := caseMarker.FindStringSubmatch(req.Messages[0].Content); m != nil {
		return m[1]
	}
	return ""
}

// arrive counts a chat request in (+1) or out (-1), for Strata's
// /v1/status activity.
func (s *Server) arrive(d int64) {
	s.mu.Lock()
	s.inFlight += d
	s.lastRequestAt = s.cfg.Now()
	s.mu.Unlock()
}

func (s *Server) setBusy(slot int, on bool) {
	s.mu.Lock()
	s.busy[slot] = on
	s.mu.Unlock()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// chunkWriter writes llama.cpp-shaped chunks.
// flood writes one hostile stream until the client goes away.
func flood(w http.ResponseWriter, r *http.Request, kind string) {
	var unit string
	switch kind {
	case "lines":
		unit = "data: " + strings.Repeat("x", 1000) + "\n"
	case "deltas":
		unit = `data: {"choices":[{"index":0,"delta":{"content":""}}]}` + "\n\n"
	default:
		unit = `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("y", 8000) + `"}}]}` + "\n\n"
	}
	block := []byte(strings.Repeat(unit, max(1, 64<<10/len(unit))))
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for r.Context().Err() == nil {
		if _, err := w.Write(block); err != nil {
			return
		}
	}
}

type chunkWriter struct {
	w           http.ResponseWriter
	fl          http.Flusher
	id          string
	model       string
	fingerprint string
	created     int64
	err         error
	// tail is what follows a delta in its chunk (the keys after
	// "choices", as json.Marshal of the map orders them), made once.
	tail string
	// lazy holds writes in the buffer until flush: the decode loop sends
	// every token that is already due in one write and flushes before it
	// waits. The bytes and each token's due time are unchanged; only where
	// one write ends differs, which TCP never promises a client anyway. On
	// time (the default speed) every token is still its own write; faster
	// than real time, or behind it, several share one instead of each
	// costing a write and a wakeup of its own.
	lazy bool
}

func (c *chunkWriter) raw(s string) {
	if c.err != nil {
		return
	}
	_, c.err = io.WriteString(c.w, s)
	if !c.lazy {
		c.fl.Flush()
	}
}

// flush sends what lazy writes have left in the buffer.
func (c *chunkWriter) flush() {
	if c.err == nil {
		c.fl.Flush()
	}
}

func (c *chunkWriter) chunk(choices any, extra map[string]any) {
	m := map[string]any{"choices": choices, "created": c.created, "id": c.id, "model": c.model,
		"system_fingerprint": c.fingerprint, "object": "chat.completion.chunk"}
	for k, v := range extra {
		m[k] = v
	}
	data, _ := json.Marshal(m)
	c.raw("data: " + string(data) + "\n\n")
}

// delta writes one delta chunk, byte for byte what chunk would write, without
// marshalling the whole chunk for each of thousands of deltas.
func (c *chunkWriter) delta(d map[string]any) {
	if c.tail == "" {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		c.tail = fmt.Sprintf(`,"finish_reason":null,"index":0}],"created":%d,"id":%s,"model":%s,"object":"chat.completion.chunk","system_fingerprint":%s}`,
			c.created, q(c.id), q(c.model), q(c.fingerprint))
	}
	c.raw(`data: {"choices":[{"delta":` + string(deltaJSON(d)) + c.tail + "\n\n")
}

// deltaJSON is json.Marshal(d), byte for byte. Nearly every delta is one
// text field (content or reasoning_content), written here without
// marshalling a map for each of a run's thousands of tokens.
func deltaJSON(d map[string]any) []byte {
	if len(d) == 1 {
		for k, v := range d {
			if text, ok := v.(string); ok {
				key, _ := json.Marshal(k)
				val, _ := json.Marshal(text)
				return append(append(append(append([]byte{'{'}, key...), ':'), val...), '}')
			}
		}
	}
	data, _ := json.Marshal(d)
	return data
}

func seedOf(id string, seed int64) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%d", id, seed) // a hash's Write never fails
	return h.Sum64()
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, req *chatRequest, id string, slot int, b Behaviour, queued time.Duration) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, 500, "server_error", "streaming unsupported")
		return
	}
	limit := tokenLimit(req)
	seed := int64(0)
	if req.Seed != nil {
		seed = *req.Seed
	}
	rng := rand.New(rand.NewPCG(seedOf(id, seed), 7))
	fx := s.fixture(id)
	n := s.account(req, fx, slot, limit, b)
	// What to say.
	plan := s.plan(req, id, fx, b, rng)
	g := s.open(w, fl, r, req, b, n, queued)
	if b.StallAfterMS > 0 && !g.wait(time.Duration(b.StallAfterMS)*time.Millisecond) {
		return
	}
	n.readN = n.promptTokens - n.cached
	n.promptDur = time.Duration(float64(n.readN) / s.cfg.PromptTPS * float64(time.Second))
	lead, ok := s.prefill(g, n.readN, n.promptDur)
	if !ok {
		return
	}
	decodeStart := s.cfg.Now()
	finish := "stop"
	if plan.tool != nil {
		finish = "tool_calls"
	}
	cw := g.cw
	cw.lazy = true
	defer func() { cw.lazy = false; cw.flush() }()
	n.emitted, finish, ok = s.decode(g, plan.tokens(), limit, lead, decodeStart, finish)
	if !ok {
		return
	}
	cw.lazy = false
	if b.FinishReason != nil {
		finish = *b.FinishReason
	}
	n.decodeDur = s.cfg.Now().Sub(decodeStart)
	if g.ew != nil {
		g.ew.finish(finish, n.emitted, n.decodeDur)
		if !b.NoDone && !req.native {
			cw.raw("data: [DONE]\n\n")
		}
		s.countServed()
		return
	}
	llamaEnd(cw, req, b, n, finish)
	s.countServed()
}

// tokenLimit is the request's cap on generated tokens (-1: none), from
// the first of the fields that set one.
func tokenLimit(req *chatRequest) int {
	for _, v := range []*int{req.MaxTokens, req.MaxCompletion, req.NPredict} {
		if v != nil {
			return *v
		}
	}
	return -1
}

// tally is one answer's accounting: its prompt, what the cache held of
// it, and what was read and generated in how long.
type tally struct {
	task                                 int64
	promptTokens, cached, readN, emitted int
	promptDur, decodeDur                 time.Duration
}

// account counts the prompt and what the slot's cache holds of it: exact
// counts for bundle prompts; the cache reuses the common prefix with what
// this slot held last, like llama.cpp. It records the slot's new state.
func (s *Server) account(req *chatRequest, fx *fixtures.Fixture, slot, limit int, b Behaviour) tally {
	prompt := promptText(req)
	promptTokens := s.countPrompt(req, fx)
	s.mu.Lock()
	prev := s.last[slot]
	s.task++
	task := s.task
	seen := s.seen[prompt]
	s.seen[prompt] = true
	s.mu.Unlock()
	cached := cachedTokens(prev.prompt, prompt, promptTokens)
	if seen { // llama.cpp's prompt cache keeps earlier prompts in host memory
		cached = promptTokens - 1
	}
	if b.PromptTokens != nil {
		promptTokens = *b.PromptTokens
	}
	if b.CachedTokens != nil {
		cached = *b.CachedTokens
	}
	if cached > promptTokens {
		cached = promptTokens
	}
	s.mu.Lock()
	s.last[slot] = slotState{prompt: prompt, promptTokens: promptTokens, task: task, params: s.slotParams(req, limit, b)}
	s.mu.Unlock()
	return tally{task: task, promptTokens: promptTokens, cached: cached}
}

// stream is one answer being streamed: what generate's steps share.
type stream struct {
	r  *http.Request
	b  Behaviour
	cw *chunkWriter
	// ew is the other engine's wire (nil: llama-server's, which generate
	// writes itself).
	ew     *engineWire
	strata bool
}

// wait waits d as the engine does between its steps; false when the
// client has gone.
func (g *stream) wait(d time.Duration) bool {
	if g.strata {
		return g.ew.strataWait(g.r.Context(), d)
	}
	return sleepCtx(g.r.Context(), d)
}

// open sends the stream's headers and makes its writers.
func (s *Server) open(w http.ResponseWriter, fl http.Flusher, r *http.Request, req *chatRequest, b Behaviour, n tally, queued time.Duration) *stream {
	strata := s.cfg.Dialect == DialectStrata
	w.Header().Set("Content-Type", "text/event-stream")
	if req.native {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	if strata {
		// serve/server.py @452325a9 Handler._sse: HTTP/1.0, no length, the
		// stream ends by closing (Connection: close from strataGate;
		// identity makes net/http close instead of chunking).
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Transfer-Encoding", "identity")
	}
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	fl.Flush()
	cw := &chunkWriter{w: w, fl: fl, id: fmt.Sprintf("chatcmpl-sim%024d", n.task), model: s.cfg.ModelPath, fingerprint: s.BuildInfo(), created: s.cfg.Now().Unix()}
	g := &stream{r: r, b: b, cw: cw, strata: strata}
	if !s.llamaServer() {
		g.ew = s.newEngineWire(cw, req, n.promptTokens, n.cached, queued, b)
		g.ew.task = n.task
	}
	if strata {
		// server.py @452325a9 openai_chunks: "chatcmpl-<24 hex>", the
		// configured model name.
		cw.id, cw.model = fmt.Sprintf("chatcmpl-%024x", n.task), s.strataModel()
		g.ew.role() // Strata's role chunk goes out before the engine runs
	}
	return g
}

// prefill sends the scripted keep-alives, reads the prompt (readN tokens
// in promptDur) and sends what comes before the first token. It returns
// the decode steps the first token takes, or false when the client has
// gone.
func (s *Server) prefill(g *stream, readN int, promptDur time.Duration) (int, bool) {
	b, cw, ew := g.b, g.cw, g.ew
	for i := 0; i < b.KeepAlives; i++ {
		if g.strata {
			cw.raw(": keep-alive\n\n")
		} else {
			cw.raw(":\n\n")
		}
	}
	prefillStart := s.cfg.Now()
	if g.strata {
		if !ew.strataPrefill(g.r.Context(), readN, promptDur) {
			return 0, false
		}
	} else if !sleepCtx(g.r.Context(), promptDur) {
		return 0, false
	}
	if ew == nil {
		cw.delta(map[string]any{"role": "assistant", "content": nil})
		for i := 0; i < b.EmptyDeltas; i++ {
			cw.delta(map[string]any{"content": ""})
		}
		return 1, true // the first token takes one decode step after the prefill
	}
	ew.prefillStart, ew.promptDur = prefillStart, promptDur
	ew.role()
	for i := 0; i < b.EmptyDeltas; i++ {
		ew.token(map[string]any{"content": ""})
	}
	return ew.lead(), true
}

// decode streams the tokens, each when the decode rate makes it due
// (counted from decodeStart, lead steps before the first), up to limit,
// with the scripted faults. It returns how many were sent and the finish
// reason, or false when the stream ended early.
func (s *Server) decode(g *stream, tokens []map[string]any, limit, lead int, decodeStart time.Time, finish string) (int, string, bool) {
	cw, emitted := g.cw, 0
	for i, t := range tokens {
		if limit >= 0 && emitted >= limit {
			return emitted, "length", true
		}
		if !s.fault(g, i, emitted) {
			return emitted, finish, false
		}
		due := decodeStart.Add(time.Duration(float64(emitted+lead) / s.cfg.DecodeTPS * float64(time.Second)))
		if d := due.Sub(s.cfg.Now()); d > 0 {
			cw.flush()
			if !sleepCtx(g.r.Context(), d) {
				return emitted, finish, false
			}
		}
		if g.ew == nil {
			cw.delta(t)
		} else {
			g.ew.token(t)
		}
		emitted++
		if cw.err != nil {
			return emitted, finish, false
		}
	}
	return emitted, finish, true
}

// fault plays the behaviour's faults due before the token at index i
// (emitted sent so far); false when the stream ends there. A cut or a
// death closes the connection mid-stream.
func (s *Server) fault(g *stream, i, emitted int) bool {
	b, cw := g.b, g.cw
	if b.ErrorEventAfter != nil && emitted == *b.ErrorEventAfter {
		if g.strata {
			g.ew.strataStreamError(b.ErrorMessage)
			return false
		}
		cw.raw(`data: {"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}` + "\n\n")
		return false
	}
	if b.CutAfter != nil && emitted == *b.CutAfter {
		cw.flush()
		panic(http.ErrAbortHandler) // closes the connection mid-stream
	}
	if b.MalformedAfter != nil && emitted == *b.MalformedAfter {
		cw.raw(`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"x"}` + "\n\n")
	}
	if b.InvalidUTF8After != nil && emitted == *b.InvalidUTF8After {
		cw.raw("data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n")
	}
	if b.LongLine && i == 0 {
		cw.delta(map[string]any{"content": strings.Repeat("a", 1<<20+10)})
	}
	if b.Die && emitted == 2 {
		cw.flush()
		s.die()
		panic(http.ErrAbortHandler)
	}
	return true
}

// llamaEnd ends llama-server's stream: the finish chunk, then usage and
// timings (on the finish chunk when the request asked for no usage), and
// [DONE], with the scripted omissions.
func llamaEnd(cw *chunkWriter, req *chatRequest, b Behaviour, n tally, finish string) {
	timings := map[string]any{
		"cache_n": n.cached, "prompt_n": n.readN, "prompt_ms": ms(n.promptDur), "prompt_per_token_ms": perToken(n.promptDur, n.readN),
		"prompt_per_second": rate(n.readN, n.promptDur),
		"predicted_n":       n.emitted, "predicted_ms": ms(n.decodeDur), "predicted_per_token_ms": perToken(n.decodeDur, n.emitted),
		"predicted_per_second": rate(n.emitted, n.decodeDur),
	}
	if b.PredictedNSkew != nil {
		timings["predicted_n"] = n.emitted + *b.PredictedNSkew
	}
	usage := map[string]any{"completion_tokens": n.emitted, "prompt_tokens": n.promptTokens, "total_tokens": n.promptTokens + n.emitted,
		"prompt_tokens_details": map[string]any{"cached_tokens": n.cached}}
	finishChunk := []any{map[string]any{"finish_reason": finish, "index": 0, "delta": map[string]any{}}}
	switch {
	case b.UsageOnFinish || !req.StreamOptions.IncludeUsage:
		extra := map[string]any{}
		if !b.OmitTimings {
			extra["timings"] = timings
		}
		cw.chunk(finishChunk, extra)
	default:
		cw.chunk(finishChunk, nil)
		extra := map[string]any{}
		if !b.OmitUsage {
			extra["usage"] = usage
		}
		if !b.OmitTimings {
			extra["timings"] = timings
		}
		if b.DuplicateKeys {
			data, _ := json.Marshal(extra)
			cw.raw(`data: {"choices":[],"choices":[],` + string(data[1:]) + "\n\n")
		} else {
			cw.chunk([]any{}, extra)
		}
	}
	if !b.NoDone {
		cw.raw("data: [DONE]\n\n")
	}
}

// countServed counts an answer served to its end (the /metrics counter).
func (s *Server) countServed() {
	s.mu.Lock()
	s.served++
	s.mu.Unlock()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func perToken(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return ms(d) / float64(n)
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func promptText(req *chatRequest) string {
	var b strings.Builder
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		b.WriteString("<tools>")
		b.Write(req.Tools)
	}
	for _, m := range req.Messages {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	return b.String()
}

// countPrompt is the simulator's count of a chat body's prompt: a bundle
// request (fx, its messages unchanged) has the fixture's frozen count with
// what the engine's own shape of the request's tools changes
// (toolShapeTokens), anything else an estimate. Strata's count_tokens
// counts with it too, so the count and the chat's usage agree.
func (s *Server) countPrompt(req *chatRequest, fx *fixtures.Fixture) int {
	if fx != nil && sameMessages(fx, req) {
		return fx.InputTokens + s.toolShapeTokens(req.Tools)
	}
	return estimateTokens(promptText(req))
}

// estimateTokens approximates a count for prompts outside the bundle.
func estimateTokens(s string) int { return len(s)/4 + 1 }

// cachedTokens models llama.cpp's prefix cache: the common prefix with the
// slot's previous prompt, and all but one token when the prompt repeats.
func cachedTokens(prev, cur string, total int) int {
	if prev == cur && prev != "" {
		return total - 1
	}
	n := 0
	for n < len(prev) && n < len(cur) && prev[n] == cur[n] {
		n++
	}
	c := n / 6 // a short shared template prefix, in (cautious) tokens
	if c >= total {
		c = total - 1
	}
	return max(c, 0)
}

func (s *Server) fixture(id string) *fixtures.Fixture {
	if s.cfg.Bundle == nil || id == "" {
		return nil
	}
	f, err := s.cfg.Bundle.Fixture(id)
	if err != nil {
		return nil
	}
	return f
}

func sameMessages(f *fixtures.Fixture, req *chatRequest) bool {
	if len(f.Messages) != len(req.Messages) {
		return false
	}
	for i := range f.Messages {
		if f.Messages[i] != req.Messages[i] {
			return false
		}
	}
	return true
}

func (s *Server) slotParams(req *chatRequest, limit int, b Behaviour) map[string]any {
	get := func(p *float64, def float64) float64 {
		if p != nil {
			return *p
		}
		return def
	}
	p := map[string]any{
		"seed": int64(4294967295), "temperature": get(req.Temperature, 0.8), "top_p": get(req.TopP, 0.95),
		"min_p": get(req.MinP, 0.05), "presence_penalty": get(req.PresencePenalty, 0),
		"repeat_penalty": get(req.RepeatPenalty, 1.0), "n_predict": limit, "max_tokens": limit,
		"top_k": 40, "stream": req.Stream,
	}
	if req.Seed != nil {
		p["seed"] = *req.Seed
	}
	if req.TopK != nil {
		p["top_k"] = *req.TopK
	}
	if s.cfg.Dialect == DialectIKLlama { // ik's /slots echoes it too
		p["frequency_penalty"] = get(req.FrequencyPenalty, 0)
	}
	for k, v := range b.SlotParams {
		var x any
		_ = json.Unmarshal(v, &x)
		p[k] = x
	}
	return p
}

// replay writes a recorded capture's body, event by event.
func (s *Server) replay(w http.ResponseWriter, name string) {
	dir := ""
	if s.cfg.Scenario != nil {
		dir = s.cfg.Scenario.CapturesDir
	}
	c, err := loadCapture(dir, name)
	if err != nil {
		writeError(w, 500, "server_error", err.Error())
		return
	}
	for k, vs := range c.Header {
		if k == "Content-Length" || k == "Transfer-Encoding" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(c.Status)
	fl, _ := w.(http.Flusher)
	for _, ev := range splitEvents(c.Body) {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

func splitEvents(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		i := bytes.Index(body, []byte("\n\n"))
		if i < 0 {
			return append(out, body)
		}
		out = append(out, body[:i+2])
		body = body[i+2:]
	}
	return out
}

var errNoCaptures = errors.New("the scenario names a replay but no captures_dir")
