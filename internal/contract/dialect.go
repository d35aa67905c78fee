package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Dialect is the identified engine as a result records it
// (extensions.engine_dialect.dialect); internal/dialect identifies it and
// makes it, and turns a recorded one back into its engine table's entry.
type Dialect struct {
	// Engine names the engine family ("llama.cpp", "vllm", "unknown", …).
	Engine string `json:"engine"`
	// Version is the engine's own version string ("" when it names none).
	Version string `json:"version,omitempty"`
	// Build is llama.cpp's build number (0 for other engines).
	Build int `json:"build,omitempty"`
	// IdentifiedBy is the evidence the identification rests on.
	IdentifiedBy string `json:"identified_by"`
	// Simulated is set when the server is strata's simulator speaking as
	// this engine (its /props says strata_simulator).
	Simulated bool `json:"simulated"`
	// API is the chat API the requests were sent to when it is the
	// engine's own ("native": Ollama's POST /api/chat); absent, the
	// OpenAI-compatible POST /v1/chat/completions.
	API string `json:"api,omitempty"`
	// Model is the model the requests named (Ollama's /api/chat needs
	// one); absent when they named none and the server ran its own.
	Model string `json:"model,omitempty"`
}

// Budget is how "no custom reasoning budget" is said to an engine
// (extensions.engine_dialect.reasoning_budget).
type Budget struct {
	// Field is the request field strata sends; nil when it sends none
	// (missing says why, at PtrEngineDialectBudgetField).
	Field *string `json:"field"`
	// Value is the value sent in Field; nil when no field is sent (missing
	// says why, at PtrEngineDialectBudgetValue).
	Value *int `json:"value"`
	// PerRequest is false when the engine ignores the field, so only a
	// server-level budget applies.
	PerRequest bool `json:"per_request"`
	// Known is false when strata cannot tell what the value means there.
	Known bool `json:"known"`
	// ByDefault is set for an engine that applies a budget only when a
	// request asks for one: sending nothing is "no custom budget".
	ByDefault bool   `json:"by_default,omitempty"`
	Meaning   string `json:"meaning"`
}

// BudgetCheck is the verdict on the reasoning budget of a run
// (extensions.engine_dialect.budget_check).
type BudgetCheck struct {
	// State is "sent per request", "overridden per request", "none by
	// default", "unlimited", "limited" or "not verifiable".
	State string `json:"state"`
	// Server is the server-level budget strata saw ("" when not set or not
	// visible) and where it was set.
	Server string `json:"server_budget,omitempty"`
	Detail string `json:"detail"`
	// Nonconforming is set when a budget strata can see but not override
	// would cut thinking short.
	Nonconforming string `json:"nonconforming,omitempty"`
}

// ServerEvidence is what a server serves about itself before the run: each
// a raw body (nil when the route did not answer 200 with JSON), and the
// Server and X-Strata-Simulator headers of its /health answer. config.json
// keeps it under these names, so a saved result is identified again from
// the same evidence (ReadServerEvidence).
type ServerEvidence struct {
	// Health is GET /health's JSON answer: Strata's server names itself
	// there, and it is the one route it answers without its API key.
	Health json.RawMessage `json:"health,omitempty"`
	Props  json.RawMessage `json:"props"`     // GET /props
	Status json.RawMessage `json:"v1_status"` // GET /v1/status (Strata's server)
	Models json.RawMessage `json:"models"`    // GET /v1/models
	// Version is GET /version (vLLM: {"version": "0.11.2"}; ik_llama.cpp:
	// {"version": 4, "features": {...}}).
	Version json.RawMessage `json:"version"`
	// OllamaVersion is GET /api/version, ServerInfo SGLang's GET
	// /server_info (or the deprecated /get_server_info) and LMStudioModels
	// LM Studio's GET /api/v1/models (or /api/v0/models).
	OllamaVersion  json.RawMessage `json:"api_version"`
	ServerInfo     json.RawMessage `json:"server_info"`
	LMStudioModels json.RawMessage `json:"lmstudio_models"`
	// ServiceInfo is GET /.well-known/serviceinfo (TabbyAPI names itself
	// there without an API key) and SamplingOverrides TabbyAPI's GET
	// /v1/sampling/overrides, whose forced values replace a request's.
	ServiceInfo       json.RawMessage `json:"serviceinfo,omitempty"`
	SamplingOverrides json.RawMessage `json:"sampling_overrides,omitempty"`
	// OllamaShow is Ollama's answer to POST /api/show for the model the
	// requests name (its template and the FROM line of its modelfile).
	OllamaShow   json.RawMessage `json:"api_show,omitempty"`
	ServerHeader string          `json:"server_header"`
	// SimulatorHeader is the X-Strata-Simulator header strata's simulator
	// sends with every answer, whatever engine it speaks as.
	SimulatorHeader string `json:"simulator_header"`
}

// ReadServerEvidence reads the server's evidence from a saved config.json
// (a route recorded as null did not answer).
func ReadServerEvidence(config []byte) (ServerEvidence, error) {
	var ev ServerEvidence
	if err := json.Unmarshal(config, &ev); err != nil {
		return ServerEvidence{}, fmt.Errorf("the server's evidence in config.json: %w", err)
	}
	for _, raw := range []*json.RawMessage{&ev.Health, &ev.Props, &ev.Status, &ev.Models, &ev.Version, &ev.OllamaVersion, &ev.ServerInfo, &ev.LMStudioModels, &ev.ServiceInfo, &ev.SamplingOverrides, &ev.OllamaShow} {
		if string(bytes.TrimSpace(*raw)) == "null" {
			*raw = nil
		}
	}
	return ev, nil
}
