package simengine

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-bench/strata/internal/corpus"
)

// Ollama's own API as the simulator plays it: POST /api/chat streamed as
// NDJSON and POST /api/show, in the shapes of ollama @96fb6d2fa (the Go
// module v0.32.11): api.ChatRequest and api.ChatResponse (api/types.go
// l.133–180, l.520–564), server/routes.go ChatHandler (l.2417–2911) and
// streamResponse (l.2079–2126), llm/llama_server.go's done line
// (l.2008–2024).

// ollamaChatRequest is the part of an /api/chat body the simulator reads.
type ollamaChatRequest struct {
	Model    string          `json:"model"`
	Messages json.RawMessage `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
	Think    json.RawMessage `json:"think"`
	// DebugRenderOnly asks for the rendering instead of an answer
	// (api/types.go l.169–171, server/routes.go handleNativeChat).
	DebugRenderOnly bool `json:"_debug_render_only"`
	Options         struct {
		Temperature     *float64 `json:"temperature"`
		TopP            *float64 `json:"top_p"`
		TopK            *int     `json:"top_k"`
		MinP            *float64 `json:"min_p"`
		PresencePenalty *float64 `json:"presence_penalty"`
		RepeatPenalty   *float64 `json:"repeat_penalty"`
		Seed            *int64   `json:"seed"`
		NumPredict      *int     `json:"num_predict"`
	} `json:"options"`
}

// ollamaChat serves POST /api/chat: the model must be the one it serves
// (l.2434–2466: 400 "model is required", 404 "model '…' not found"), think
// a bool or a level it knows (api/types.go ThinkValue: 400 "invalid think
// value"), and the answer is the simulator's generation in NDJSON.
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	s.arrive(1)
	defer s.arrive(-1)
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var o ollamaChatRequest
	if err == nil {
		err = json.Unmarshal(body, &o)
	}
	switch {
	case err != nil:
		writeJSON(w, 400, map[string]any{"error": err.Error()})
		return
	case o.Model == "":
		writeJSON(w, 400, map[string]any{"error": "model is required"})
		return
	case o.Model != s.cfg.ModelPath:
		writeJSON(w, 404, map[string]any{"error": fmt.Sprintf("model '%s' not found", o.Model)})
		return
	}
	if why := s.ollamaThinkRefused(o.Think); why != "" {
		writeJSON(w, 400, map[string]any{"error": why})
		return
	}
	if o.DebugRenderOnly {
		s.ollamaRender(w, o)
		return
	}
	req := &chatRequest{Tools: o.Tools, MaxTokens: o.Options.NumPredict, Seed: o.Options.Seed, Temperature: o.Options.Temperature,
		TopP: o.Options.TopP, TopK: o.Options.TopK, MinP: o.Options.MinP, PresencePenalty: o.Options.PresencePenalty,
		RepeatPenalty: o.Options.RepeatPenalty, native: true}
	if err := json.Unmarshal(o.Messages, &req.Messages); err != nil || len(req.Messages) == 0 {
		writeJSON(w, 400, map[string]any{"error": "messages are required"})
		return
	}
	if string(o.Think) == "false" {
		req.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	}
	s.answer(w, r, req)
}

// ollamaRender answers a request with _debug_render_only as Ollama does:
// the served template's rendering of the request, with the tools as
// Ollama reads them (ollamaTools) and the template's flags from think
// (llm/llama_server.go l.2183–2197), in _debug_info.rendered_template.
func (s *Server) ollamaRender(w http.ResponseWriter, o ollamaChatRequest) {
	t, err := s.servedTemplate()
	if err != nil {
		writeJSON(w, 500, map[string]any{"error": err.Error()})
		return
	}
	in := corpus.PromptInput(o.Messages, nil)
	if in.Tools, err = ollamaTools(o.Tools); err != nil {
		writeJSON(w, 400, map[string]any{"error": err.Error()})
		return
	}
	thinking := string(o.Think) != "false" && len(o.Think) > 0
	in.Kwargs = map[string]json.RawMessage{"enable_thinking": json.RawMessage(strconv.FormatBool(thinking))}
	if len(o.Think) > 0 && o.Think[0] == '"' {
		in.Kwargs["reasoning_effort"] = o.Think
	}
	out, err := t.Render(in)
	if err != nil {
		writeJSON(w, 500, map[string]any{"error": err.Error()})
		return
	}
	writeJSON(w, 200, map[string]any{"model": o.Model, "created_at": s.cfg.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]string{"role": "", "content": ""}, "done": false, "_debug_info": map[string]any{"rendered_template": out, "image_count": 0}})
}

// ollamaTools is a request's tools as Ollama reads them: api.Tool, whose
// ToolFunctionParameters (api/types.go l.473–479) keeps type, required and
// properties, in that order, and drops additionalProperties.
func ollamaTools(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	type params struct {
		Type       string          `json:"type"`
		Required   json.RawMessage `json:"required,omitempty"`
		Properties json.RawMessage `json:"properties"`
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description,omitempty"`
			Parameters  params `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, err
	}
	return json.Marshal(tools)
}

// ollamaThinkRefused is the error an Ollama gives a think value it does
// not take ("" when it takes it): from v0.22.0 (c2ebb4d57, #15787) a bool
// or "high", "medium", "low", "max"; before it no "max" (api/types.go
// @v0.21.2 l.1173–1179).
func (s *Server) ollamaThinkRefused(think json.RawMessage) string {
	if len(think) == 0 || string(think) == "true" || string(think) == "false" {
		return ""
	}
	levels := `"high", "medium", "low", "max", true, or false`
	known := map[string]bool{"high": true, "medium": true, "low": true, "max": true}
	if atLeast, ok := s.ollamaAtLeast(22, 0); ok && !atLeast {
		levels, known["max"] = `"high", "medium", "low", true, or false`, false
	}
	var v string
	if json.Unmarshal(think, &v) != nil {
		return "think must be a boolean or string (" + levels + ")"
	}
	if known[v] {
		return ""
	}
	return fmt.Sprintf("invalid think value: %q (must be %s)", v, levels)
}

// ollamaShow serves POST /api/show (api.ShowResponse, api/types.go
// l.737–755; server/routes.go GetModelInfo): the modelfile whose FROM line
// names the model's file, and the chat template it renders with.
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Model string `json:"model"`
	}
	if json.NewDecoder(r.Body).Decode(&q) != nil || q.Model != s.cfg.ModelPath {
		writeJSON(w, 404, map[string]any{"error": fmt.Sprintf("model '%s' not found", q.Model)})
		return
	}
	writeJSON(w, 200, map[string]any{
		"modelfile":  "# Modelfile generated by \"ollama show\"\n\nFROM " + s.cfg.ModelPath + "\nTEMPLATE {{ .Prompt }}\n",
		"template":   s.template(),
		"details":    map[string]any{"parent_model": "", "format": "gguf", "family": "qwen3", "families": []string{"qwen3"}},
		"model_info": map[string]any{"general.architecture": "qwen3"}, "capabilities": []string{"tools", "thinking", "completion"},
	})
}

// ollamaLine writes one api.ChatResponse line: the model, the time, the
// message (content always, thinking and tool_calls when set) and done.
func (e *engineWire) ollamaLine(msg map[string]any, done map[string]any) {
	m := map[string]any{"model": e.cw.model, "created_at": e.s.cfg.Now().UTC().Format(time.RFC3339Nano), "message": msg, "done": done != nil}
	for k, v := range done {
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	e.cw.raw(string(data) + "\n")
}

// ollamaToken writes a token's line: thinking (the helper's
// reasoning_content, llm/llama_server.go l.1990) or content. Tool-call
// fragments are gathered by token, as for the OpenAI-compatible wire.
func (e *engineWire) ollamaToken(d map[string]any) {
	msg := map[string]any{"role": "assistant", "content": ""}
	for _, k := range []string{"reasoning", "reasoning_content"} {
		if v, ok := d[k]; ok {
			msg["thinking"] = v
		}
	}
	if c, ok := d["content"]; ok {
		msg["content"] = c
	}
	e.ollamaLine(msg, nil)
}

// ollamaDone writes the done line: done_reason "length" at the cap, else
// "stop" (a tool call's too: llm/llama_server.go l.2008–2015), the
// gathered call whole, and the counts and nanosecond durations (l.2016–
// 2019: prompt_eval_count counts the cached tokens, prompt_eval_duration
// times only the evaluated ones).
func (e *engineWire) ollamaDone(finish string, emitted int, decodeDur time.Duration) {
	msg := map[string]any{"role": "assistant", "content": ""}
	if e.tool != nil {
		var args any
		if json.Unmarshal([]byte(e.toolArgs), &args) != nil {
			args = map[string]any{}
		}
		msg["tool_calls"] = []any{map[string]any{"id": e.tool["id"], "function": map[string]any{"index": 0, "name": e.tool["name"], "arguments": args}}}
		e.tool = nil
	}
	reason := "stop"
	if finish == "length" {
		reason = "length"
	}
	done := map[string]any{"done_reason": reason, "total_duration": (e.queued + e.promptDur + decodeDur).Nanoseconds(), "load_duration": 0}
	if !e.b.OmitTimings {
		done["prompt_eval_count"], done["prompt_eval_duration"] = e.promptTokens, e.promptDur.Nanoseconds()
		done["eval_count"], done["eval_duration"] = emitted, decodeDur.Nanoseconds()
	}
	e.ollamaLine(msg, done)
}
