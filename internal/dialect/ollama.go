package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

// Ollama's own chat API, which strata speaks to every Ollama it
// identifies: its OpenAI-compatible POST /v1/chat/completions has no field
// for top_k, min_p, repetition_penalty or chat_template_kwargs and drops
// them (openai/openai.go @0098875 ChatCompletionRequest), so no run there
// can carry the profile; POST /api/chat takes every sampling setting as an
// option and the effort as think (docs/READINGS.md, "Ollama speaks its
// own API"). Unless another commit is named, file:line means @96fb6d2fa,
// the commit the Go module v0.32.11 holds (go mod download -json
// github.com/ollama/ollama@v0.32.11: Origin.Hash).

// Ollama's routes (server/routes.go @96fb6d2fa GenerateRoutes
// l.1823–1911): the chat, and the model's template and file.
const (
	ollamaChatRoute = "/api/chat"
	ollamaShowRoute = "/api/show"
)

// Wire is how a dialect's streaming chat goes over HTTP. The zero Wire is
// the OpenAI-compatible one.
type Wire struct {
	// Route is the path the body is POSTed to ("" is ChatRoute).
	Route string
	// NDJSON is the answer is one JSON object per line (Ollama's
	// application/x-ndjson: server/routes.go l.2079–2126), not
	// Server-Sent Events.
	NDJSON bool
}

// ChatRoute is the OpenAI-compatible chat route the spec names ("Use
// streaming chat completions").
const ChatRoute = "/v1/chat/completions"

// Wire is how this dialect's chat goes.
func (d Dialect) Wire() Wire {
	if d.API == APINative {
		return Wire{Route: ollamaChatRoute, NDJSON: true}
	}
	return Wire{Route: ChatRoute}
}

// onlyModel is the model a /v1/models list names when it names exactly
// one ("" otherwise). Ollama lists every local model there (openai/
// openai.go ToListCompletion, from /api/tags), and /api/chat must name
// the one to run (server/routes.go l.2434–2454: "model is required").
func onlyModel(models json.RawMessage) string {
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(models, &m) != nil || len(m.Data) != 1 {
		return ""
	}
	return m.Data[0].ID
}

// CannotRun says why the run cannot be sent in this dialect at all (""
// when it can): its requests must name a model, and the server does not
// list exactly one.
func (d Dialect) CannotRun() string {
	if d.API == APINative && d.Model == "" {
		return d.Name() + " does not list exactly one model on GET " + ModelsRoute + ", and its " + ollamaChatRoute +
			" must name the one to run (server/routes.go @96fb6d2fa l.2434–2454), so strata cannot tell which to measure: serve the model to measure alone (an OLLAMA_MODELS folder that holds only it)"
	}
	return ""
}

// ollamaThink is the think value Ollama gives a reasoning_effort: its own
// mapping (openai/openai.go @e0e1d3c7d, v0.32.12, thinkFromReasoningEffort
// l.531–546): minimal is "low", low, medium, high and max are themselves,
// xhigh and ultra are "max", none is false. /api/chat's think takes no
// "xhigh" (api/types.go ThinkValue l.1126–1222: "invalid think value").
func ollamaThink(effort string) (string, error) {
	switch effort {
	case "minimal":
		return `"low"`, nil
	case "low", "medium", "high", "max":
		return strconv.Quote(effort), nil
	case "xhigh", "ultra":
		return `"max"`, nil
	case "none":
		return "false", nil
	}
	return "", fmt.Errorf("reasoning_effort %q has no think value in Ollama's mapping", effort)
}

// ollamaBody is a fixture's /api/chat body: the model, the messages, the
// stream, think for the effort, every sampling setting, the seed and the
// cap as options, and the tools of a tool case. Keys and numbers are
// written in a fixed form, as Body's, so the validator can rebuild it.
//
// api.ChatRequest (api/types.go l.133–180) reads model, messages, stream,
// think and options (a map, l.151) among others; the options are
// api.Options and api.Runner (l.568–597): temperature, top_p, top_k,
// min_p, presence_penalty, repeat_penalty, seed and num_predict, each
// going to the llama-server helper's body (llm/llama_server.go
// l.2131–2181). It has no tool_choice: tools offered are the model's to
// call or not, the spec's "auto". think "max" reaches the template as
// enable_thinking true and reasoning_effort "max" (llm/llama_server.go
// l.2183–2197); preserve_thinking cannot be sent.
func (d Dialect) ollamaBody(f *fixtures.Fixture) ([]byte, error) {
	msgs, err := json.Marshal(f.Messages)
	if err != nil {
		return nil, err
	}
	model, err := jsonString(d.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: model: %w", f.RequestID, err)
	}
	s := protocol.ProfileSampling()
	think, err := ollamaThink(s.ReasoningEffort)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.RequestID, err)
	}
	var b bytes.Buffer
	b.Grow(len(msgs) + len(f.Tools) + 512)
	fmt.Fprintf(&b, `{"model": %s, "messages": `, model)
	b.Write(msgs)
	fmt.Fprintf(&b, `, "stream": true, "think": %s, "options": {"temperature": %s, "top_p": %s, "top_k": %d, "min_p": %s, "presence_penalty": %s, "repeat_penalty": %s, "seed": %d, "num_predict": %d}`,
		think, floatLit(s.Temperature), floatLit(s.TopP), s.TopK, floatLit(s.MinP), floatLit(s.PresencePenalty), floatLit(s.RepetitionPenalty), f.Seed, f.MaxTokens)
	if f.OffersTools() {
		var compact bytes.Buffer
		if err := json.Compact(&compact, bytes.TrimSpace(f.Tools)); err != nil {
			return nil, fmt.Errorf("%s: tools: %w", f.RequestID, err)
		}
		b.WriteString(`, "tools": `)
		b.Write(compact.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ollamaNativeFacts is the row of Ollama spoken in its own API.
func ollamaNativeFacts() engineFacts {
	return engineFacts{
		// Where each setting goes in the body (ollamaBody).
		alias: map[string]string{"temperature": "options.temperature", "top_p": "options.top_p", "top_k": "options.top_k",
			"min_p": "options.min_p", "presence_penalty": "options.presence_penalty", "repetition_penalty": "options.repeat_penalty",
			"reasoning_effort": "think", "chat_template_kwargs.enable_thinking": "think"},
		// api.ToolFunctionParameters (api/types.go l.473–479, the same at
		// fb30760 and in the Go module v0.33.0) has type, $defs, items,
		// required and properties only: a tool's additionalProperties is
		// dropped when the request is read, and the parameters reach the
		// template re-serialized in that order. The preflight's rendering
		// shows whether a build still does (ToolsReshaped).
		reshapesTools: "Ollama's api.ToolFunctionParameters has no additionalProperties field (api/types.go @96fb6d2fa l.473–479; the same at fb30760), so the tool cases' additionalProperties: false is dropped when the request is read, and their parameters are re-serialized as type, required, properties before the prompt is made",
		noKwargs:      "Ollama's /api/chat has no chat_template_kwargs field: Ollama derives the template's enable_thinking (true) and reasoning_effort (\"max\") from think \"max\" (llm/llama_server.go @96fb6d2fa l.2183–2197), and preserve_thinking cannot be sent",
		timers:        TimersOllama, ownVersion: true,
		// Ollama serves no /slots, and nothing else shows a request's
		// resolved options (server/routes.go GenerateRoutes l.1823–1911).
		hiddenSlots: "Ollama serves no /slots and no route shows a request's resolved options (server/routes.go @96fb6d2fa GenerateRoutes), so they are sent, not verified",
		// handleNativeChat (server/routes.go @96fb6d2fa l.2919–2960) hands
		// a request with _debug_render_only the llama-server helper's
		// /apply-template rendering of the very request it would run
		// (llm/llama_server.go l.1833ff), in _debug_info.rendered_template
		// (api/types.go l.542–553), and runs nothing.
		preflight: Preflight{ApplyTemplate: ollamaChatRoute, RenderBody: ollamaRenderOnly, RenderedAt: []string{"_debug_info", "rendered_template"},
			Source: "POST " + ollamaChatRoute + " with _debug_render_only: Ollama's rendering of the exact chat body (server/routes.go @96fb6d2fa handleNativeChat); Ollama serves no route that counts it (GenerateRoutes l.1823–1911), so the run's prompt_eval_count is the engine's count"},
	}
}

// ShowRequest is the POST that tells the model's template and file, with
// its body ("" when the dialect has none: llama-server's /props says
// them).
func (d Dialect) ShowRequest() (route string, body []byte) {
	if d.API != APINative || d.Model == "" {
		return "", nil
	}
	b, err := json.Marshal(map[string]string{"model": d.Model})
	if err != nil {
		return "", nil
	}
	return ollamaShowRoute, b
}

// TemplateRoute names where strata reads the engine's chat template:
// ShowRequest's route where the dialect has one, else /props.
func (d Dialect) TemplateRoute() string {
	if route, _ := d.ShowRequest(); route != "" {
		return "POST " + route + " template"
	}
	return PropsRoute + " chat_template"
}

// ModelPathSource says where strata reads the model file the engine
// runs: the FROM line of ShowRequest's modelfile where the dialect has
// one (ReadShow), else /props model_path.
func (d Dialect) ModelPathSource() string {
	if route, _ := d.ShowRequest(); route != "" {
		return "the FROM line of the server's POST " + route + " modelfile"
	}
	return "the server's model_path (" + PropsRoute + ")"
}

// Shown is what strata reads of the model's answer to ShowRequest.
type Shown struct {
	// Template is the chat template the engine renders with ("" when it
	// does not say: see NoTemplate).
	Template string
	// NoTemplate says why the template is unknown.
	NoTemplate string
	// ModelPath is the model file the engine runs ("" when not named),
	// and ModelPathNote how it was found.
	ModelPath, ModelPathNote string
}

// ReadShow reads Ollama's POST /api/show answer (api.ShowResponse,
// api/types.go l.737–755). template is the GGUF's own Jinja template when
// the chat runs natively through the llama-server helper, else the Go
// template (server/routes.go selectedModelTemplate l.1605–1612); a model
// with a built-in renderer is rendered by Ollama's Go code
// (usesOllamaRenderedChat l.2349–2351), which no route shows. modelfile's
// FROM line names the model's blob ($OLLAMA_MODELS/blobs/sha256-<hex>).
func ReadShow(raw json.RawMessage) Shown {
	var v struct {
		Template  *string `json:"template"`
		Modelfile string  `json:"modelfile"`
		Renderer  string  `json:"renderer"`
	}
	var s Shown
	if json.Unmarshal(raw, &v) != nil {
		s.NoTemplate = "POST " + ollamaShowRoute + " did not answer a model"
		return s
	}
	switch {
	case v.Renderer != "":
		s.NoTemplate = fmt.Sprintf("Ollama renders this model's prompts with its built-in renderer %q (server/routes.go @96fb6d2fa usesOllamaRenderedChat), which no route shows", v.Renderer)
	case v.Template == nil || *v.Template == "":
		s.NoTemplate = "POST " + ollamaShowRoute + " answered no template"
	default:
		s.Template = *v.Template
	}
	for _, line := range strings.Split(v.Modelfile, "\n") {
		if p, ok := strings.CutPrefix(line, "FROM "); ok && filepath.IsAbs(strings.TrimSpace(p)) {
			s.ModelPath = strings.TrimSpace(p)
			// server/create.go @96fb6d2fa l.765–770, l.942–950 (since
			// 9db4bdbad, #16031): ollama create rewrites an imported GGUF
			// with llama-quantize COPY, so the blob is not byte for byte
			// the file it was made from.
			s.ModelPathNote = "the model's blob, named by the FROM line of Ollama's POST " + ollamaShowRoute + " modelfile: it is the file the engine runs, which ollama create rewrites from the imported GGUF (server/create.go @96fb6d2fa), so its SHA-256 is the blob's, not the imported file's"
			break
		}
	}
	return s
}

// Ollama's think takes "max" from v0.22.0 (c2ebb4d57, #15787, "api:
// accept \"max\" as a think value"); before it any other string is HTTP
// 400 "invalid think value" (api/types.go @v0.21.2 l.1173).
var ollamaNativeGate = gate{from: [3]int{0, 22, 0}, why: `c2ebb4d57, #15787: /api/chat's think takes "max"`}

// Ollama's OpenAI-compatible endpoint takes reasoning_effort "xhigh"
// (as think "max") from 01d04d50f (#17594, thinkFromReasoningEffort,
// openai/openai.go @e0e1d3c7d l.531–546). Its first release whose every
// build holds it is v0.32.12 (e0e1d3c7d): the Go module v0.32.11 is
// 96fb6d2fa, v0.32.9 plus one commit, which answers "invalid reasoning
// value" (openai/openai.go @96fb6d2fa l.683–684), while the GitHub tag
// v0.32.11 was moved to 39df91c98, which holds it.
var ollamaOpenAIGate = gate{from: [3]int{0, 32, 12}, why: `e0e1d3c7d, the first release whose every build has 01d04d50f, #17594: xhigh becomes think "max"`}

// gate is the first release of an engine that takes a setting.
type gate struct {
	from [3]int
	why  string
}

func (g gate) version() string {
	return fmt.Sprintf("%d.%d.%d", g.from[0], g.from[1], g.from[2])
}

// taking is the clause of a refusal that names the first version taking
// the setting. It never names one the engine's own version has reached:
// a build that names that release or a later one and refuses all the same
// is said to be such a build.
func (g gate) taking(version string) string {
	if rel, ok := parseRelease(version); ok && !releaseBefore(rel, g.from) {
		return fmt.Sprintf("releases from %s take it (%s), yet this build names version %s and refuses it: it is not built from that release's code", g.version(), g.why, version)
	}
	return fmt.Sprintf("the first version that takes it is %s (%s)", g.version(), g.why)
}

// ollamaRefusesNative is the refusal of an Ollama before v0.22.0, whose
// /api/chat does not take think "max" (nil from it on).
func (d Dialect) ollamaRefusesNative(rel [3]int, setting string) *Refusal {
	if !releaseBefore(rel, ollamaNativeGate.from) {
		return nil
	}
	return &Refusal{Engine: d.Name(), Setting: setting,
		Why:    `its /api/chat think takes no "max" before v0.22.0: it answers HTTP 400 "invalid think value" (api/types.go @v0.21.2 l.1173), so every request would fail`,
		Taking: ollamaNativeGate.taking(d.Version), By: "its version, " + d.Version + ", from GET " + ollamaVersionRoute}
}

// ollamaLimitations are the standing caveats of a run on Ollama's own API.
func (d Dialect) ollamaLimitations() []string {
	taken := []string{"Sent, but not as sent: " + d.ToolsReshaped() + "; the preflight's rendering of T1–T4 shows what the template was given."}
	for _, n := range d.NotTaken() {
		taken = append(taken, "Sent, but not taken: "+n+".")
	}
	return append([]string{
		fmt.Sprintf("The engine is %s (%s). strata speaks Ollama's own POST %s: its OpenAI-compatible /v1/chat/completions drops top_k, min_p, repetition_penalty and chat_template_kwargs (openai/openai.go @0098875), while /api/chat takes every sampling setting, the seed and the cap as options (api/types.go @96fb6d2fa l.568–597) and the effort as think \"max\", Ollama's own word for xhigh (openai/openai.go @e0e1d3c7d thinkFromReasoningEffort).",
			d.Name(), d.IdentifiedBy, ollamaChatRoute),
		"think \"max\" reaches the chat template as enable_thinking true and reasoning_effort \"max\" (llm/llama_server.go @96fb6d2fa l.2183–2197); preserve_thinking cannot be sent on /api/chat, which changes nothing for a single-turn conversation. " + d.ReasoningBudget().Meaning + ".",
		"Ollama's done line counts the prompt's cached tokens in prompt_eval_count while prompt_eval_duration times only those it evaluated, and no field of its API splits them (llm/llama_server.go @96fb6d2fa l.1509–1511, l.2016–2019): where the run keeps Ollama's log (--engine-log), read_tokens is the prompt eval line of its llama-server helper paired with the request, cached_tokens the rest, and the prompt rate read_tokens over prompt_eval_duration; without it the three are null. The decode rate is eval_count (thinking included) over eval_duration.",
		"How many requests Ollama serves at once (OLLAMA_NUM_PARALLEL, envconfig/config.go @96fb6d2fa l.275) is on no route of its API; only its log shows it. Ollama shows no request's resolved options either (no /slots), so the settings were sent, not verified.",
	}, taken...)
}

// ollamaTimerFields is where Ollama's done line keeps a request's counts
// and durations (api.Metrics, api/types.go l.557–564; Go's time.Duration,
// so nanoseconds). Through the llama-server helper (llm/llama_server.go
// l.2016–2019): prompt_eval_count is the helper's cache_n + prompt_n, the
// whole prompt, cached tokens included (l.1509–1511, since 35fa277fa,
// #16428, v0.30.1); prompt_eval_duration its prompt_ms, the evaluated
// tokens' time only; eval_count and eval_duration its predicted_n and
// predicted_ms, every generated token, thinking included. cache_n itself
// is dropped: no field splits the prompt.
func ollamaTimerFields() TimerFields {
	const line = "Ollama's done line, kept as outputs.jsonl timings"
	return TimerFields{
		Counts: &Counts{Input: "prompt_eval_count", Output: "eval_count",
			InputSource:  "timings.prompt_eval_count (" + line + ": the prompt's tokens, those read from the cache included)",
			OutputSource: "timings.eval_count (" + line + ": every generated token, thinking included)",
			NoSplit:      "Ollama reports no split of the prompt into cached and evaluated tokens: its prompt_eval_count is the llama-server helper's cache_n + prompt_n, and cache_n reaches no field of its API (llm/llama_server.go @96fb6d2fa l.1509–1511, l.2016); a run that keeps Ollama's log (--engine-log) has it from the helper's prompt eval line of the request, where one pairs with it"},
		Durations: &Durations{Object: timingsObject, Prompt: "prompt_eval_duration", Decode: "eval_duration", Scale: 1e-9,
			Source:       "timings.prompt_eval_duration / 1e9 (the evaluated prompt tokens' time) and timings.eval_duration / 1e9 (" + line + ", nanoseconds)",
			DecodeCount:  "eval_count",
			DecodeSource: "timings.eval_count (" + line + ": the tokens eval_duration timed, thinking included)",
			Absent:       "timings.prompt_eval_duration or timings.eval_duration (" + line + ")"},
	}
}

// Unrevealed says why the engine's own API does not give the context and
// the number of requests it serves at once ("" each where /props and
// /v1/status are the sources). Ollama serves neither route; its context is
// OLLAMA_CONTEXT_LENGTH or a request's num_ctx, which GET /api/ps shows
// only for a model loaded at the time (server/routes.go @96fb6d2fa
// l.2248–2280), and its parallel requests OLLAMA_NUM_PARALLEL
// (envconfig/config.go l.275), which no route shows.
func (d Dialect) Unrevealed() (context, capacity string) {
	if d.API != APINative {
		return "", ""
	}
	return "Ollama shows its context (OLLAMA_CONTEXT_LENGTH, or a request's num_ctx) only on GET /api/ps, and only while a model is loaded (server/routes.go @96fb6d2fa l.2248–2280), which is not a source strata reads",
		"Ollama's API does not say how many requests it serves at once: OLLAMA_NUM_PARALLEL sets it (envconfig/config.go @96fb6d2fa l.275), and only the server's log shows it"
}

// Admits reports whether a result's recorded dialect is what this one,
// identified from the same evidence, was when the result was written:
// itself, or, for a folder written before strata spoke Ollama's own API,
// the same engine on its OpenAI-compatible endpoint (its bodies and
// accounting are that dialect's, and are held to it).
func (d Dialect) Admits(rec Dialect) bool {
	if d == rec {
		return true
	}
	before := d
	before.API, before.Model = APIOpenAI, ""
	return d.API == APINative && rec == before
}

// ollamaRenderOnly is the chat body asking Ollama for its rendering
// instead of an answer: the same body, _debug_render_only added.
func ollamaRenderOnly(chat []byte) ([]byte, error) {
	b := bytes.TrimRight(chat, " \t\r\n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("the chat body is not a JSON object")
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:len(b)-1]...)
	return append(out, `, "_debug_render_only": true}`...), nil
}
