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
		out = append(out, "The engine is Strata's server: the settings are sent in the spec's own words (reasoning_budget_tokens 0 is no custom budget). Its chat handler passes enable_thinking and reasoning_effort to the template and ignores preserve_thinking, which changes nothing for a single-turn conversation.")
	default:
		out = append(out, "The engine is not identified (neither Strata's /v1/status nor llama.cpp's build_info): the settings were sent in the spec's own words, and whether it applies them, including what reasoning_budget_tokens 0 means there, is unknown.")
	}
	if d.Simulated {
		out = append(out, "The server is strata's simulated engine: every number in this result is synthetic.")
	}
	return out
}
