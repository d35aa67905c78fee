package dialect

import "fmt"

// Limitations are the standing caveats of measuring this engine, for the
// result's Limitations section. They follow the identified build.
func (d Dialect) Limitations() []string {
	var out []string
	b := d.ReasoningBudget()
	switch {
	case d.Engine == LlamaCpp && b.PerRequest:
		out = append(out,
			fmt.Sprintf("The engine is %s. It reads repeat_penalty, not the spec's repetition_penalty, so strata sends both with the profile's value; /slots shows the resolved repeat_penalty, which is checked.", d.Name()),
			fmt.Sprintf("%s reads reasoning_budget_tokens per request (0 would end thinking at once); strata sends %d, a budget no cap reaches. %s /slots shows neither, nor chat_template_kwargs, so they are sent, not verified. The build number decides the budget field, and it is not a feature test: a fork or a shallow clone counts its own commits (cmake/build-info.cmake).", d.Name(), *b.Value, llamaEffort(d.Build)))
	case d.Engine == LlamaCpp && d.Build == 0:
		out = append(out,
			fmt.Sprintf("The engine is %s (%s). It reads repeat_penalty, not the spec's repetition_penalty, so strata sends both with the profile's value; /slots shows the resolved repeat_penalty, which is checked.", d.Name(), d.IdentifiedBy),
			b.Meaning+". strata passes reasoning_effort inside chat_template_kwargs, whose every key reaches the chat template on every build read; whether the top-level field acts cannot be told without the build.")
	case d.Engine == LlamaCpp:
		out = append(out,
			fmt.Sprintf("The engine is %s. It reads repeat_penalty, not the spec's repetition_penalty, so strata sends both with the profile's value; /slots shows the resolved repeat_penalty, which is checked.", d.Name()),
			fmt.Sprintf("%s ignores reasoning_budget_tokens and the top-level reasoning_effort on the chat endpoint; strata passes reasoning_effort inside chat_template_kwargs, whose every key reaches the chat template. Only the server's --reasoning-budget limits thinking, and the reasoning budget check below says what strata could see of it.", d.Name()))
	case d.API == APINative:
		out = append(out, d.ollamaLimitations()...)
	case d.Engine == IKLlamaCpp || d.Engine == VLLM || d.Engine == SGLang || d.Engine == Ollama || d.Engine == LMStudio || d.Engine == TabbyAPI:
		out = append(out, fmt.Sprintf("The engine is %s (%s). %s", d.Name(), d.IdentifiedBy, b.Meaning+"."))
		for _, n := range d.NotTaken() {
			out = append(out, "Not taken, so not sent: "+n+".")
		}
		if d.Engine == IKLlamaCpp {
			// examples/server/server-common.cpp @8337e4c l.811–815 and
			// common/chat.cpp l.796–800, l.2736.
			out = append(out, d.Name()+" reads no top-level reasoning_effort; strata passes it inside chat_template_kwargs, whose every key reaches the chat template (examples/server/server-common.cpp @8337e4c).")
		}
		if why := d.NoTimers(); why != "" {
			out = append(out, "No engine timers: "+why+"; the prompt and decode rates are null.")
		}
		if d.Engine != IKLlamaCpp {
			out = append(out, fmt.Sprintf("%s shows no request's resolved settings (nothing like llama.cpp's /slots), so the settings were sent, not verified.", d.Name()))
		}
	case d.Engine == StrataServer:
		// Each sentence is read in serve/server.py @452325a9 (and
		// serve/frontend.py): openai_to_messages, effort_kwargs,
		// StrataEngine.sampling_keys, Service.run, Handler._slots, main.
		out = append(out,
			fmt.Sprintf("The engine is %s (%s). The settings are sent in the spec's own words: reasoning_budget_tokens 0 is no budget there (0 or less turns even a configured budget off), and reasoning_effort goes through its effort table (xhigh is its highest, as the template's default).", d.Name(), d.IdentifiedBy),
			"Of chat_template_kwargs Strata reads only a false enable_thinking and reasoning_effort; preserve_thinking is ignored, which changes nothing for a single-turn conversation.",
			"Strata forwards temperature only when above 0, seed only when above 0 and top_k only from 1 to 64 (0 or more than 64 becomes 64); its config file's sampling block fills only the fields a request leaves out. Its /slots lists id, n_ctx, is_processing and n_prompt_tokens only, so the sampling settings were sent, not verified.",
			"Strata's server has switches of its own that can end or change a reply, none visible over HTTP: repeat_stop_tokens (on by default at 256: one token repeated that many times ends the reply as length), reasoning_loop_recovery, reasoning_close_retry and tool_call_recovery (off by default); the config file, when strata can read it, says which were set.",
			"Its warmed expert cache stays enabled and evolves normally, as the spec asks.")
	default:
		out = append(out, "The engine is not identified (neither Strata's /v1/status nor llama.cpp's build_info): the settings were sent in the spec's own words, and whether it applies them, including what reasoning_budget_tokens 0 means there, is unknown.",
			"The runner cannot see switches of an unidentified server that end or change a reply (such as Strata's repeat-stop and loop recovery) and does not claim they were off.")
	}
	if d.Simulated {
		out = append(out, "The server is strata's simulated engine: every number in this result is synthetic.")
	}
	return out
}

// Builds of llama.cpp by what they do with the top-level reasoning_effort
// (tools/server/server-common.cpp oaicompat_chat_params_parse): not read
// up to b10116, only "none" acts from b10117 (27209a598, #26045; README:
// "Other values ... have no effect"), and from b10434 (7e4c0a968, "chat :
// pass reasoning_effort to template") the value reaches the template.
const (
	llamaEffortNoneBuild     = 10117
	llamaEffortTemplateBuild = 10434
)

// llamaEffort says what a llama.cpp build does with reasoning_effort.
func llamaEffort(build int) string {
	const kw = "strata passes it inside chat_template_kwargs too, whose every key reaches the chat template on every build read."
	switch {
	case build >= llamaEffortTemplateBuild:
		return fmt.Sprintf("From b%d the top-level reasoning_effort reaches the chat template; %s", llamaEffortTemplateBuild, kw)
	case build >= llamaEffortNoneBuild:
		return fmt.Sprintf("This build acts on the top-level reasoning_effort only when it is \"none\" (b%d to b%d; other values have no effect), so %s", llamaEffortNoneBuild, llamaEffortTemplateBuild-1, kw)
	}
	return fmt.Sprintf("This build does not read the top-level reasoning_effort (before b%d), so %s", llamaEffortNoneBuild, kw)
}
