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
	"strings"
)

// Engine names an engine family.
type Engine string

const (
	// LlamaCpp is upstream llama.cpp's llama-server, identified by its
	// /props build_info ("b<build>-<commit>").
	LlamaCpp Engine = "llama.cpp"
	// StrataServer is Strata's own server, identified by GET /v1/status.
	// The spec's settings are written in its words.
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

// Dialect is an identified engine.
type Dialect struct {
	Engine Engine `json:"engine"`
	// Version is the engine's own version string ("" when it names none).
	Version string `json:"version,omitempty"`
	// Build is llama.cpp's build number (0 for other engines).
	Build int `json:"build,omitempty"`
	// IdentifiedBy is the evidence the identification rests on.
	IdentifiedBy string `json:"identified_by"`
	// Simulated is set when the server is strata's simulator speaking as
	// this engine (its /props says strata_simulator).
	Simulated bool `json:"simulated"`
}

// Evidence is what a server serves about itself before the run.
type Evidence struct {
	Props  json.RawMessage // GET /props (nil: none)
	Status json.RawMessage // GET /v1/status (nil: none)
}

// llamaBuild is llama.cpp's build_info form, b<build>-<commit>.
var llamaBuild = regexp.MustCompile(`^b(\d+)-[0-9a-f]{7,}$`)

// Identify names the engine behind the evidence. Strata's /v1/status wins
// over a build_info in /props: Strata's server is built on llama.cpp and may
// report its build, but its chat handler reads the settings in Strata's
// words.
func Identify(ev Evidence) Dialect {
	var props struct {
		BuildInfo       string `json:"build_info"`
		StrataSimulator bool   `json:"strata_simulator"`
	}
	if len(ev.Props) > 0 {
		_ = json.Unmarshal(ev.Props, &props)
	}
	sim := props.StrataSimulator || IsSimulatorVersion(props.BuildInfo)
	if len(ev.Status) > 0 {
		var st struct {
			Version       string `json:"version"`
			EngineVersion string `json:"engine_version"`
		}
		if json.Unmarshal(ev.Status, &st) == nil {
			v := st.EngineVersion
			if v == "" {
				v = st.Version
			}
			return Dialect{Engine: StrataServer, Version: v, IdentifiedBy: "GET /v1/status answers (Strata's server)", Simulated: sim || IsSimulatorVersion(v)}
		}
	}
	if m := llamaBuild.FindStringSubmatch(props.BuildInfo); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil {
			return Dialect{Engine: LlamaCpp, Version: props.BuildInfo, Build: n,
				IdentifiedBy: fmt.Sprintf("/props build_info %q (llama.cpp's b<build>-<commit> form)", props.BuildInfo), Simulated: sim}
		}
	}
	d := Dialect{Engine: Unknown, Version: props.BuildInfo, Simulated: sim,
		IdentifiedBy: "neither GET /v1/status nor a llama.cpp build_info in /props identifies the engine"}
	if len(ev.Props) == 0 {
		d.IdentifiedBy = "the server has no /props and no /v1/status"
	}
	return d
}

// simulatorPrefix starts every version string strata's simulator reports.
const simulatorPrefix = "strata-simulator"

// IsSimulatorVersion reports whether an engine version is strata's
// simulator's: the one rule by which a run, and a saved result, are known
// to come from it.
func IsSimulatorVersion(v string) bool { return strings.HasPrefix(v, simulatorPrefix) }

// Name is a short label: "llama.cpp b10470", "strata-server 0.2.1",
// "unknown".
func (d Dialect) Name() string {
	switch {
	case d.Engine == LlamaCpp && d.Build > 0:
		return fmt.Sprintf("llama.cpp b%d", d.Build)
	case d.Version != "" && d.Engine != Unknown && !IsSimulatorVersion(d.Version):
		return string(d.Engine) + " " + d.Version
	}
	return string(d.Engine)
}

// readsRequestBudget reports whether the engine reads a reasoning budget
// from each chat request.
func (d Dialect) readsRequestBudget() bool {
	return d.Engine == StrataServer || (d.Engine == LlamaCpp && d.Build >= LlamaPerRequestBudgetBuild)
}

// Budget is how "no custom reasoning budget" is said to an engine.
type Budget struct {
	Field string `json:"field"`
	Value int    `json:"value"`
	// PerRequest is false when the engine ignores the field, so only a
	// server-level budget applies.
	PerRequest bool `json:"per_request"`
	// Known is false when strata cannot tell what the value means there.
	Known   bool   `json:"known"`
	Meaning string `json:"meaning"`
}

// ReasoningBudget returns the field and value strata sends.
func (d Dialect) ReasoningBudget() Budget {
	const field = "reasoning_budget_tokens"
	switch {
	case d.Engine == StrataServer:
		return Budget{Field: field, Value: 0, PerRequest: true, Known: true,
			Meaning: "0 is \"no custom budget\" on Strata's server (the spec's own words)"}
	case d.Engine == LlamaCpp && d.Build >= LlamaPerRequestBudgetBuild:
		return Budget{Field: field, Value: LlamaNoBudget, PerRequest: true, Known: true,
			Meaning: fmt.Sprintf("llama.cpp from b%d reads the field per request: 0 ends thinking at once and -1 defers to the server's --reasoning-budget, so strata sends %d, which overrides any server budget and which no cap can reach", LlamaPerRequestBudgetBuild, LlamaNoBudget)}
	case d.Engine == LlamaCpp:
		// Ignored before b9982; the unreachable value is still the safe one
		// should the build number be misread.
		return Budget{Field: field, Value: LlamaNoBudget, PerRequest: false, Known: true,
			Meaning: fmt.Sprintf("llama.cpp before b%d ignores the field on the chat endpoint: only the server's --reasoning-budget (LLAMA_ARG_THINK_BUDGET) applies", LlamaPerRequestBudgetBuild)}
	}
	return Budget{Field: field, Value: 0, PerRequest: true, Known: false,
		Meaning: "the engine is not identified: strata sends the spec's literal 0, whose meaning on this engine is unknown (on some engines 0 ends thinking at once)"}
}

// SettingNames maps a profile setting to the request field the engine reads
// it from, where that differs from the spec's name.
func (d Dialect) SettingNames() map[string]string {
	if d.Engine == LlamaCpp {
		return map[string]string{"repetition_penalty": "repeat_penalty"}
	}
	return nil
}
