package dialect

import (
	"encoding/json"

	"github.com/strata-bench/strata/internal/contract"
)

// The GET routes strata asks every server before the run (internal/runner
// asks them; Identify reads the answers). The spec's own are /health,
// /props (llama-server's: build_info, chat_template) and /v1/status
// (Strata's server); /v1/models is the OpenAI-compatible list, whose
// owned_by names some engines, and /slots llama-server's slots with their
// resolved settings. The routes only some engines serve are identityRoutes.
const (
	HealthRoute = "/health"
	PropsRoute  = "/props"
	ModelsRoute = "/v1/models"
	SlotsRoute  = "/slots"
	StatusRoute = "/v1/status"
)

// readinessRoutes are the routes asked whether an engine is up when
// /health answers 404: the engines that serve no /health, each by the route
// that answers once it serves. Ollama registers no /health; its GET
// /api/version answers {"version"} once the server serves (server/routes.go
// @fb30760 l.1879–1880, Serve l.2034–2062), and its models load lazily per
// request, so there is no later "model loaded" state to wait for.
var readinessRoutes = []string{ollamaVersionRoute}

// AskReady asks a server whether it is ready: its /health status, or, when
// /health is 404, 200 from the first readiness route of an engine without
// /health that answers it (404 when none does). get asks one route; route
// names the one whose status is returned.
func AskReady(get func(path string) (int, error)) (status int, route string, err error) {
	status, err = get(HealthRoute)
	if err != nil || status != 404 {
		return status, HealthRoute, err
	}
	for _, r := range readinessRoutes {
		if s, err := get(r); err == nil && s == 200 {
			return s, r, nil
		}
	}
	return status, HealthRoute, nil
}

// AskIdentityRoutes fills the evidence of the routes only some engines
// serve; get asks one route and returns its JSON answer when it answered
// 200, else nil.
func AskIdentityRoutes(ev *contract.ServerEvidence, get func(path string) json.RawMessage) {
	for _, r := range identityRoutes(ev) {
		if *r.into == nil {
			*r.into = get(r.path)
		}
	}
}

// ReadHeaders keeps the headers of the /health answer that identify an
// engine (ik_llama.cpp's Server header) and strata's simulator; header
// returns one by name. Any answer's headers are read, a 404 too: an engine
// without /health (Ollama) still sends them.
func ReadHeaders(ev *contract.ServerEvidence, header func(name string) string) {
	ev.ServerHeader, ev.SimulatorHeader = header("Server"), header(SimulatorHeaderName)
}

// Props is what strata reads of GET /props: llama-server's fields, which
// the servers built on it share, and the simulator's version.
type Props struct {
	BuildInfo    string `json:"build_info"`
	ChatTemplate string `json:"chat_template"`
	ModelPath    string `json:"model_path"`
	ModelAlias   string `json:"model_alias"`
	TotalSlots   *int64 `json:"total_slots"`
	SimVersion   string `json:"strata_simulator_version"` // simulatorPropsVersion
	Default      struct {
		NCtx *int64 `json:"n_ctx"`
	} `json:"default_generation_settings"`
}

// ReadProps reads a /props answer; ok is false when it is not an object of
// these fields.
func ReadProps(raw json.RawMessage) (Props, bool) {
	var p Props
	err := json.Unmarshal(raw, &p)
	return p, err == nil
}
