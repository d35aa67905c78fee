package simengine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/version"
)

// Dialects the simulator can speak, so the runner's dialect decisions have
// fast tests: llama.cpp of a given build (the per-request reasoning budget
// arrived in b9982), Strata's own server (as its source shows it:
// strata.go), and an engine strata cannot identify.
const (
	DialectLlamaCpp = "llama.cpp"
	DialectStrata   = "strata"
	DialectUnknown  = "unknown"
)

// DialectStrataAlias is the Strata dialect's former name, still accepted
// (old scenarios and scripts name it); New reads it as DialectStrata.
const DialectStrataAlias = "strata-server"

// Dialects of other engines: each serves that engine's identification
// endpoints and streaming wire (shapes from the engines' sources, cited in
// engines.go and wire.go), with the simulator's own model behind them.
const (
	DialectVLLM     = "vllm"
	DialectSGLang   = "sglang"
	DialectOllama   = "ollama"
	DialectIKLlama  = "ik_llama.cpp"
	DialectLMStudio = "lmstudio"
	DialectTabbyAPI = "tabbyapi"
)

// Dialects lists every dialect the simulator speaks, llama.cpp first.
func Dialects() []string {
	return []string{DialectLlamaCpp, DialectStrata, DialectUnknown, DialectVLLM, DialectSGLang,
		DialectOllama, DialectIKLlama, DialectLMStudio, DialectTabbyAPI}
}

// KnownDialect reports whether d is one of Dialects (or the Strata
// dialect's former name).
func KnownDialect(d string) bool {
	if d == DialectStrataAlias {
		return true
	}
	for _, k := range Dialects() {
		if d == k {
			return true
		}
	}
	return false
}

// llamaServer reports whether the dialect is served by the llama-server
// handlers (llama.cpp and the unknown engine), whose wire stays as it
// always was.
func (s *Server) llamaServer() bool {
	switch s.cfg.Dialect {
	case DialectLlamaCpp, DialectUnknown:
		return true
	}
	return false
}

// Engine options: the Config value, overridden by the scenario's when it
// sets one.
func (s *Server) vllmPerRequestMetrics() bool {
	return optOn(s.cfg.VLLMPerRequestMetrics, s.scenario().VLLMPerRequestMetrics)
}

func (s *Server) vllmPromptTokensDetails() bool {
	return optOn(s.cfg.VLLMPromptTokensDetails, s.scenario().VLLMPromptTokensDetails)
}

func (s *Server) sglangRejectXHigh() bool {
	if v := s.scenario().SGLangRejectXHigh; v != nil {
		return *v
	}
	return s.cfg.SGLangRejectXHigh
}

func (s *Server) tabbyNoTimings() bool {
	if v := s.scenario().TabbyAPINoTimings; v != nil {
		return *v
	}
	return s.cfg.TabbyAPINoTimings
}

// optOn is an option that is on unless set off.
func optOn(cfg, sc *bool) bool {
	switch {
	case sc != nil:
		return *sc
	case cfg != nil:
		return *cfg
	}
	return true
}

func (s *Server) scenario() *Scenario {
	if s.cfg.Scenario != nil {
		return s.cfg.Scenario
	}
	return &Scenario{}
}

// slotsRefused answers /slots as a server started without --slots does
// (llama.cpp and ik_llama.cpp alike), when the scenario says so.
func (s *Server) slotsRefused(w http.ResponseWriter) bool {
	if !s.scenario().NoSlots {
		return false
	}
	writeError(w, 501, "not_supported_error", "This server does not support slots endpoint.")
	return true
}

// DefaultBuild is the llama.cpp build the simulator speaks as by default:
// the one in ../shared/engines/llama.cpp.
const DefaultBuild = 10470

// Version is the simulator's own version string.
func Version() string { return "strata-simulator-" + version.Version }

// BuildInfo is what the simulator reports as its build: llama.cpp's
// b<build>-<commit> form when it speaks as llama.cpp, Strata's "Strata
// <version>" with the simulator's own version when it speaks as Strata
// (serve/server.py @452325a9 Handler._props), its own name otherwise.
func (s *Server) BuildInfo() string {
	switch s.cfg.Dialect {
	case DialectLlamaCpp:
		return fmt.Sprintf("b%d-5151a7e", s.cfg.Build)
	case DialectStrata:
		return "Strata " + Version()
	}
	return Version()
}

// effectiveBudget is the reasoning budget the engine applies to a request
// (-1: none), with each dialect's own reading of the request fields:
//   - llama.cpp from b9982 reads reasoning_budget_tokens, else
//     thinking_budget_tokens; absent or -1 defers to the server's
//     --reasoning-budget, 0 ends thinking at once, N is the budget;
//   - llama.cpp before b9982 ignores reasoning_budget_tokens (only
//     thinking_budget_tokens and the server's budget apply);
//   - Strata's server reads reasoning_budget_tokens with 0 or less as no
//     budget (serve/server.py @452325a9 Service.reasoning_budget);
//   - TabbyAPI reads reasoning_budget_tokens or an alias, absent or
//     negative deferring to the server's budget; ik_llama.cpp reads
//     thinking_budget_tokens only when the server's budget is -1; the
//     other engines read none;
//   - an unknown engine is simulated as the current llama.cpp.
func (s *Server) effectiveBudget(req *chatRequest) int {
	server := -1
	if s.cfg.ReasoningBudget != nil {
		server = *s.cfg.ReasoningBudget
	}
	pick := func(v *int) int {
		if v == nil || *v == -1 {
			return server
		}
		return *v
	}
	switch {
	case s.cfg.Dialect == DialectStrata:
		v := server // the request's value, else the config's
		if req.ReasoningBudget != nil {
			v = *req.ReasoningBudget
		}
		if v <= 0 {
			return -1
		}
		return v
	case s.cfg.Dialect == DialectLlamaCpp && s.cfg.Build < 9982:
		return pick(req.ThinkingBudget)
	case s.cfg.Dialect == DialectTabbyAPI:
		// _resolve_reasoning_budget (endpoints/OAI/utils/chat_completion.py
		// @e632af4 l.560–581): the field or an alias, absent or negative
		// deferring to the server's model.reasoning_budget_tokens.
		for _, v := range []*int{req.ReasoningBudget, req.ReasoningBudgetAlias, req.ThinkingBudgetAlias, req.ThinkingTokenBudget} {
			if v != nil && *v >= 0 {
				return *v
			}
		}
		return server
	case s.cfg.Dialect == DialectIKLlama:
		// examples/server/server-common.cpp @8337e4c l.894–907: the request's
		// thinking_budget_tokens only when the server's budget is -1.
		if server == -1 && req.ThinkingBudget != nil {
			return *req.ThinkingBudget
		}
		return server
	case !s.llamaServer():
		// The other engines read no budget field (dialect's notes).
		return server
	}
	if req.ReasoningBudget != nil {
		return pick(req.ReasoningBudget)
	}
	return pick(req.ThinkingBudget)
}

// template is the chat template the simulator serves: the scenario's
// /props chat_template when it sets one, else the configured one.
func (s *Server) template() string {
	if sc := s.cfg.Scenario; sc != nil {
		if raw, ok := sc.Props["chat_template"]; ok {
			var t string
			if json.Unmarshal(raw, &t) == nil {
				return t
			}
		}
	}
	if s.cfg.Template != "" {
		return s.cfg.Template
	}
	return simTemplate
}

// applyTemplate serves llama.cpp's POST /apply-template: the chat body is
// rendered with the served template, as the chat endpoint would.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Scenario != nil && s.cfg.Scenario.NoTemplateEndpoints {
		writeError(w, 404, "not_found_error", "File Not Found")
		return
	}
	var req struct {
		Messages json.RawMessage            `json:"messages"`
		Tools    json.RawMessage            `json:"tools"`
		Kwargs   map[string]json.RawMessage `json:"chat_template_kwargs"`
		Effort   json.RawMessage            `json:"reasoning_effort"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		writeError(w, 400, "invalid_request_error", "'messages' is required")
		return
	}
	t, err := s.servedTemplate()
	if err != nil {
		writeError(w, 500, "server_error", err.Error())
		return
	}
	in := corpus.PromptInput(req.Messages, nil)
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		in.Tools = req.Tools
	}
	in.Kwargs = map[string]json.RawMessage{}
	for k, v := range req.Kwargs {
		in.Kwargs[k] = v
	}
	if len(req.Effort) > 0 {
		in.Kwargs["reasoning_effort"] = req.Effort
	}
	out, err := t.Render(in)
	if err != nil {
		writeError(w, 500, "server_error", err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"prompt": out})
}

var contentMarker = regexp.MustCompile(`\[case ([A-Za-z0-9-]+)\]\n`)

// tokenize serves llama.cpp's POST /tokenize with the simulator's counts:
// a bundle prompt rendered exactly as the bundle's template renders it has
// its frozen count (plus the scenario's skew); anything else an estimate.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Scenario != nil && s.cfg.Scenario.NoTemplateEndpoints {
		writeError(w, 404, "not_found_error", "File Not Found")
		return
	}
	var req struct {
		Content string `json:"content"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, 500, "server_error", "[json.exception.parse_error] "+err.Error())
		return
	}
	n := estimateTokens(req.Content)
	if m := contentMarker.FindStringSubmatch(req.Content); m != nil {
		if f := s.fixture(m[1]); f != nil && s.rendersAs(f, req.Content) {
			n = f.InputTokens
			if sc := s.cfg.Scenario; sc != nil {
				n += sc.TokenizeSkew[f.RequestID]
			}
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(200)
	_, _ = w.Write(tokensJSON(n))
}

// tokensJSON is the answer to /tokenize of n tokens, as writeJSON would
// write {"tokens": [0, 1, …]}, without encoding/json's reflection for each
// of a 16K prompt's ids (the simulated engine answers a run's preflight
// with some 100,000 of them).
func tokensJSON(n int) []byte {
	b := make([]byte, 0, 16+7*max(n, 0))
	b = append(b, `{"tokens":[`...)
	for i := range max(n, 0) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(i%151643), 10)
	}
	return append(b, "]}\n"...)
}

// rendersAs reports whether text is the fixture rendered with the bundle's
// own template (the configured one): only then is the frozen count right.
func (s *Server) rendersAs(f *fixtures.Fixture, text string) bool {
	want, ok := s.bundleRender(f)
	return ok && want == text
}
