package dialect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// Server-level reasoning budget settings of llama-server (common/arg.cpp:
// "--reasoning-budget N", env LLAMA_ARG_THINK_BUDGET; -1 is unrestricted and
// the default). A command-line argument wins over the variable.
const (
	llamaBudgetFlag = "--reasoning-budget"
	llamaBudgetEnv  = "LLAMA_ARG_THINK_BUDGET"
)

// serverBudget finds the server's budget in the view: its value and a
// phrase naming where it was set; ok is false when it is not set (the
// default, unrestricted). withEnv is false for an engine that reads no
// LLAMA_ARG_THINK_BUDGET (ik_llama.cpp: gpt_params_parse_from_env,
// common/common.cpp @8337e4c l.797–824, reads no such variable).
func serverBudget(v record.EngineView, withEnv bool) (value string, where string, ok bool) {
	for i, a := range v.Args {
		if a == llamaBudgetFlag && i+1 < len(v.Args) {
			value, where, ok = v.Args[i+1], llamaBudgetFlag+" "+v.Args[i+1], true
		} else if val, found := strings.CutPrefix(a, llamaBudgetFlag+"="); found {
			value, where, ok = val, a, true
		}
	}
	if ok || !withEnv {
		return value, where, ok
	}
	for _, kv := range v.Env {
		if val, found := strings.CutPrefix(kv, llamaBudgetEnv+"="); found {
			value, where, ok = val, llamaBudgetEnv+"="+val, true
		}
	}
	return value, where, ok
}

// CheckBudget decides whether thinking runs without a custom budget on this
// engine, from what the runner can see of the engine process.
func (d Dialect) CheckBudget(v record.EngineView) contract.BudgetCheck {
	b := d.ReasoningBudget()
	value, where, set := "", "", false
	if v.Args != nil {
		value, where, set = serverBudget(v, d.Engine != IKLlamaCpp)
	}
	seen := ""
	if set {
		seen = where + " (" + v.Where + ")"
	}
	switch {
	case !b.Known:
		return contract.BudgetCheck{State: "not verifiable", Server: seen,
			Detail: "the engine is not identified, so what reasoning_budget_tokens 0 means there, and whether the server sets its own budget, cannot be verified"}
	case b.ByDefault:
		return contract.BudgetCheck{State: "none by default", Detail: b.Meaning}
	case d.Engine == StrataServer:
		return contract.BudgetCheck{State: "sent per request", Server: seen,
			Detail: "reasoning_budget_tokens 0 (no custom budget, in Strata's own words) is sent with every request"}
	case b.PerRequest:
		detail := fmt.Sprintf("every request carries reasoning_budget_tokens %d, which %s reads per request; it overrides any server budget and no cap reaches it", *b.Value, d.Name())
		if set {
			detail += "; the server's own " + where + " is overridden"
		}
		return contract.BudgetCheck{State: "overridden per request", Server: seen, Detail: detail}
	}
	// An engine that ignores the per-request field: only the server's budget
	// applies, and strata can only check it.
	ignores, setBy := d.Name()+" ignores reasoning_budget_tokens", llamaBudgetFlag+" (or "+llamaBudgetEnv+")"
	switch {
	case d.Engine == IKLlamaCpp:
		ignores, setBy = d.Name()+" cannot override a server budget per request", llamaBudgetFlag
	case d.Build == 0:
		ignores = d.Name() + " may ignore reasoning_budget_tokens (its build number cannot tell)"
	}
	if v.Args == nil {
		return contract.BudgetCheck{State: "not verifiable",
			Detail: fmt.Sprintf("%s, so only the server's %s applies, and the runner cannot see the server's command line: run with --profile, or on this machine, so the budget can be checked", ignores, setBy)}
	}
	if !set && d.Engine == IKLlamaCpp {
		return contract.BudgetCheck{State: "unlimited",
			Detail: fmt.Sprintf("%s; the server sets no %s (%s), so its default, unrestricted (-1), applies", ignores, llamaBudgetFlag, v.Where)}
	}
	if !set && v.EnvUnreadable != "" {
		return contract.BudgetCheck{State: "not verifiable",
			Detail: fmt.Sprintf("%s, so only the server's %s or %s applies; the command line (%s) sets no %s, but the environment cannot be read (%s)", ignores, llamaBudgetFlag, llamaBudgetEnv, v.Where, llamaBudgetFlag, v.EnvUnreadable)}
	}
	if !set {
		return contract.BudgetCheck{State: "unlimited",
			Detail: fmt.Sprintf("%s; the server sets no %s and no %s (%s), so its default, unrestricted (-1), applies", ignores, llamaBudgetFlag, llamaBudgetEnv, v.Where)}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(value)); err == nil && n == -1 {
		return contract.BudgetCheck{State: "unlimited", Server: seen,
			Detail: fmt.Sprintf("%s; the server's %s is unrestricted", ignores, where)}
	}
	perRequest := d.Name() + " ignores the per-request reasoning_budget_tokens"
	if d.Engine == IKLlamaCpp || d.Build == 0 {
		perRequest = ignores
	}
	reason := fmt.Sprintf("the server sets a reasoning budget, %s (%s), and %s, so thinking may be cut short: the spec requires custom reasoning budgets to be disabled", where, v.Where, perRequest)
	return contract.BudgetCheck{State: "limited", Server: seen, Detail: reason, Nonconforming: reason}
}
