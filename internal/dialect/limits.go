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
			fmt.Sprintf("%s passes reasoning_effort and chat_template_kwargs to the chat template and reads reasoning_budget_tokens per request (0 would end thinking at once); strata sends %d, a budget no cap reaches. /slots shows none of the three, so they are sent, not verified.", d.Name(), b.Value))
	case d.Engine == LlamaCpp:
		out = append(out,
			fmt.Sprintf("The engine is %s. It reads repeat_penalty, not the spec's repetition_penalty, so strata sends both with the profile's value; /slots shows the resolved repeat_penalty, which is checked.", d.Name()),
			fmt.Sprintf("%s ignores reasoning_effort and reasoning_budget_tokens on the chat endpoint (they are sent, not applied); only the server's --reasoning-budget limits thinking, and the reasoning budget check below says what strata could see of it.", d.Name()))
	case d.Engine == IKLlamaCpp || d.Engine == VLLM || d.Engine == SGLang || d.Engine == Ollama || d.Engine == LMStudio || d.Engine == TabbyAPI:
		out = append(out, fmt.Sprintf("The engine is %s (%s). %s", d.Name(), d.IdentifiedBy, b.Meaning+"."))
		for _, n := range d.NotTaken() {
			out = append(out, "Not taken, so not sent: "+n+".")
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
			"Strata's server has switches of its own that can end or change a reply, none visible over HTTP: repeat_stop_tokens (on by default at 256: one token repeated that many times ends the reply as length), reasoning_loop_recovery, reasoning_close_retry and tool_call_recovery (off by default); the config file, when strata can read it, says which were set.")
	default:
		out = append(out, "The engine is not identified (neither Strata's /v1/status nor llama.cpp's build_info): the settings were sent in the spec's own words, and whether it applies them, including what reasoning_budget_tokens 0 means there, is unknown.")
	}
	if d.Simulated {
		out = append(out, "The server is strata's simulated engine: every number in this result is synthetic.")
	}
	return out
}
