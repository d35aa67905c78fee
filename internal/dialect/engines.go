package dialect

// The engines beyond llama.cpp and Strata's server, each read in its own
// source (the files and commits are cited where each fact is used; the
// notes behind them are summarised in docs/READINGS.md, "Every engine in
// its own words"). What strata sends each one, what it cannot send, and
// where each count and timer of a result comes from are in this file and
// nowhere else.

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
	// TabbyAPI's /v1/models says owned_by "tabbyAPI"
	// (endpoints/core/types/model.py @03189bc).
	TabbyAPI Engine = "tabbyapi"
)

// Timers names where an engine's counts and durations of one request are,
// the source table internal/measure reads them with.
type Timers string

const (
	// TimersLlamaCpp: the final chunk's timings object (prompt_n,
	// prompt_ms, predicted_n, predicted_ms, cache_n), llama-server's.
	TimersLlamaCpp Timers = "llama.cpp timings"
	// TimersIKLlamaCpp: ik_llama.cpp's timings, the same fields without
	// cache_n; prompt_n counts only the tokens evaluated
	// (examples/server/server-context.cpp @0192b22 batch_pending_prompt).
	TimersIKLlamaCpp Timers = "ik_llama.cpp timings"
	// TimersVLLM: the per-request metrics object of vLLM's final usage
	// chunk (--enable-per-request-metrics): time_to_first_token_ms from
	// scheduling to the first token and generation_time_ms from the first
	// token to the last (vllm/entrypoints/generate/base/serving.py
	// build_per_request_timing_metrics; docs/features/per_request_metrics.md
	// @0377ba9).
	TimersVLLM Timers = "vllm per-request metrics"
	// TimersTabbyAPI: TabbyAPI's usage fields prompt_time (exllamav3's
	// time_prefill, rounded to 0.01 s) and completion_time (time_generate
	// over every generated token) (backends/exllamav3/model.py @004e837
	// handle_finish_chunk).
	TimersTabbyAPI Timers = "tabbyapi usage timers"
	// TimersNone: the engine reports no per-request timer on its streaming
	// chat endpoint; the rates are null with that reason.
	TimersNone Timers = "none"
)

// notTaken is one protocol setting an engine's chat endpoint does not
// take, and the source that says so.
type notTaken struct {
	Setting, Why string
}

// wire is how an engine takes the protocol's request.
type wire struct {
	// alias names the engine's own field for a setting where it differs
	// from the spec's; both are sent, with the same value, when keepSpec.
	alias    map[string]string
	keepSpec bool
	// dropped are settings not sent at all: the engine cannot take them.
	dropped []notTaken
	timers  Timers
	// noTimers says why an engine has no per-request timer (TimersNone).
	noTimers string
}

// wireOf is the table: one row per engine.
func (d Dialect) wireOf() wire {
	switch d.Engine {
	case LlamaCpp:
		// llama-server reads repeat_penalty (tools/server/server-task.cpp
		// params_from_json_cmpl); the spec's name is sent beside it.
		return wire{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, keepSpec: true, timers: TimersLlamaCpp}
	case IKLlamaCpp:
		return wire{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, keepSpec: true, timers: TimersIKLlamaCpp,
			dropped: []notTaken{
				{"reasoning_effort", "ik_llama.cpp's chat endpoint does not read reasoning_effort and does not pass it to the chat template (examples/server/server-common.cpp @0bc69a1 oaicompat_chat_params_parse)"},
			}}
	case VLLM:
		// Every setting under the spec's name (ChatCompletionRequest in
		// vllm/entrypoints/openai/chat_completion/protocol.py @002032e).
		return wire{timers: TimersVLLM}
	case SGLang:
		return wire{timers: TimersNone,
			noTimers: "SGLang's streaming chat reports no per-request prefill or decode time (python/sglang/srt/entrypoints/openai/serving_chat.py @002897c); its Prometheus histograms mix requests and include queueing"}
	case Ollama:
		// The OpenAI-compatible request struct has no field for these, so
		// Go's decoder drops them (openai/openai.go @0098875
		// ChatCompletionRequest).
		return wire{timers: TimersNone,
			noTimers: "Ollama's OpenAI-compatible endpoint reports counts only, no timer (openai/openai.go @0098875 ToUsage); its native /api/chat counts cached tokens in prompt_eval_count but times only the evaluated ones",
			dropped: []notTaken{
				{"top_k", "Ollama's OpenAI-compatible endpoint has no top_k field and drops it (openai/openai.go @0098875)"},
				{"min_p", "Ollama's OpenAI-compatible endpoint has no min_p field and drops it (openai/openai.go @0098875)"},
				{"repetition_penalty", "Ollama's OpenAI-compatible endpoint has no repetition_penalty (or repeat_penalty) field and drops it (openai/openai.go @0098875)"},
				{"chat_template_kwargs", "Ollama's OpenAI-compatible endpoint has no chat_template_kwargs field, so enable_thinking and preserve_thinking do not reach the template (openai/openai.go @0098875)"},
			}}
	case LMStudio:
		return wire{alias: map[string]string{"repetition_penalty": "repeat_penalty"}, timers: TimersNone,
			noTimers: "LM Studio's OpenAI-compatible endpoint documents no per-request timer (its native /api/v1/chat stats have a decode rate but no prompt time)",
			dropped: []notTaken{
				{"min_p", "LM Studio's OpenAI-compatible chat endpoint documents no min_p (docs 1_developer/3_openai-compat/chat-completions.md @51c92c6)"},
				{"chat_template_kwargs", "LM Studio's OpenAI-compatible chat endpoint documents no chat_template_kwargs (docs @51c92c6)"},
				{"reasoning_effort", "LM Studio's OpenAI-compatible chat endpoint documents no reasoning_effort (docs @51c92c6)"},
			}}
	case TabbyAPI:
		return wire{timers: TimersTabbyAPI,
			dropped: []notTaken{
				{"seed", "TabbyAPI's sampler request has no seed field (common/sampling.py BaseSamplerRequest), so each request's seed cannot be set"},
			}}
	}
	// Strata's server and an unknown engine: the spec's own words.
	return wire{timers: TimersLlamaCpp}
}

// NotTaken lists the profile settings this engine cannot take on its chat
// endpoint, each with the source that says so: strata does not send them,
// and a run that needed them is nonconforming with each one named.
func (d Dialect) NotTaken() []string {
	var out []string
	for _, n := range d.wireOf().dropped {
		out = append(out, n.Setting+": "+n.Why)
	}
	return out
}

// dropped reports whether the engine cannot take a setting.
func (d Dialect) dropped(setting string) bool {
	for _, n := range d.wireOf().dropped {
		if n.Setting == setting {
			return true
		}
	}
	return false
}

// Timers is where this engine's counts and durations are.
func (d Dialect) Timers() Timers { return d.wireOf().timers }

// NoTimers says why the engine reports no per-request timer ("" when it
// does).
func (d Dialect) NoTimers() string { return d.wireOf().noTimers }
