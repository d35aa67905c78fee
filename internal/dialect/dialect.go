// Package dialect knows each inference engine strata measures: how it is
// identified from what it serves, how every setting of the protocol's
// profile is said on its wire, what of the resolved settings it reveals and
// where, and the standing limitations of measuring it. internal/protocol
// keeps the settings as data; a dialect translates them. The client sends
// the bytes a dialect builds and the runner asks the dialect; neither
// hard-codes an engine's field.
//
// The readings behind each translation are in docs/READINGS.md ("The
// reasoning budget is an intent, said in each engine's words").
package dialect

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/strata-bench/strata/internal/contract"
)

// Engine names an engine family.
type Engine string

const (
	// LlamaCpp is upstream llama.cpp's llama-server, identified by its
	// /props build_info ("b<build>-<commit>").
	LlamaCpp Engine = "llama.cpp"
	// StrataServer is Strata's own server (Niko1221/Strata serve/server.py
	// @452325a9), identified by the service "strata" its GET /health and
	// GET /v1/status answer, or by its /props build_info "Strata
	// <version>". The spec's settings are written in its words.
	StrataServer Engine = "strata-server"
	// Unknown is any other server: it gets the spec's literal values, and
	// the result says their meaning there is unknown.
	Unknown Engine = "unknown"
)

// LlamaPerRequestBudgetBuild is the first llama.cpp build that reads
// reasoning_budget_tokens from a chat request (b9982, 2026-07-13, "server:
// honour per-request reasoning_budget_tokens in chat completions"). Before
// it the field is ignored and only the server's --reasoning-budget applies.
const LlamaPerRequestBudgetBuild = 9982

// LlamaNoBudget is the reasoning budget strata sends llama.cpp from b9982:
// the largest value the server accepts (it answers a larger one with "Value
// must be between -1 <= value <= 2147483647"). Any value but -1 overrides the
// server's own --reasoning-budget for that request, and no cap of the
// protocol can reach this one, so thinking is never cut short. 0 would end
// thinking at once; -1 would defer to the server's budget, which the runner
// cannot see.
const LlamaNoBudget = 2147483647

// Dialect is an identified engine: its entry in the engine table.
// Record is what a result keeps of it, and Of turns that back into it.
type Dialect struct {
	Engine Engine
	// Version is the engine's own version string ("" when it names none).
	Version string
	// Build is llama.cpp's build number (0 for other engines).
	Build int
	// IdentifiedBy is the evidence the identification rests on.
	IdentifiedBy string
	// Simulated is set when the server is strata's simulator speaking as
	// this engine (its /props says strata_simulator).
	Simulated bool
	// API is the chat API strata speaks to it: APIOpenAI, or APINative,
	// the engine's own (Ollama's POST /api/chat).
	API API
	// Model is the model its requests name ("" when they name none: an
	// OpenAI-compatible body leaves it to the server).
	Model string
}

// API names the chat API a dialect speaks.
type API string

const (
	// APIOpenAI is the OpenAI-compatible POST /v1/chat/completions,
	// answered as Server-Sent Events: every engine's but Ollama's today,
	// and Ollama's in folders written before strata spoke its own.
	APIOpenAI API = ""
	// APINative is the engine's own chat API: Ollama's POST /api/chat,
	// answered as one JSON object per line (ollama.go).
	APINative API = "native"
)

// Record is the dialect as a result records it.
func (d Dialect) Record() contract.Dialect {
	return contract.Dialect{Engine: string(d.Engine), Version: d.Version, Build: d.Build, IdentifiedBy: d.IdentifiedBy, Simulated: d.Simulated,
		API: string(d.API), Model: d.Model}
}

// Of is the dialect a result recorded (Record's inverse).
func Of(r contract.Dialect) Dialect {
	return Dialect{Engine: Engine(r.Engine), Version: r.Version, Build: r.Build, IdentifiedBy: r.IdentifiedBy, Simulated: r.Simulated,
		API: API(r.API), Model: r.Model}
}

// llamaBuild is llama.cpp's build_info form, b<build>-<commit>.
var llamaBuild = regexp.MustCompile(`^b(\d+)-[0-9a-f]{7,}$`)

// llamaNoGitBuild is the build_info of a llama.cpp built without git
// (common/build-info.cpp.in with cmake/build-info.cmake's defaults).
const llamaNoGitBuild = "b0-unknown"

// ownedBy is the owned_by of the first model /v1/models lists.
func ownedBy(models json.RawMessage) string {
	var m struct {
		Data []struct {
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if json.Unmarshal(models, &m) != nil || len(m.Data) == 0 {
		return ""
	}
	return m.Data[0].OwnedBy
}

// Identify names the engine behind the evidence, most specific first.
// Strata's server comes before every llama.cpp rule: it serves
// llama-server's routes (/props, /slots) in its own way, and its chat
// handler reads the settings in Strata's words. ik_llama.cpp is told from llama.cpp by
// its Server header or its /version (an integer with features), vLLM by a
// /version whose version is a string or by owned_by, and the others by
// their own routes and owned_by values.
func Identify(ev contract.ServerEvidence) Dialect {
	var props struct {
		BuildInfo string `json:"build_info"`
	}
	if len(ev.Props) > 0 {
		_ = json.Unmarshal(ev.Props, &props)
	}
	d := identify(ev, props.BuildInfo)
	d.Simulated = len(SimulatorTraces(SimulatorEvidence{Server: ev, EngineVersion: d.Version})) > 0
	return d
}

func identify(ev contract.ServerEvidence, buildInfo string) Dialect {
	if by := strataIdentifiedBy(ev, buildInfo); by != "" {
		v, _ := strataVersion(ev, buildInfo)
		return Dialect{Engine: StrataServer, Version: v, IdentifiedBy: by}
	}
	var ver struct {
		Version  json.RawMessage `json:"version"`
		Features json.RawMessage `json:"features"`
	}
	_ = json.Unmarshal(ev.Version, &ver)
	var verNum int
	verIsNum := json.Unmarshal(ver.Version, &verNum) == nil
	var verStr string
	verIsStr := json.Unmarshal(ver.Version, &verStr) == nil
	switch {
	case ev.ServerHeader == "ik_llama.cpp":
		return Dialect{Engine: IKLlamaCpp, Version: numVersion(verIsNum, verNum), IdentifiedBy: `the Server header "ik_llama.cpp"`}
	case verIsNum && len(ver.Features) > 0:
		return Dialect{Engine: IKLlamaCpp, Version: numVersion(verIsNum, verNum), IdentifiedBy: "GET /version answers an integer version with features (ik_llama.cpp's form)"}
	}
	if m := llamaBuild.FindStringSubmatch(buildInfo); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return Dialect{Engine: LlamaCpp, Version: buildInfo, Build: n,
				IdentifiedBy: fmt.Sprintf("/props build_info %q (llama.cpp's b<build>-<commit> form)", buildInfo)}
		}
	}
	if buildInfo == llamaNoGitBuild {
		// cmake/build-info.cmake defaults BUILD_NUMBER 0 and BUILD_COMMIT
		// "unknown" when git is absent (llama.cpp @34af94cd9, b10470): the
		// engine is llama.cpp, its build is unknown.
		return Dialect{Engine: LlamaCpp, Version: buildInfo,
			IdentifiedBy: fmt.Sprintf("/props build_info %q (llama.cpp built without git: its build number is unknown)", buildInfo)}
	}
	// Routes only one engine serves come before owned_by, which is a
	// namespace on Ollama (a model under "vllm/" says owned_by "vllm").
	switch {
	case len(ev.OllamaVersion) > 0:
		var v struct {
			Version string `json:"version"`
		}
		_ = json.Unmarshal(ev.OllamaVersion, &v)
		// Ollama's own /api/chat carries the whole profile, its
		// OpenAI-compatible endpoint does not (ollama.go).
		return Dialect{Engine: Ollama, Version: v.Version, IdentifiedBy: "GET /api/version answers (Ollama's route)",
			API: APINative, Model: onlyModel(ev.Models)}
	case tabbyServiceInfo(ev.ServiceInfo):
		// Said without the route's leading "/.", which the result's
		// redactor takes for a local path.
		return Dialect{Engine: TabbyAPI, IdentifiedBy: `GET .well-known/serviceinfo at the server's root names software "TabbyAPI" (TabbyAPI's route, served without an API key)`}
	case sglangServerInfo(ev.ServerInfo):
		var info struct {
			Version string `json:"version"`
		}
		_ = json.Unmarshal(ev.ServerInfo, &info)
		return Dialect{Engine: SGLang, Version: info.Version, IdentifiedBy: "GET /server_info (or the deprecated /get_server_info) answers SGLang's server arguments"}
	case len(ev.LMStudioModels) > 0:
		return Dialect{Engine: LMStudio, IdentifiedBy: "GET /api/v1/models or /api/v0/models answers (LM Studio's native REST API)"}
	}
	switch owner := ownedBy(ev.Models); {
	case owner == "vllm":
		return Dialect{Engine: VLLM, Version: verStr, IdentifiedBy: `GET /v1/models says owned_by "vllm"`}
	case owner == "sglang":
		return Dialect{Engine: SGLang, IdentifiedBy: `GET /v1/models says owned_by "sglang"`}
	case owner == "tabbyAPI":
		return Dialect{Engine: TabbyAPI, IdentifiedBy: `GET /v1/models says owned_by "tabbyAPI"`}
	case verIsStr && verStr != "" && len(ev.Props) == 0 && owner == "":
		return Dialect{Engine: VLLM, Version: verStr, IdentifiedBy: "GET /version answers a string version and nothing else identifies the engine (vLLM's form)"}
	}
	d := Dialect{Engine: Unknown, Version: buildInfo,
		IdentifiedBy: "no route or field of a known engine identifies it (checked: /v1/status, /props build_info, /version, /v1/models owned_by, /server_info, /get_server_info, /api/version, /api/v0/models, .well-known/serviceinfo, the Server header)"}
	if len(ev.Props) == 0 && len(ev.Models) == 0 {
		d.IdentifiedBy = "the server has no /props, no /v1/models and no route of a known engine"
	}
	return d
}

func numVersion(ok bool, n int) string {
	if !ok {
		return ""
	}
	return strconv.Itoa(n)
}

// Name is a short label: "llama.cpp b10470", "strata-server 0.2.1",
// "unknown".
func (d Dialect) Name() string {
	switch {
	case d.Engine == LlamaCpp && d.Build > 0:
		return fmt.Sprintf("llama.cpp b%d", d.Build)
	case d.Engine == LlamaCpp:
		return "llama.cpp (build unknown)"
	case d.Engine == IKLlamaCpp && d.Version != "":
		return "ik_llama.cpp (version " + d.Version + ")"
	case d.Version != "" && d.Engine != Unknown && !IsSimulatorVersion(d.Version):
		return string(d.Engine) + " " + d.Version
	}
	return string(d.Engine)
}

// ReasoningBudget returns the field and value strata sends (no field: a
// nil Field).
func (d Dialect) ReasoningBudget() contract.Budget {
	field := new("reasoning_budget_tokens")
	switch {
	case d.Engine == StrataServer:
		return contract.Budget{Field: field, Value: new(0), PerRequest: true, Known: true,
			Meaning: "0 is \"no custom budget\" on Strata's server (the spec's own words)"}
	case d.Engine == LlamaCpp && d.Build >= LlamaPerRequestBudgetBuild:
		return contract.Budget{Field: field, Value: new(LlamaNoBudget), PerRequest: true, Known: true,
			Meaning: fmt.Sprintf("llama.cpp from b%d reads the field per request: 0 ends thinking at once and -1 defers to the server's --reasoning-budget, so strata sends %d, which overrides any server budget and which no cap can reach", LlamaPerRequestBudgetBuild, LlamaNoBudget)}
	case d.Engine == LlamaCpp && d.Build == 0:
		// build_info b0-unknown (no git) or b0-<commit>: the build number
		// says nothing of what the server reads, so the unreachable value
		// is sent and the server's budget checked as for an old build.
		return contract.Budget{Field: field, Value: new(LlamaNoBudget), PerRequest: false, Known: true,
			Meaning: fmt.Sprintf("the build number of this llama.cpp is unknown (%s: built without git, cmake/build-info.cmake @34af94cd9), so whether it reads reasoning_budget_tokens per request (from b%d) cannot be told: strata sends %d, which no cap reaches where it is read, and checks the server's --reasoning-budget (LLAMA_ARG_THINK_BUDGET) as for a build that ignores it", d.Version, LlamaPerRequestBudgetBuild, LlamaNoBudget)}
	case d.Engine == LlamaCpp:
		// Ignored before b9982; the unreachable value is still the safe one
		// should the build number be misread.
		return contract.Budget{Field: field, Value: new(LlamaNoBudget), PerRequest: false, Known: true,
			Meaning: fmt.Sprintf("llama.cpp before b%d ignores the field on the chat endpoint: only the server's --reasoning-budget (LLAMA_ARG_THINK_BUDGET) applies", LlamaPerRequestBudgetBuild)}
	case d.Engine == IKLlamaCpp:
		// examples/server/server-common.cpp @8337e4c l.894–907 (since
		// e0596bf61, #1376): thinking_budget_tokens is read only when the
		// server's budget is -1, and reasoning_budget_tokens never takes
		// effect on the chat endpoint; --reasoning-budget N > 0 is a token
		// budget (common/common.cpp l.2678, l.3221).
		return contract.Budget{PerRequest: false, Known: true,
			Meaning: "ik_llama.cpp reads thinking_budget_tokens from a chat request only when the server's --reasoning-budget is -1 (examples/server/server-common.cpp @8337e4c, since e0596bf61), so a server budget cannot be overridden per request; with -1 sending none is no budget. strata sends none and checks the server's --reasoning-budget (0 ends thinking at once, N > 0 is a token budget: common/common.cpp @8337e4c)"}
	case d.Engine == VLLM:
		return contract.Budget{Known: true, ByDefault: true,
			Meaning: "vLLM limits thinking only when a request sets thinking_token_budget (-1 or absent is unlimited: vllm/sampling_params.py @00388f6 validate_thinking_token_budget); strata sets none, which is no custom budget"}
	case d.Engine == SGLang:
		return contract.Budget{Known: true, ByDefault: true,
			Meaning: "SGLang's chat request has no budget field (python/sglang/srt/entrypoints/openai/protocol.py @004c82e ChatCompletionRequest: a budget needs a custom logit processor the request would have to name); strata names none, which is no custom budget"}
	case d.Engine == Ollama:
		return contract.Budget{Known: true, ByDefault: true,
			Meaning: "Ollama has no reasoning budget at all, on either endpoint (think is a bool or a level: api/types.go @fb30760 ThinkValue; the budget of PR #17566 is not merged); sending none is no custom budget"}
	case d.Engine == LMStudio:
		return contract.Budget{Known: true, ByDefault: true,
			Meaning: "LM Studio documents no reasoning budget; sending none is no custom budget"}
	case d.Engine == TabbyAPI:
		// endpoints/OAI/utils/chat_completion.py @e632af4
		// _resolve_reasoning_budget (from f1f2c85, 2026-08-12): the field
		// (aliases reasoning_budget, thinking_budget, thinking_token_budget)
		// is read per request; absent or negative defers to the server's
		// model.reasoning_budget_tokens (common/config_models.py l.372),
		// which no route shows; 0 ends reasoning; N >= 0 replaces it, with no
		// upper bound. An older build ignores the field (pydantic's extra
		// "ignore") and has no budget at all.
		return contract.Budget{Field: field, Value: new(LlamaNoBudget), PerRequest: true, Known: true,
			Meaning: fmt.Sprintf("TabbyAPI from f1f2c85 (2026-08-12) reads reasoning_budget_tokens per request: absent or negative defers to the server's model.reasoning_budget_tokens, which no route shows, and 0 ends reasoning, so strata sends %d, which replaces any server budget and which no cap reaches; an older build ignores the field and has no budget", LlamaNoBudget)}
	}
	return contract.Budget{Field: field, Value: new(0), PerRequest: true, Known: false,
		Meaning: "the engine is not identified: strata sends the spec's literal 0, whose meaning on this engine is unknown (on some engines 0 ends thinking at once)"}
}

// SettingNames maps a profile setting to the request field the engine reads
// it from, where that differs from the spec's name.
func (d Dialect) SettingNames() map[string]string {
	return d.facts().alias
}
