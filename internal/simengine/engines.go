package simengine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
)

// Routes and identification endpoints of the dialects other than
// llama-server's. Shapes are those recorded, with the engines' source
// files and commits, in the engine notes (vLLM, SGLang, Ollama,
// ik_llama.cpp, LM Studio, TabbyAPI); each handler cites its source.
//
// Every dialect but Ollama answers GET /health (503 while loading, then
// 200); Ollama serves none (server/routes.go @fb30760 GenerateRoutes), and
// answers nothing at all until it serves (Serve l.2034–2062: connections
// are taken before srvr.Serve). Every dialect answers GET /metrics (the
// simulator's own request counter, which strata's engine manager reads)
// and POST /v1/chat/completions; anything else the engine does not serve
// is its 404.

// Engine versions the dialects report.
const (
	vllmVersion   = "0.11.2"
	sglangVersion = "0.5.6"
	// ollamaVersion is the newest tag of the snapshot read (v0.32.15,
	// ollama @fb30760), which takes reasoning_effort xhigh.
	ollamaVersion = "0.32.15"
)

func (s *Server) engineMux() http.Handler {
	mux := http.NewServeMux()
	if s.cfg.Dialect != DialectOllama {
		mux.HandleFunc("GET /health", s.engineHealth)
	}
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	switch s.cfg.Dialect {
	case DialectVLLM:
		// vllm/entrypoints/serve/instrumentator/basic.py @dcbf2004: show_version, /load.
		mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"version": vllmVersion})
		})
		mux.HandleFunc("GET /load", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"server_load": 0})
		})
		mux.HandleFunc("GET /v1/models", s.engineModels)
		mux.HandleFunc("POST /tokenize", s.vllmTokenize)
		if !s.cfg.VLLMNoRender {
			mux.HandleFunc("POST /v1/chat/completions/render", s.vllmRender)
		}
	case DialectSGLang:
		// python/sglang/srt/entrypoints/http_server.py @0025436e: no /version;
		// /get_server_info (deprecated for /server_info: sgl-project/sglang
		// #14533, #21463), /get_model_info, /v1/tokenize (alias /tokenize).
		mux.HandleFunc("GET /v1/models", s.engineModels)
		mux.HandleFunc("GET /server_info", s.sglangServerInfo)
		mux.HandleFunc("GET /get_server_info", s.sglangServerInfo)
		mux.HandleFunc("GET /get_model_info", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"model_path": s.cfg.ModelPath, "tokenizer_path": s.cfg.ModelPath,
				"is_generation": true, "preferred_sampling_params": nil, "weight_version": "default"})
		})
		mux.HandleFunc("POST /v1/tokenize", s.sglangTokenize)
		mux.HandleFunc("POST /tokenize", s.sglangTokenize)
	case DialectOllama:
		// ollama server/routes.go (index id 762132854): GET and HEAD / answer
		// "Ollama is running"; /api/version {"version": version.Version}.
		running := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(200)
			if r.Method != http.MethodHead {
				writeText(w, "Ollama is running")
			}
		}
		mux.HandleFunc("GET /{$}", running)
		mux.HandleFunc("HEAD /{$}", running)
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"version": s.ollamaVersion()})
		})
		mux.HandleFunc("GET /v1/models", s.engineModels)
		mux.HandleFunc("POST /api/chat", s.ollamaChat)
		mux.HandleFunc("POST /api/show", s.ollamaShow)
	case DialectIKLlama:
		// ik_llama.cpp examples/server/server.cpp @bb7e35c6 routes.
		mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"version": 4, "features": map[string]any{"sql": false, "zstd_compression": false}})
		})
		mux.HandleFunc("GET /props", s.ikProps)
		mux.HandleFunc("GET /v1/props", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"model_name": s.modelName(), "model_path": s.cfg.ModelPath,
				"modalities": map[string]any{"vision": false, "audio": false}, "n_ctx": s.cfg.ContextTokens})
		})
		mux.HandleFunc("GET /slots", s.ikSlots)
		mux.HandleFunc("POST /apply-template", s.applyTemplate)
		mux.HandleFunc("POST /tokenize", s.tokenize)
		mux.HandleFunc("GET /v1/models", s.engineModels)
		mux.HandleFunc("GET /models", s.engineModels)
		mux.HandleFunc("POST /chat/completions", s.chat)
	case DialectLMStudio:
		mux.HandleFunc("GET /api/v0/models", s.lmstudioModels)
		mux.HandleFunc("GET /v1/models", s.engineModels)
	case DialectTabbyAPI:
		// theroyallab/tabbyAPI endpoints/core/router.py @e632af4: /v1/models,
		// /v1/model/list (same handler), /v1/model, /props (l.137–156),
		// /.well-known/serviceinfo (l.72–98), /v1/sampling/overrides and its
		// alias /v1/sampling/override/list (l.546), /v1/token/encode.
		mux.HandleFunc("GET /v1/models", s.engineModels)
		mux.HandleFunc("GET /v1/model/list", s.engineModels)
		mux.HandleFunc("GET /v1/model", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, s.tabbyCard())
		})
		mux.HandleFunc("GET /props", s.tabbyProps)
		mux.HandleFunc("GET /.well-known/serviceinfo", tabbyServiceInfo)
		mux.HandleFunc("GET /v1/sampling/overrides", s.tabbyOverrides)
		mux.HandleFunc("GET /v1/sampling/override/list", s.tabbyOverrides)
		mux.HandleFunc("POST /v1/token/encode", s.tabbyEncode)
	}
	mux.HandleFunc("/", s.engineNotFound)
	if s.cfg.Dialect == DialectOllama {
		return s.ollamaServes(mux)
	}
	return mux
}

// ollamaServes holds every answer until the model has "loaded": Ollama
// takes connections before it serves, and answers none until then
// (server/routes.go @fb30760 Serve l.2034–2062).
func (s *Server) ollamaServes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if left := s.cfg.LoadTime - s.cfg.Now().Sub(s.started); left > 0 && !sleepCtx(r.Context(), left) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) ollamaVersion() string {
	if s.cfg.OllamaVersion != "" {
		return s.cfg.OllamaVersion
	}
	return ollamaVersion
}

// ollamaAtLeast reports whether the Ollama this server plays is minor.patch
// of 0.x or newer; known is false for a version it cannot read.
func (s *Server) ollamaAtLeast(minor, patch int) (atLeast, known bool) {
	var ma, mi, pa int
	if _, err := fmt.Sscanf(s.ollamaVersion(), "%d.%d.%d", &ma, &mi, &pa); err != nil {
		return false, false
	}
	return ma > 0 || mi > minor || mi == minor && pa >= patch, true
}

// ollamaOpenAIStream: since v0.32.6 (8edecb5c6, "openai: match openai's
// streaming wire format", #17485) Ollama sends role only in the first
// delta, finish_reason on a chunk of its own with an empty delta, and
// usage on one more after it; before, role rode in every delta and
// finish_reason on the last content chunk.
func (s *Server) ollamaOpenAIStream() bool {
	atLeast, _ := s.ollamaAtLeast(32, 6)
	return atLeast
}

// ollamaRejects answers an Ollama before 0.32.12 to a reasoning_effort it
// does not take, as v0.22.0 to v0.32.10 and the Go module's v0.32.11
// (96fb6d2fa) do: HTTP 400 with the OpenAI error shape (openai/openai.go
// @v0.32.10 l.683–684, @96fb6d2fa l.684, through middleware/openai.go and
// openai.NewError). It reports whether it answered.
func (s *Server) ollamaRejects(w http.ResponseWriter, effort json.RawMessage) bool {
	var v string
	if json.Unmarshal(effort, &v) != nil {
		return false
	}
	if takes, known := s.ollamaAtLeast(32, 12); takes || !known {
		return false
	}
	switch v {
	case "high", "medium", "low", "max", "none":
		return false
	}
	writeJSON(w, 400, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf(`invalid reasoning value: '%s' (must be "high", "medium", "low", "max", or "none")`, v),
		"type":    "invalid_request_error", "param": nil, "code": nil}})
	return true
}

// vllmRejects answers a vLLM whose ChatCompletionRequest.reasoning_effort is
// Literal["low", "medium", "high"] (vllm/entrypoints/openai/chat_completion/
// protocol.py @d5dba2d7) to another value: HTTP 400 from the validation
// handler (vllm/frontend/entrypoints/serve/exception_handling/handlers/
// validation.py @055e47c2), its message pydantic's error dict.
func vllmRejects(w http.ResponseWriter, effort json.RawMessage) bool {
	var v string
	if json.Unmarshal(effort, &v) != nil {
		return false
	}
	switch v {
	case "low", "medium", "high":
		return false
	}
	writeJSON(w, 400, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'reasoning_effort'), 'msg': \"Input should be 'low', 'medium' or 'high'\", 'input': '%s', 'ctx': {'expected': \"'low', 'medium' or 'high'\"}}", v),
		"type":    "Bad Request", "param": "body.reasoning_effort", "code": 400}})
	return true
}

// tabbyProps serves TabbyAPI's GET /props (ModelPropsResponse,
// endpoints/core/router.py @e632af4 l.137–156): total_slots (the
// container's max_batch_size), the raw chat template chat requests are
// rendered with, and n_ctx (max_seq_len); no build_info, no model_path.
func (s *Server) tabbyProps(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"total_slots": s.cfg.Slots, "chat_template": s.template(),
		"default_generation_settings": map[string]any{"n_ctx": s.cfg.ContextTokens}})
}

// tabbyServiceInfo serves TabbyAPI's GET /.well-known/serviceinfo
// (endpoints/core/router.py @e632af4 l.72–98), which needs no API key.
func tabbyServiceInfo(w http.ResponseWriter, r *http.Request) {
	const docs = "https://theroyallab.github.io/tabbyAPI"
	writeJSON(w, 200, map[string]any{"version": 0.1,
		"software": map[string]any{"name": "TabbyAPI", "repository": "https://github.com/theroyallab/tabbyAPI", "homepage": "https://github.com/theroyallab/tabbyAPI"},
		"api": map[string]any{
			"openai":   map[string]any{"name": "OpenAI API", "relative_url": "/v1", "documentation": docs, "version": 1},
			"koboldai": map[string]any{"name": "KoboldAI API", "relative_url": "/api", "documentation": docs, "version": 1}}})
}

// tabbyOverrides serves TabbyAPI's GET /v1/sampling/overrides
// (SamplerOverrideListResponse: selected_preset, overrides of {override,
// force, additive}, presets empty without an admin key).
func (s *Server) tabbyOverrides(w http.ResponseWriter, r *http.Request) {
	over := map[string]any{}
	for k, v := range s.cfg.TabbyAPIForced {
		over[k] = map[string]any{"override": v, "force": true, "additive": false}
	}
	var preset any
	if len(over) > 0 {
		preset = "strata-simulated"
	}
	writeJSON(w, 200, map[string]any{"selected_preset": preset, "overrides": over, "presets": []any{}})
}

// engineNotFound is each engine's answer to a route it does not have:
// FastAPI's {"detail":"Not Found"} (vLLM, SGLang, TabbyAPI), gin's text
// (Ollama), llama-server's error object (ik_llama.cpp), and LM Studio's
// error string (its wording is from observed servers, not documented).
func (s *Server) engineNotFound(w http.ResponseWriter, r *http.Request) {
	switch s.cfg.Dialect {
	case DialectVLLM, DialectSGLang, DialectTabbyAPI:
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	case DialectOllama:
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(404)
		writeText(w, "404 page not found")
	case DialectLMStudio:
		writeJSON(w, 404, map[string]any{"error": fmt.Sprintf("Unexpected endpoint or method. (%s %s)", r.Method, r.URL.Path)})
	default:
		writeError(w, 404, "not_found_error", "File Not Found")
	}
}

// engineHealth: 503 while loading, then 200 — vLLM's and SGLang's with an
// empty body (http_server.py @0025436e), TabbyAPI's {"status":"healthy"}
// (endpoints/core/router.py @03189bcb), the others llama-server's.
func (s *Server) engineHealth(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		writeError(w, 503, "unavailable_error", "Loading model")
		return
	}
	switch s.cfg.Dialect {
	case DialectVLLM, DialectSGLang:
		w.WriteHeader(200)
	case DialectTabbyAPI:
		// HealthCheckResponse: issues is always there
		// (endpoints/core/types/health.py @e632af4).
		writeJSON(w, 200, map[string]any{"status": "healthy", "issues": []any{}})
	default:
		writeJSON(w, 200, map[string]string{"status": "ok"})
	}
}

func (s *Server) modelName() string {
	return strings.TrimSuffix(filepath.Base(s.cfg.ModelPath), filepath.Ext(s.cfg.ModelPath))
}

// engineModels serves GET /v1/models as each engine does.
func (s *Server) engineModels(w http.ResponseWriter, r *http.Request) {
	created := s.started.Unix()
	card := map[string]any{"id": s.cfg.ModelPath, "object": "model", "created": created}
	switch s.cfg.Dialect {
	case DialectVLLM:
		// vllm/entrypoints/serve/engine/protocol.py @f1bf7bd0 ModelCard
		// (owned_by "vllm", root, parent, max_model_len, permission); the
		// models serving code fills permission=[ModelPermission()] with
		// ModelPermission's defaults.
		card["owned_by"] = "vllm"
		card["root"] = s.cfg.ModelPath
		card["parent"] = nil
		card["max_model_len"] = s.cfg.ContextTokens
		card["permission"] = []any{map[string]any{
			"id": "modelperm-sim0000000000000000000000", "object": "model_permission", "created": created,
			"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true, "allow_search_indices": false,
			"allow_view": true, "allow_fine_tuning": false, "organization": "*", "group": nil, "is_blocking": false}}
	case DialectSGLang:
		// python/sglang/srt/entrypoints/openai/protocol.py @004c82e0 ModelCard;
		// http_server.py @0025436e available_models (max_model_len = context_len).
		card["owned_by"] = "sglang"
		card["root"] = s.cfg.ModelPath
		card["max_model_len"] = s.cfg.ContextTokens
	case DialectOllama:
		// ollama openai/openai.go @00988753 ToListCompletion: owned_by is the
		// model name's namespace ("library" for library models).
		card["owned_by"] = "library"
	case DialectIKLlama:
		// ik_llama.cpp examples/server/server.cpp @bb7e35c6 handle_models.
		card["owned_by"] = "llamacpp"
		card["meta"] = map[string]any{"n_ctx_train": s.cfg.ContextTokens}
	case DialectLMStudio:
		// LM Studio's OpenAI-compatible list (owned_by as LM Studio serves it;
		// not in the docs read).
		delete(card, "created")
		card["owned_by"] = "organization_owner"
	case DialectTabbyAPI:
		// get_current_model_list (endpoints/core/utils/model.py @e632af4):
		// without an admin key only the loaded model, ModelCard(id=…), whose
		// parameters are null.
		card = s.tabbyCard()
		card["parameters"] = nil
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{card}})
}

// tabbyCard is TabbyAPI's ModelCard (endpoints/core/types/model.py
// @03189bcb): owned_by "tabbyAPI" and the loaded model's parameters.
func (s *Server) tabbyCard() map[string]any {
	return map[string]any{"id": s.cfg.ModelPath, "object": "model", "created": s.started.Unix(), "owned_by": "tabbyAPI",
		"logging": nil, "parameters": map[string]any{"max_seq_len": s.cfg.ContextTokens, "cache_size": s.cfg.ContextTokens,
			"cache_mode": "FP16", "chunk_size": 2048, "prompt_template": nil}}
}

// lmstudioModels serves LM Studio's REST API v0 GET /api/v0/models, in the
// shape of its documentation ("Response format" of GET /api/v0/models,
// lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx, served at
// https://lmstudio.ai/docs/api/rest-api): id, object, type, publisher,
// arch, compatibility_type, quantization, state, max_context_length.
func (s *Server) lmstudioModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": s.cfg.ModelPath, "object": "model", "type": "llm", "publisher": "strata-bench", "arch": "qwen3",
		"compatibility_type": "gguf", "quantization": "Q4_K_M", "state": "loaded", "max_context_length": s.cfg.ContextTokens}}})
}

// sglangServerInfo serves SGLang's GET /get_server_info: the ServerArgs
// fields, internal_states and version (http_server.py @0025436e). The
// simulator speaks as a server started with --enable-cache-report and
// --reasoning-parser qwen3, without --enable-metrics.
func (s *Server) sglangServerInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"model_path": s.cfg.ModelPath, "tokenizer_path": s.cfg.ModelPath, "served_model_name": s.cfg.ModelPath,
		"context_length": s.cfg.ContextTokens, "tp_size": 1, "dp_size": 1, "max_running_requests": s.cfg.Slots,
		"enable_cache_report": true, "enable_metrics": false, "reasoning_parser": "qwen3", "tool_call_parser": "qwen25",
		"stream_response_default_include_usage": false, "preferred_sampling_params": nil,
		"internal_states": []any{map[string]any{"last_gen_throughput": s.cfg.DecodeTPS}},
		"version":         sglangVersion,
	})
}

// frozenCount is the simulator's token count of a bundle request found by
// its [case <id>] marker (the frozen count, what the engine's own shape of
// the request's tools adds, and the scenario's skew), or the estimate of
// text.
func (s *Server) frozenCount(firstMessage, text string, tools json.RawMessage) int {
	if m := caseMarker.FindStringSubmatch(firstMessage); m != nil {
		if f := s.fixture(m[1]); f != nil {
			return f.InputTokens + s.toolShapeTokens(tools) + s.scenario().TokenizeSkew[f.RequestID]
		}
	}
	return estimateTokens(text)
}

// renderedCount counts a prompt text: a bundle prompt rendered with the
// bundle's template has its frozen count, anything else the estimate (as
// the llama-server /tokenize does).
func (s *Server) renderedCount(text string) int {
	if m := contentMarker.FindStringSubmatch(text); m != nil {
		if f := s.fixture(m[1]); f != nil && s.rendersAs(f, text) {
			return f.InputTokens + s.scenario().TokenizeSkew[f.RequestID]
		}
	}
	return estimateTokens(text)
}

func tokenIDs(n int) []int {
	toks := make([]int, max(n, 0))
	for i := range toks {
		toks[i] = i % 151643
	}
	return toks
}

// vllmTokenize serves vLLM's POST /tokenize
// (vllm/entrypoints/serve/tokenize/protocol.py @343bacaf, api_router.py
// @b91ee1b4): a chat form {messages, add_generation_prompt,
// chat_template_kwargs, ...} or a completion form {prompt}, answered with
// {count, max_model_len, tokens, token_strs}. A bundle request (its [case
// <id>] marker) counts its frozen input tokens.
func (s *Server) vllmTokenize(w http.ResponseWriter, r *http.Request) {
	if s.scenario().NoTemplateEndpoints {
		s.engineNotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		Prompt *string         `json:"prompt"`
		Tools  json.RawMessage `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || (req.Messages == nil && req.Prompt == nil) {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "1 validation error: messages or prompt is required",
			"type": "BadRequestError", "param": nil, "code": 400}})
		return
	}
	var n int
	switch {
	case req.Prompt != nil:
		n = s.renderedCount(*req.Prompt)
	case len(req.Messages) > 0:
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		n = s.frozenCount(req.Messages[0].Content, all.String(), req.Tools)
	}
	writeJSON(w, 200, map[string]any{"count": n, "max_model_len": s.cfg.ContextTokens, "tokens": tokenIDs(n), "token_strs": nil})
}

// vllmRender serves vLLM's POST /v1/chat/completions/render
// (vllm/entrypoints/serve/render/api_router.py @1c608d64, render/serving.py
// @0001948b render_chat_request → GenerateRequest): the exact chat body,
// answered with the token ids of its rendering and the resolved sampling
// parameters (the request's values, else vLLM's defaults; the simulator
// has no generation config).
func (s *Server) vllmRender(w http.ResponseWriter, r *http.Request) {
	if s.scenario().NoTemplateEndpoints {
		s.engineNotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "1 validation error: messages is required",
			"type": "Bad Request", "param": "body.messages", "code": 400}})
		return
	}
	if s.cfg.VLLMRejectXHigh && vllmRejects(w, req.ReasoningEffort) {
		return
	}
	var all strings.Builder
	for _, m := range req.Messages {
		all.WriteString(m.Content)
	}
	n := s.frozenCount(req.Messages[0].Content, all.String(), req.Tools)
	or := func(v *float64, d float64) float64 {
		if v != nil {
			return *v
		}
		return d
	}
	topK := 0
	if req.TopK != nil {
		topK = *req.TopK
	}
	// vLLM's _DEFAULT_SAMPLING_PARAMS (chat_completion/protocol.py
	// @002032ee to_sampling_params).
	sp := map[string]any{"n": 1, "temperature": or(req.Temperature, 1.0), "top_p": or(req.TopP, 1.0), "top_k": topK,
		"min_p": or(req.MinP, 0), "presence_penalty": or(req.PresencePenalty, 0), "frequency_penalty": or(req.FrequencyPenalty, 0),
		"repetition_penalty": or(req.RepetitionPenalty, 1.0), "seed": req.Seed, "max_tokens": req.MaxTokens}
	writeJSON(w, 200, map[string]any{"request_id": "chatcmpl-sim", "token_ids": tokenIDs(n), "features": nil, "sampling_params": sp,
		"model": s.cfg.ModelPath, "stream": req.Stream, "stream_options": map[string]any{"include_usage": req.StreamOptions.IncludeUsage},
		"cache_salt": nil, "priority": 0, "kv_transfer_params": nil})
}

// sglangTokenize serves SGLang's POST /v1/tokenize: TokenizeRequest takes
// exactly one of prompt and messages (python/sglang/srt/entrypoints/openai/
// protocol.py @004c82e0; messages with tools, reasoning_effort,
// chat_template_kwargs and extra keys are rendered as a chat request) and
// answers {tokens, count, max_model_len}. An older build
// (serving_tokenize.py @0351c1fa) takes only {prompt: str | [str]}, the
// prompt as given.
func (s *Server) sglangTokenize(w http.ResponseWriter, r *http.Request) {
	if s.scenario().NoTemplateEndpoints {
		s.engineNotFound(w, r)
		return
	}
	var req struct {
		Prompt   json.RawMessage `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		Tools json.RawMessage `json:"tools"`
	}
	var text string
	err := json.NewDecoder(r.Body).Decode(&req)
	if err == nil && len(req.Messages) > 0 && len(req.Prompt) == 0 && !s.cfg.SGLangPromptTokenize {
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		n := s.frozenCount(req.Messages[0].Content, all.String(), req.Tools)
		writeJSON(w, 200, map[string]any{"tokens": tokenIDs(n), "count": n, "max_model_len": s.cfg.ContextTokens})
		return
	}
	if err != nil || json.Unmarshal(req.Prompt, &text) != nil {
		writeJSON(w, 400, map[string]any{"object": "error", "message": "1 validation error for TokenizeRequest\nprompt\n  Field required [type=missing]",
			"type": "Bad Request", "param": nil, "code": 400})
		return
	}
	n := s.renderedCount(text)
	writeJSON(w, 200, map[string]any{"tokens": tokenIDs(n), "count": n, "max_model_len": s.cfg.ContextTokens})
}

// tabbyEncode serves TabbyAPI's POST /v1/token/encode
// (endpoints/core/router.py @03189bcb, endpoints/core/types/token.py
// @341998ee): {text: str | [messages]} → {tokens, length}. A message list
// is rendered without the generation prompt and without template_vars, so
// a bundle request counts its frozen tokens less Qwen3's generation prompt
// ("<|im_start|>assistant\n", 3 tokens).
func (s *Server) tabbyEncode(w http.ResponseWriter, r *http.Request) {
	if s.scenario().NoTemplateEndpoints {
		s.engineNotFound(w, r)
		return
	}
	var req struct {
		Text json.RawMessage `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Text) == 0 {
		writeJSON(w, 422, map[string]any{"detail": []any{map[string]any{"type": "missing", "loc": []string{"body", "text"}, "msg": "Field required"}}})
		return
	}
	var text string
	var msgs []struct {
		Content string `json:"content"`
	}
	n := 0
	switch {
	case json.Unmarshal(req.Text, &text) == nil:
		n = s.renderedCount(text)
	case json.Unmarshal(req.Text, &msgs) == nil && len(msgs) > 0:
		var all strings.Builder
		for _, m := range msgs {
			all.WriteString(m.Content)
		}
		n = s.frozenCount(msgs[0].Content, all.String(), nil) // token/encode takes no tools
		if caseMarker.MatchString(msgs[0].Content) {
			n = max(n-3, 0)
		}
	}
	writeJSON(w, 200, map[string]any{"tokens": tokenIDs(n), "length": n})
}

// ikGeneration is ik_llama.cpp's get_formated_generation for the server's
// defaults (examples/server/server-context.cpp @0192b22b): flat fields
// named as ik reads them (repeat_penalty; no repetition_penalty).
func (s *Server) ikGeneration() map[string]any {
	return map[string]any{"n_ctx": s.cfg.ContextTokens, "n_predict": -1, "model": s.cfg.ModelPath, "seed": int64(4294967295),
		"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_last_n": 64, "repeat_penalty": 1.0,
		"presence_penalty": 0.0, "frequency_penalty": 0.0, "n_keep": 0, "ignore_eos": false, "stream": false,
		"reasoning_format": "deepseek", "samplers": []string{"top_k", "tfs_z", "typical_p", "top_p", "min_p", "temperature"}}
}

// ikProps serves ik_llama.cpp's GET /props (examples/server/server.cpp
// @bb7e35c6 handle_props): no build_info; system_prompt, model_alias,
// model_name, model_path, n_ctx and the rest, plus the simulator's marker.
func (s *Server) ikProps(w http.ResponseWriter, r *http.Request) {
	if s.loading() {
		writeError(w, 503, "unavailable_error", "Loading model")
		return
	}
	p := map[string]any{
		"system_prompt": "", "model_alias": s.cfg.ModelPath, "model_path": s.cfg.ModelPath, "model_name": s.modelName(),
		"default_generation_settings": s.ikGeneration(), "total_slots": s.cfg.Slots, "chat_template": s.template(),
		"bos_token": "", "eos_token": "<|im_end|>", "modalities": map[string]any{"vision": false, "audio": false},
		"n_ctx": s.cfg.ContextTokens,
	}
	writeJSON(w, 200, s.markedProps(p))
}

// ikSlots serves ik_llama.cpp's GET /slots: per slot id, id_task, state,
// prompt, next_token and the resolved generation settings as flat fields
// (server-context.cpp @0192b22b get_formated_generation: repeat_penalty,
// max_tokens = the request's n_predict or max_tokens, n_predict = the
// server's).
func (s *Server) ikSlots(w http.ResponseWriter, r *http.Request) {
	if s.slotsRefused(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []any
	for i := 0; i < s.cfg.Slots; i++ {
		slot := s.ikGeneration()
		slot["id"], slot["id_task"], slot["state"], slot["prompt"] = i, -1, 0, ""
		slot["next_token"] = map[string]any{"has_next_token": true, "n_remain": -1, "n_decoded": 0,
			"stopped_eos": false, "stopped_word": false, "stopped_limit": false, "stopping_word": ""}
		if st, ok := s.last[i]; ok {
			slot["id_task"], slot["prompt"] = st.task, st.prompt
			for k, v := range st.params {
				slot[k] = v
			}
			slot["n_predict"] = -1
		}
		out = append(out, slot)
	}
	writeJSON(w, 200, out)
}

// sglangRejects answers an older SGLang's HTTP 400 to a reasoning_effort
// outside Literal["low","medium","high"] (http_server.py @0025436e
// validation_exception_handler turns FastAPI's 422 into this 400; body as
// in router-for-me/CLIProxyAPI#1572). It reports whether it answered.
func sglangRejects(w http.ResponseWriter, effort json.RawMessage) bool {
	var v string
	if len(effort) == 0 || json.Unmarshal(effort, &v) != nil {
		return false
	}
	switch v {
	case "low", "medium", "high":
		return false
	}
	in, _ := json.Marshal(v)
	body := struct {
		Object  string `json:"object"`
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    int    `json:"code"`
	}{"error", fmt.Sprintf("1 validation error for ChatCompletionRequest\nreasoning_effort\n  Input should be 'low', 'medium' or 'high' [type=literal_error, input_value='%s', input_type=str]",
		strings.Trim(string(in), `"`)), "Bad Request", nil, 400}
	writeJSON(w, 400, body)
	return true
}
