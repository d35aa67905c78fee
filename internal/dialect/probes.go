package dialect

import "encoding/json"

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

// AskIdentityRoutes fills the evidence of the routes only some engines
// serve; get asks one route and returns its JSON answer when it answered
// 200, else nil.
func (ev *Evidence) AskIdentityRoutes(get func(path string) json.RawMessage) {
	for _, r := range identityRoutes(ev) {
		if *r.into == nil {
			*r.into = get(r.path)
		}
	}
}

// ReadHeaders keeps the headers of the /health answer that identify an
// engine (ik_llama.cpp's Server header) and strata's simulator; header
// returns one by name.
func (ev *Evidence) ReadHeaders(header func(name string) string) {
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
