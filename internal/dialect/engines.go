package dialect

import (
	"encoding/json"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
)

// The engines beyond llama.cpp and Strata's server, and the table of what
// strata believes about every engine. Each fact is read in the engine's own
// source, cited beside it (the notes behind them are summarised in
// docs/READINGS.md, "Every engine in its own words"). What strata sends
// each engine, what it cannot send, where each count and timer of a result
// comes from, which field its stream carries reasoning in, how its own
// rendering and count are checked before the run, where its option
// objects are read and where it names its version are in this package and
// nowhere else: the other packages ask a Dialect, and none of them names an
// engine (internal/layout holds them to that). A correction to an engine
// is a change to its row in factsOf.

const (
	// VLLM is vLLM's OpenAI-compatible server: GET /version answers
	// {"version": "<string>"} and /v1/models says owned_by "vllm"
	// (vllm/entrypoints/serve/instrumentator/basic.py @dcbf200,
	// vllm/entrypoints/serve/engine/protocol.py @f1bf7bd ModelCard).
	VLLM Engine = "vllm"
	// SGLang answers GET /get_server_info with its server arguments and
	// version, and /v1/models says owned_by "sglang"
	// (python/sglang/srt/entrypoints/http_server.py @0025436).
	SGLang Engine = "sglang"
	// Ollama answers GET /api/version with {"version"} (server/routes.go)
	// and marks every OpenAI-compatible chunk "system_fingerprint":
	// "fp_ollama" (openai/openai.go @0098875).
	Ollama Engine = "ollama"
	// IKLlamaCpp is ik_llama.cpp's server: GET /version answers an integer
	// version with a features object, and /props has no build_info
	// (examples/server/server.cpp @bb7e35c).
	IKLlamaCpp Engine = "ik_llama.cpp"
	// LMStudio answers its native REST API's GET /api/v0/models (LM
	// Studio's documentation; the engine's source is not public).
	LMStudio Engine = "lmstudio"
	// TabbyAPI is TabbyAPI: its /v1/models says owned_by "tabbyAPI"
	// (endpoints/core/types/model.py @03189bc).
	TabbyAPI Engine = "tabbyapi"
)

// notTaken is one protocol setting an engine's chat endpoint does not
// take, and the source that says so.
type notTaken struct {
	Setting, Why string
}

// engineFacts is one row of the table: what strata believes about one
// engine, each fact with the source it was read in.
type engineFacts struct {
	// alias names the engine's own field for a setting where it differs
	// from the spec's; both are sent, with the same value, when keepSpec.
	alias    map[string]string
	keepSpec bool
	// dropped are settings not sent at all: the engine cannot take them.
	dropped []notTaken
	// reshapesTools says how the engine is known, from its source, to
	// change the tool cases before its template reads them ("": not known
	// to).
	reshapesTools string
	// timers names where its counts and durations are (Timers.Fields says
	// which fields), and noTimers why it has no per-request timer
	// (TimersNone).
	timers   Timers
	noTimers string
	// reasoning is the delta field its stream carries reasoning text in
	// ("" where its source was not read for it; IsReasoningField accepts
	// every engine's name from any server).
	reasoning string
	// preflight is how its own rendering and count of a chat body are had
	// before the run.
	preflight Preflight
	// config is where its engine-option objects are read.
	config ConfigFrom
	// ownVersion is the engine names its version, if at all, on a route of
	// its own (Identify reads it into Version), not on the spec's /props
	// build_info or /v1/status.
	ownVersion bool
	// hiddenSlots says why its /slots shows no request's resolved settings
	// ("" where it may).
	hiddenSlots string
	// effortInKwargs is reasoning_effort is also sent inside
	// chat_template_kwargs, where the engine hands it to the template
	// (the top-level field alone does not reach it on every build).
	effortInKwargs bool
	// requestLog reads its log's per-request timer lines (nil: strata
	// knows none).
	requestLog func(log []byte) []LogRequest
	// noKwargs says why its bodies carry no chat_template_kwargs where
	// its API reaches the template another way ("" otherwise).
	noKwargs string
}

// The delta fields engines stream reasoning text in.
const (
	reasoningContent = "reasoning_content"
	reasoningText    = "reasoning"
)

// factsOf is the table: one row per engine.
func factsOf(e Engine) engineFacts {
	switch e {
	case LlamaCpp:
		// llama-server reads repeat_penalty (tools/server/server-task.cpp
		// params_from_json_cmpl); the spec's name is sent beside it. Its
		// options are its command line's, and /props build_info is its
		// version.
		// The top-level reasoning_effort is not read up to b10116, only
		// "none" acts from b10117 (27209a598, #26045), and the value
		// reaches the template only from b10434 (7e4c0a968); every
		// chat_template_kwargs key reaches the template on every build
		// read (tools/server/server-common.cpp oaicompat_chat_params_parse,
		// common/chat.cpp @99f3dc32 and @34af94cd9), so the effort goes there
		// too.
		return engineFacts{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, keepSpec: true, timers: TimersLlamaCpp,
			reasoning: reasoningContent, preflight: llamaPreflight(), config: ConfigLlamaArgs, effortInKwargs: true,
			requestLog: llamaLogRequests}
	case IKLlamaCpp:
		// Its server keeps llama-server's /apply-template and /tokenize
		// (examples/server/server.cpp @8337e4c l.1424–1459). The top-level
		// reasoning_effort is read nowhere, but every chat_template_kwargs
		// key reaches the template (examples/server/server-common.cpp
		// @8337e4c l.811–815; common/chat.cpp l.2736, l.796–800), so the
		// effort goes there.
		return engineFacts{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, keepSpec: true, timers: TimersIKLlamaCpp,
			reasoning: reasoningContent, preflight: llamaPreflight(), ownVersion: true, effortInKwargs: true}
	case VLLM:
		// Every setting under the spec's name (ChatCompletionRequest in
		// vllm/entrypoints/openai/chat_completion/protocol.py @002032e).
		// Reasoning streams as "reasoning"
		// (vllm/entrypoints/generate/base/protocol.py DeltaMessage).
		return engineFacts{timers: TimersVLLM, reasoning: reasoningText, ownVersion: true, preflight: vllmPreflight()}
	case SGLang:
		// TokenizeRequest takes messages, tools, reasoning_effort and
		// chat_template_kwargs, and extra keys, which it hands on to a
		// ChatCompletionRequest (python/sglang/srt/entrypoints/openai/
		// protocol.py @004c82e TokenizeRequest.to_chat_completion_request),
		// so the chat body itself is counted; it answers {tokens, count,
		// max_model_len}. An older build takes only a prompt
		// (serving_tokenize.py @0351c1f) and refuses the body.
		return engineFacts{timers: TimersNone,
			noTimers:  "SGLang's streaming chat reports no per-request prefill or decode time (python/sglang/srt/entrypoints/openai/serving_chat.py @002897c); its Prometheus histograms mix requests and include queueing",
			reasoning: reasoningContent, ownVersion: true,
			preflight: Preflight{CountOnly: true, Tokenize: "/v1/tokenize",
				Refused: "this SGLang's /v1/tokenize refuses chat messages (builds before TokenizeRequest took messages count a prompt only: serving_tokenize.py @0351c1f), so the engine's count of the fixtures cannot be checked",
				Source:  "POST /v1/tokenize with each request's exact body (SGLang renders the messages, tools, reasoning_effort and chat_template_kwargs as its chat path does and counts them; it returns no rendering, so only the count is compared)"}}
	case Ollama:
		// The OpenAI-compatible request struct has no field for these, so
		// Go's decoder drops them (openai/openai.go @0098875
		// ChatCompletionRequest). Reasoning streams as "reasoning"
		// (openai/openai.go ToChunk). From 0.32 a model runs in a
		// llama-server helper whose output is Ollama's server log, its
		// print_timing lines too, whichever API the request came by
		// (seen with 0.32.11 and its b10353 helper).
		return engineFacts{timers: TimersNone, requestLog: llamaLogRequests,
			noTimers: "Ollama's OpenAI-compatible endpoint reports counts only, no timer (openai/openai.go @0098875 ToUsage); its native /api/chat counts cached tokens in prompt_eval_count but times only the evaluated ones",
			dropped: []notTaken{
				{"top_k", "Ollama's OpenAI-compatible endpoint has no top_k field and drops it (openai/openai.go @0098875)"},
				{"min_p", "Ollama's OpenAI-compatible endpoint has no min_p field and drops it (openai/openai.go @0098875)"},
				{"repetition_penalty", "Ollama's OpenAI-compatible endpoint has no repetition_penalty (or repeat_penalty) field and drops it (openai/openai.go @0098875)"},
				{"chat_template_kwargs", "Ollama's OpenAI-compatible endpoint has no chat_template_kwargs field, so enable_thinking and preserve_thinking do not reach the template (openai/openai.go @0098875)"},
			},
			reasoning: reasoningText, ownVersion: true,
			preflight: unverifiable("Ollama has no tokenize endpoint (only _debug_render_only, which returns a rendering without a count), so the engine's count of the fixtures cannot be checked before the run")}
	case LMStudio:
		return engineFacts{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, timers: TimersNone,
			noTimers: "LM Studio's OpenAI-compatible endpoint documents no per-request timer (its native /api/v1/chat stats have a decode rate but no prompt time)",
			dropped: []notTaken{
				{"min_p", "LM Studio's OpenAI-compatible chat endpoint documents no min_p (docs 1_developer/3_openai-compat/chat-completions.md @51c92c6)"},
				{"chat_template_kwargs", "LM Studio's OpenAI-compatible chat endpoint documents no chat_template_kwargs (docs @51c92c6)"},
				{"reasoning_effort", "LM Studio's OpenAI-compatible chat endpoint documents no reasoning_effort (docs @51c92c6)"},
			},
			ownVersion: true,
			preflight:  unverifiable("LM Studio documents no tokenize endpoint, so the engine's rendering and count of the fixtures cannot be checked before the run")}
	case TabbyAPI:
		// GET /props answers llama-server's chat_template, total_slots and
		// default_generation_settings.n_ctx (endpoints/core/router.py
		// @e632af4 l.137–156, since 7878d35), the very template chat
		// requests are rendered with (common/templating.py), so ReadProps
		// reads it as llama-server's and the template is verified.
		return engineFacts{timers: TimersTabbyAPI,
			dropped: []notTaken{
				{"seed", "TabbyAPI's sampler request has no seed field (common/sampling.py @e632af4 BaseSamplerRequest), so each request's seed cannot be set"},
			},
			reasoning: reasoningContent, ownVersion: true,
			preflight: unverifiable("TabbyAPI's /v1/token/encode renders messages without the generation prompt, reasoning_effort or tools (endpoints/core/router.py @e632af4 l.396–428; template_vars only since 79126f9), so its count is not the chat request's and cannot be checked")}
	case StrataServer:
		// The spec's own words are Strata's (Service.reasoning_budget: 0 or
		// less is no budget, and turns a configured one off). Its final
		// chunk carries llama-server's timings with cache_n, prompt_n =
		// prompt_tokens - cache_n (request_timings); reasoning streams as
		// reasoning_content (openai_chunks). Its options are its config
		// file's args (main, engine_args). Its version is on the spec's
		// sources, /props build_info and /v1/status engine.
		return engineFacts{timers: TimersLlamaCpp, reasoning: reasoningContent, preflight: strataPreflight(), config: ConfigStrataFile,
			hiddenSlots: "Strata's /slots lists id, n_ctx, is_processing and n_prompt_tokens only (serve/server.py @452325a9 Handler._slots), so no request's resolved sampling settings can be read: they are sent, not verified"}
	}
	// An unknown engine: the spec's own words, and llama-server's routes.
	return engineFacts{timers: TimersLlamaCpp, preflight: llamaPreflight()}
}

// facts is this dialect's row: its engine's, or, where strata speaks the
// engine's own chat API, that API's (ollamaNativeFacts).
func (d Dialect) facts() engineFacts {
	if d.API == APINative && d.Engine == Ollama {
		return ollamaNativeFacts()
	}
	return factsOf(d.Engine)
}

// NoKwargs says why this dialect's request bodies carry no
// chat_template_kwargs where its API reaches the template's flags another
// way ("" otherwise: NotTaken says why an engine cannot take the field).
func (d Dialect) NoKwargs() string { return d.facts().noKwargs }

// HiddenSettings says why the engine's /slots cannot show a request's
// resolved settings ("" when it may): the check is then not attempted.
func (d Dialect) HiddenSettings() string { return d.facts().hiddenSlots }

// NotTaken lists the profile settings this engine cannot take on its chat
// endpoint, each with the source that says so: strata does not send them,
// and a run that needed them is nonconforming with each one named.
func (d Dialect) NotTaken() []string {
	var out []string
	for _, n := range d.facts().dropped {
		out = append(out, n.Setting+": "+n.Why)
	}
	return out
}

// ToolsReshaped says how the engine is known, from its source, to change
// the tool cases' tools before its chat template reads them ("" when it is
// not known to): what its rendering of them shows decides, where the
// preflight saw it (derive.ToolsReshaped).
func (d Dialect) ToolsReshaped() string { return d.facts().reshapesTools }

// dropped reports whether the engine cannot take a setting.
func (d Dialect) dropped(setting string) bool {
	for _, n := range d.facts().dropped {
		if n.Setting == setting {
			return true
		}
	}
	return false
}

// Timers is where this engine's counts and durations are.
func (d Dialect) Timers() Timers { return d.facts().timers }

// NoTimers says why the engine reports no per-request timer ("" when it
// does).
func (d Dialect) NoTimers() string { return d.facts().noTimers }

// IsReasoningField reports whether a stream delta's field carries
// reasoning text on some engine (each engine's reasoning in factsOf). The
// client reads every engine's name from any server: a gateway may pass
// either on, and the engine is not known to the stream. It is a switch, not
// a walk of the table, because the client asks it for every delta.
func IsReasoningField(name string) bool {
	switch name {
	case reasoningContent, reasoningText:
		return true
	}
	return false
}

// ConfigFrom is where an engine's option objects (kv_cache, offloading,
// prefill, mtp, …) are read; internal/engineconfig reads them. A server
// whose /v1/status reports its configuration is read there, whatever the
// engine.
type ConfigFrom string

const (
	// ConfigUnknown is strata cannot read the engine's options.
	ConfigUnknown ConfigFrom = ""
	// ConfigLlamaArgs is llama-server's command line (when the runner knows
	// it), /props and /slots.
	ConfigLlamaArgs ConfigFrom = "llama.cpp"
	// ConfigSimulator is strata's simulated engine, which has none of these
	// options.
	ConfigSimulator ConfigFrom = "strata-simulator"
	// ConfigStrataFile is Strata's server: its engine's options are the
	// args of the config file its command line names (--config
	// strata-<model>.json), and /props and /v1/status say the context and
	// the slots.
	ConfigStrataFile ConfigFrom = "strata config file"
)

// ConfigFrom is where this engine's option objects are read.
func (d Dialect) ConfigFrom() ConfigFrom {
	// The simulator speaking as Strata's server reads a Strata config file
	// (engine simulate --config) as the server does, so that file is read;
	// otherwise it has none of these options.
	if d.Simulated && d.facts().config != ConfigStrataFile {
		return ConfigSimulator
	}
	return d.facts().config
}

// OwnVersion reports whether the engine names its version, if at all, on a
// route of its own (Identify reads it into Version) rather than on the
// spec's sources, /props build_info and /v1/status.
func (d Dialect) OwnVersion() bool { return d.facts().ownVersion }

// Known reports whether the engine was identified.
func (d Dialect) Known() bool { return d.Engine != Unknown }

// identityRoute is a GET route only some engines serve, and the evidence
// its JSON answer fills.
type identityRoute struct {
	path string
	into *json.RawMessage
}

// identityRoutes are those routes in the order asked. A route whose
// evidence an earlier one filled is not asked.
func identityRoutes(ev *contract.ServerEvidence) []identityRoute {
	return []identityRoute{
		// vLLM: {"version": "<string>"}
		// (vllm/entrypoints/serve/instrumentator/basic.py @dcbf200);
		// ik_llama.cpp: {"version": <int>, "features": {…}}
		// (examples/server/server.cpp @8337e4c l.1921–1935).
		{"/version", &ev.Version},
		// Ollama: {"version"} (server/routes.go @fb30760 l.1879–1880).
		{ollamaVersionRoute, &ev.OllamaVersion},
		// SGLang: its server arguments and version. /get_server_info is
		// deprecated for /server_info (sgl-project/sglang #14533, #21463),
		// so the new route is asked first and the old one only when it
		// did not answer (python/sglang/srt/entrypoints/http_server.py
		// @0025436).
		{"/server_info", &ev.ServerInfo},
		{"/get_server_info", &ev.ServerInfo},
		// LM Studio's native REST API, and its older version (LM Studio's
		// documentation).
		{"/api/v1/models", &ev.LMStudioModels},
		{"/api/v0/models", &ev.LMStudioModels},
		// TabbyAPI: served without an API key, software.name "TabbyAPI"
		// (endpoints/core/router.py @e632af4 l.72–98, since 1c9bc2d), and
		// its sampler overrides (l.546; common/sampling.py).
		{"/.well-known/serviceinfo", &ev.ServiceInfo},
		{tabbyOverridesRoute, &ev.SamplingOverrides},
	}
}

// ollamaVersionRoute is Ollama's GET /api/version, which is also its
// readiness: Ollama serves no /health (server/routes.go @fb30760
// GenerateRoutes l.1841–1929 registers none; GET / and HEAD / answer "Ollama
// is running", l.1877–1878).
const ollamaVersionRoute = "/api/version"

// tabbyOverridesRoute is TabbyAPI's list of sampler overrides.
const tabbyOverridesRoute = "/v1/sampling/overrides"

// tabbyServiceInfo reports whether a /.well-known/serviceinfo answer names
// TabbyAPI ({"software": {"name": "TabbyAPI", …}}, endpoints/core/router.py
// @e632af4 l.72–98).
func tabbyServiceInfo(raw json.RawMessage) bool {
	var v struct {
		Software struct {
			Name string `json:"name"`
		} `json:"software"`
	}
	return isObject(raw) && json.Unmarshal(raw, &v) == nil && v.Software.Name == "TabbyAPI"
}

// sglangServerInfo reports whether a /server_info answer is SGLang's: vLLM
// serves a /server_info of its own in dev mode ({"vllm_config", "vllm_env",
// "system_env"}: vllm/entrypoints/serve/dev/server_info @09cb327, registered
// only with VLLM_SERVER_DEV_MODE), which is not.
func sglangServerInfo(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &v) != nil {
		return false
	}
	_, vllm := v["vllm_config"]
	return !vllm
}

// Timers names where an engine's counts and durations of one request are;
// Fields says which fields those are, the data internal/measure reads
// them by.
type Timers string

const (
	// TimersLlamaCpp is the final chunk's timings object (prompt_n,
	// prompt_ms, predicted_n, predicted_ms, cache_n), llama-server's.
	TimersLlamaCpp Timers = "llama.cpp timings"
	// TimersIKLlamaCpp is ik_llama.cpp's timings, the same fields without
	// cache_n; prompt_n counts only the tokens evaluated
	// (examples/server/server-context.cpp @0192b22 batch_pending_prompt).
	TimersIKLlamaCpp Timers = "ik_llama.cpp timings"
	// TimersVLLM is the per-request metrics object of vLLM's final usage
	// chunk (--enable-per-request-metrics): time_to_first_token_ms from
	// scheduling to the first token and generation_time_ms from the first
	// token to the last (vllm/entrypoints/generate/base/serving.py
	// build_per_request_timing_metrics; docs/features/per_request_metrics.md
	// @0377ba9).
	TimersVLLM Timers = "vllm per-request metrics"
	// TimersTabbyAPI is TabbyAPI's usage fields prompt_time (exllamav3's
	// time_prefill, rounded to 0.01 s) and completion_time (time_generate
	// over every generated token) (backends/exllamav3/model.py @004e837
	// handle_finish_chunk).
	TimersTabbyAPI Timers = "tabbyapi usage timers"
	// TimersOllama is the done line of Ollama's /api/chat stream, which
	// the client keeps as the request's timings: its counts and its
	// durations in nanoseconds (api.Metrics, api/types.go @96fb6d2fa
	// l.557–564).
	TimersOllama Timers = "ollama done line"
	// TimersNone is the engine reports no per-request timer on its streaming
	// chat endpoint; the rates are null with that reason.
	TimersNone Timers = "none"
)

// The objects of a streamed chunk that hold an engine's timers: llama-
// server's timings, and vLLM's per-request metrics on its final usage
// chunk. The client keeps either as the request's timings.
const (
	timingsObject     = "timings"
	vllmMetricsObject = "metrics"
)

// IsTimerObject reports whether a chunk's top-level field is an engine's
// timer object (the client keeps it as the request's timings, the
// evidence its rates are read from).
func IsTimerObject(name string) bool {
	switch name {
	case timingsObject, vllmMetricsObject:
		return true
	}
	return false
}

// TimerFields is where one Timers source keeps a request's counts and
// durations, and what is known of when they are missing.
type TimerFields struct {
	// Timings is the timer object is llama-server's timings, the spec's own
	// source, read by the spec's table (prompt_n, prompt_ms, predicted_n,
	// predicted_ms, predicted_per_second, cache_n). Another engine's timer
	// object never supplies these fields.
	Timings bool
	// Spec is the timings are exactly the spec's (llama.cpp's), so a null
	// rate needs no reason of the engine's beside it.
	Spec bool
	// CachedFromPromptN is the timings have no cache_n, but prompt_n counts
	// only the tokens evaluated (at least one on a full hit), so the cached
	// part is the rest of the prompt; CachedSource names that derivation.
	CachedFromPromptN bool
	CachedSource      string
	// CachedHint says when the engine reports
	// usage.prompt_tokens_details.cached_tokens at all ("" when nothing is
	// known); it follows that name in a reason.
	CachedHint string
	// Durations are the engine's two timers as fields of one object (nil
	// for llama-server's timings and for an engine without timers).
	Durations *Durations
	// Counts are the engine's token counts as fields of its timer object
	// instead of usage (nil: usage's prompt_tokens and completion_tokens).
	Counts *Counts
	// None is the engine reports no per-request timer.
	None bool
}

// Counts are an engine's prompt and output counts as fields of its timer
// object (Ollama's done line), and why its prompt count has no cached
// part.
type Counts struct {
	// Input and Output are the count fields; InputSource and
	// OutputSource name them as the result's sources say them.
	Input, Output             string
	InputSource, OutputSource string
	// NoSplit says why the prompt's cached and evaluated tokens are
	// unknown: cached_tokens and read_tokens are null with it. An engine
	// log that splits them (llama-server's print_timing lines, which
	// Ollama's log keeps) is a source the accounting can be given
	// instead (measure.Evidence.Split).
	NoSplit string
}

// Durations are an engine's prompt and decode durations as two fields of
// one object.
type Durations struct {
	// Object names the object in outputs.jsonl; InUsage says it is the
	// usage object, else it is the timer object the client kept as the
	// request's timings.
	Object  string
	InUsage bool
	// Prompt and Decode are the duration fields, Scale what turns them
	// into seconds.
	Prompt, Decode string
	Scale          float64
	// Source names the timers and DecodeSource the decode count, as the
	// result's sources say them.
	Source, DecodeSource string
	// AfterFirst is the decode duration starts at the first token, so it
	// covers completion_tokens - 1 of them.
	AfterFirst bool
	// DecodeCount is the field of Object the decode count is read from
	// ("": usage.completion_tokens).
	DecodeCount string
	// Absent says why the fields may be missing; Note is said whenever
	// they are read.
	Absent, Note string
}

// Fields is where this source's counts and durations are. "" is llama-
// server's timings (evidence that names no source).
func (t Timers) Fields() TimerFields {
	switch t {
	case TimersIKLlamaCpp:
		// No cache_n; prompt_n counts only the evaluated tokens
		// (examples/server/server-context.cpp @0192b22).
		// usage.prompt_tokens_details.cached_tokens is reported since #1647
		// (7b6507dda, examples/server/server-task.cpp @8337e4c l.137–144)
		// and read first; the derivation is for the builds before it.
		return TimerFields{Timings: true, CachedFromPromptN: true,
			CachedSource: "derived: usage.prompt_tokens - timings.prompt_n (ik_llama.cpp before #1647, 7b6507dda, reports no cached_tokens; its prompt_n counts only the tokens it evaluated)"}
	case TimersVLLM:
		// vLLM's per-request metrics: the prefill is the time from
		// scheduling to the first token, over the tokens it computed
		// (input minus cached); the decode is the time from the first token
		// to the last, over the tokens after the first. tokens_per_second
		// spans both phases and is never used.
		return TimerFields{CachedHint: " (vLLM sends it only with --enable-prompt-tokens-details)",
			Durations: &Durations{Object: vllmMetricsObject, Prompt: "time_to_first_token_ms", Decode: "generation_time_ms", Scale: 1e-3,
				Source:       "vllm metrics.time_to_first_token_ms / 1000 (scheduling to first token) and metrics.generation_time_ms / 1000 (first token to last)",
				DecodeSource: "derived: usage.completion_tokens - 1 (vLLM's generation_time_ms runs from the first token to the last)",
				AfterFirst:   true,
				Absent:       "metrics object (vLLM sends it only with --enable-per-request-metrics)"}}
	case TimersTabbyAPI:
		// prompt_time is exllamav3's prefill of the tokens it did not find
		// cached, completion_time its generation of every new token. Both
		// are rounded to 0.01 s, so a short prefill reads 0 (its rate is
		// then null).
		// UsageStats has no prompt_tokens_details on main @e632af4
		// (endpoints/OAI/types/common.py l.9–19); PR #452 (973b22b, not
		// merged) adds it. Without it the prefill's tokens are unknown.
		return TimerFields{CachedHint: " (TabbyAPI's usage has no prompt_tokens_details until PR #452, 973b22b, which main @e632af4 does not carry)",
			Durations: &Durations{Object: "usage", InUsage: true, Prompt: "prompt_time", Decode: "completion_time", Scale: 1,
				Source:       "usage.prompt_time and usage.completion_time (TabbyAPI, seconds rounded to 0.01)",
				DecodeSource: "usage.completion_tokens (TabbyAPI's completion_time covers every generated token)",
				Absent:       "usage.prompt_time or usage.completion_time (older TabbyAPI builds report counts only)",
				Note:         "TabbyAPI rounds prompt_time and completion_time to 0.01 s"}}
	case TimersOllama:
		return ollamaTimerFields()
	case TimersNone:
		return TimerFields{None: true}
	case TimersLlamaCpp, "":
		return TimerFields{Timings: true, Spec: true}
	}
	// A source strata does not know: llama-server's timer fields are read,
	// but none of its counts is taken from an object that is not its.
	return TimerFields{}
}

// Preflight is how an engine renders and counts a chat body before the
// run, the data internal/preflight runs its check by.
type Preflight struct {
	// Unverifiable says why the engine's own rendering and count of the
	// fixtures cannot be had ("" when they can): the check is not run.
	Unverifiable string
	// ApplyTemplate renders a chat body (answering {"prompt"}), and
	// Tokenize counts that rendering ({"content", "add_special",
	// "parse_special"}, answering {"tokens"}). With CountOnly, Tokenize
	// takes the chat body itself (or CountBody of it) and answers the count
	// in CountField ("count" when empty), and the engine's rendering is
	// never seen.
	ApplyTemplate, Tokenize string
	// RenderBody, when set, is the body ApplyTemplate takes for a chat
	// body, and RenderedAt the keys of its answer that lead to the
	// rendering ("prompt" when empty). Tokenize "" means the engine
	// counts no rendering before the run: the rendering alone is compared.
	RenderBody func(chat []byte) ([]byte, error)
	RenderedAt []string
	CountOnly  bool
	CountField string
	CountBody  func(chat []byte) ([]byte, error)
	// Sampling names the object of the count's answer that holds the
	// engine's resolved sampling settings ("" when it has none): they are
	// compared with the request's.
	Sampling string
	// Source says how the check reads the engine, in the result's words.
	Source string
	// Refused says why the check cannot be had when the first fixture's
	// count is refused (HTTP 400 or 422) rather than answered ("": such an
	// answer is that fixture's problem).
	Refused string
	// Fallback is the check run instead when the engine does not serve
	// this one's route (nil: none); its Source says how it differs.
	Fallback *Preflight
	// OffChatPath is set for a check whose route leaves out what the chat
	// path passes to the template, reasoning_effort (its Source says how):
	// with a template that reads it, a difference it shows may be the
	// route's, not the workload's (OffChatPathFor).
	OffChatPath bool
}

// OffChatPathFor reports whether this check renders a template of this
// source otherwise than the chat path does: it is off the chat path and
// the template reads reasoning_effort. The Qwen3 template does not, so
// vLLM's /tokenize renders it as a chat request is rendered.
func (p Preflight) OffChatPathFor(templateSource string) bool {
	return p.OffChatPath && strings.Contains(templateSource, "reasoning_effort")
}

// vllmPreflight is vLLM's: POST /v1/chat/completions/render takes the exact
// chat body and answers the token_ids of the chat path's rendering and the
// resolved sampling_params (vllm/entrypoints/serve/render/api_router.py
// @1c608d6, render/serving.py @0001948 render_chat_request); where it is
// not served, POST /tokenize, whose TokenizeChatRequest takes messages,
// chat_template_kwargs and tools but no reasoning_effort, and never adds
// the enable_thinking the chat path derives from it
// (vllm/entrypoints/serve/tokenize/protocol.py @030ea52, chat_completion/
// protocol.py @002032e build_chat_params).
func vllmPreflight() Preflight {
	const render = "/v1/chat/completions/render"
	return Preflight{CountOnly: true, Tokenize: render, CountField: "token_ids", Sampling: "sampling_params",
		Source: "POST " + render + " with each request's exact body (vLLM renders it as its chat path does and answers the token ids and the resolved sampling parameters; it returns no rendering text, so the count and the sampling are compared)",
		Fallback: &Preflight{CountOnly: true, Tokenize: "/tokenize", OffChatPath: true,
			Source: "POST /tokenize with each request's exact body, as this vLLM serves no " + render + ": /tokenize reads no reasoning_effort and does not derive enable_thinking from it as the chat path does, so a template that reads either renders otherwise there; it returns no rendering, so only the count is compared"}}
}

// llamaPreflight is the check by llama-server's pair of routes, which the
// servers built on it keep.
func llamaPreflight() Preflight {
	const apply, tokenize = "/apply-template", "/tokenize"
	return Preflight{ApplyTemplate: apply, Tokenize: tokenize,
		Source: "POST " + apply + " with each request's exact body, then POST " + tokenize + " of the engine's rendering"}
}

// unverifiable is an engine whose rendering and count cannot be had; the
// result still names the check strata would have run.
func unverifiable(why string) Preflight {
	p := llamaPreflight()
	p.Unverifiable = why
	return p
}

// Preflight is how this engine's rendering and count are checked.
func (d Dialect) Preflight() Preflight { return d.facts().preflight }
