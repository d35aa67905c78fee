package record

import (
	"encoding/json"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

// Request is one scheduled request and what became of it.
type Request struct {
	Req     protocol.Request
	Fixture *fixtures.Fixture
	// Body is the exact JSON sent; nil when the request was skipped.
	Body []byte
	// Outcome is nil when the request was never dispatched.
	Outcome *Outcome
	// SkipReason says why a request was not dispatched.
	SkipReason string
	// Start and End are monotonic times of dispatch and termination, and
	// DispatchedAt the wall-clock dispatch time (UTC).
	Start, End   time.Time
	DispatchedAt time.Time
	// Settings is what the server revealed of the resolved settings.
	Settings *contract.SettingsCheck
	// Lost is set for a request that was in flight when the runner stopped
	// (a recovered run): its end was never recorded.
	Lost bool
}

// Run is the raw record of a run.
type Run struct {
	// ID is the run's ID: its UTC start to the second and six random hex
	// digits.
	ID        string
	StartedAt time.Time
	// Origin is the monotonic instant request times are offsets from (the
	// journal keeps offsets, so a recovered record has the same ones), and
	// the one wall reading the run's wall times are taken from (Wall).
	Origin   time.Time
	Optional bool
	Requests []*Request
	// Interrupted is set when the run ended early on a signal (or the
	// runner stopped); Interruption says how.
	Interrupted  bool
	Interruption string
	// BaseURL is the server's URL (whether it is on loopback decides a
	// rule of the protocol).
	BaseURL string
	// Aborted says why the rest of the run was skipped, if it was.
	Aborted string
	// Refusal is set when the engine's answer to the warm-up refused a
	// profile setting, which stopped the run there: the refusal in the
	// run's words (dialect.Refusal's Text).
	Refusal string
	Server  Server
	// Power is the GPUs' power trace while the run went: readings from
	// before the warm-up (the idle baseline) to the run's last end, or why
	// there are none. nil: the run was not sampled (a recovered run: the
	// readings lived in the runner's memory only).
	Power *PowerTrace
}

// PowerTrace is what the power sampler gathered.
type PowerTrace struct {
	Source   string
	Interval time.Duration
	GPUs     []int
	Samples  []PowerSample
	// Stopped says why the source ended before it was stopped ("" when it
	// ran to the end).
	Stopped string
	// Dropped counts the readings left out, by reason, in
	// power.DropReasons' order (none: every reading was kept).
	Dropped []contract.DroppedReadings
	// NotMeasured says why there is no source at all ("" when there is).
	NotMeasured string
}

// PowerSample is one GPU's draw, stamped with the clock when it arrived.
type PowerSample struct {
	At  time.Time
	GPU int
	W   float64
}

// Wall is the UTC wall time of t, an instant on the run's monotonic clock:
// the origin's wall reading plus the monotonic time since it. The wall
// clock is read once because it is stepped while runs go (NTP at boot,
// chrony's makestep, a virtual machine's time agent: this machine's ran
// 0.5 % ahead of its monotonic clock one morning), which the monotonic
// clock is not: wall times read one by one would disagree with the offsets
// and durations taken from the same instants, or fall before started_at,
// and a strict reader could not tell that from an edited folder.
func (r *Run) Wall(t time.Time) time.Time { return r.Origin.Add(t.Sub(r.Origin)).UTC() }

// Server is what the server says about itself before the run.
type Server struct {
	Props     json.RawMessage
	PropsErr  string
	Models    json.RawMessage
	ModelsErr string
	Health    int
	// HealthRaw is /health's JSON answer (nil when it had none).
	HealthRaw json.RawMessage
	// Refused lists the probes that answered 401 or 403: the server wants
	// an API key strata did not send, or not the one it sent.
	Refused []string
	// BuildInfo is the engine's own version (dialect.EngineVersion), from
	// VersionSource.
	BuildInfo string
	// Dialect is the identified engine (dialect.Of turns it into the
	// engine table's entry).
	Dialect contract.Dialect
	// SimulatorVersion is the simulator's own version when the server is
	// strata's simulator.
	SimulatorVersion string
	Template         string
	// NoTemplate says why Template is "" where the engine's own route
	// says more than that /props has none (Ollama's /api/show).
	NoTemplate string
	ModelPath  string
	// ModelPathNote says where ModelPath came from, when not /props.
	ModelPathNote string
	ModelAlias    string
	Slots         *int64
	ContextSize   *int64
	// VersionSource says where BuildInfo came from.
	VersionSource string
	// SlotsRaw and StatusRaw are /slots and /v1/status before the run
	// (nil when absent).
	SlotsRaw  json.RawMessage
	StatusRaw json.RawMessage
	// The other engines' identifying answers: GET /version, /api/version,
	// /server_info, /api/v0/models, /.well-known/serviceinfo and TabbyAPI's
	// /v1/sampling/overrides (nil when absent), and the Server and
	// X-Strata-Simulator headers of /health.
	VersionRaw, OllamaVersionRaw, ServerInfoRaw, LMStudioRaw json.RawMessage
	ServiceInfoRaw, SamplingOverridesRaw, OllamaShowRaw      json.RawMessage
	ServerHeader, SimulatorHeader                            string
}

// Evidence is what the server served about itself, as the dialect reads
// it (and config.json keeps it).
func (s Server) Evidence() contract.ServerEvidence {
	return contract.ServerEvidence{Health: s.HealthRaw, Props: s.Props, Status: s.StatusRaw, Models: s.Models, Version: s.VersionRaw,
		OllamaVersion: s.OllamaVersionRaw, ServerInfo: s.ServerInfoRaw, LMStudioModels: s.LMStudioRaw,
		ServiceInfo: s.ServiceInfoRaw, SamplingOverrides: s.SamplingOverridesRaw, OllamaShow: s.OllamaShowRaw,
		ServerHeader: s.ServerHeader, SimulatorHeader: s.SimulatorHeader}
}

// SetEvidence keeps what the server served about itself (the inverse of
// Evidence).
func (s *Server) SetEvidence(ev contract.ServerEvidence) {
	s.HealthRaw, s.Props, s.StatusRaw, s.Models, s.VersionRaw = ev.Health, ev.Props, ev.Status, ev.Models, ev.Version
	s.OllamaVersionRaw, s.ServerInfoRaw, s.LMStudioRaw = ev.OllamaVersion, ev.ServerInfo, ev.LMStudioModels
	s.ServiceInfoRaw, s.SamplingOverridesRaw, s.OllamaShowRaw = ev.ServiceInfo, ev.SamplingOverrides, ev.OllamaShow
	s.ServerHeader, s.SimulatorHeader = ev.ServerHeader, ev.SimulatorHeader
}

// Identity is what the operator declares (flags or the profile's
// [identity] table). A nil value was not declared.
type Identity struct {
	Track             string
	TrackNotes        *string
	ModelRevision     *string
	SourceRevision    *string
	TokenizerRevision *string
	Quantization      *string
	CustomPack        *string
	Background        []string // nil: not declared; empty: declared none
	BuildOptions      []string // nil: not declared
	Command           string
}

// Facts are the machine and install facts gathered before the run. Each
// nil value carries its reason in Missing (absolute JSON Pointers).
type Facts struct {
	// Protocol is the protocol the run followed (its bundle was verified
	// for it).
	Protocol     protocol.Definition
	Hardware     contract.Hardware
	OS           *contract.NameVersion
	Drivers      []contract.NameVersion
	Runtime      []contract.NameVersion
	StrataCommit *string
	RunnerCommit *string
	BuildKind    *string
	ModelFiles   []contract.ModelFile
	EngineLog    []byte // nil when the runner did not start the engine
	// Engine is what the runner could see of the engine process: the
	// arguments and environment of the command it started (or of the local
	// process serving the port); nil Args when it could see nothing.
	Engine EngineView
	// StrataFile is the config file a Strata server's command line names,
	// as read (nil: not read; StrataFileErr says why when it was looked
	// for).
	StrataFile    *StrataFile
	StrataFileErr string
	EngineConfig  map[string]any
	Extensions    contract.Extensions
	Missing       map[string]string
}

// EngineView is what the runner can see of the engine process: its
// arguments and environment, and where they were read. A nil Args means the
// runner cannot see the command line at all.
type EngineView struct {
	Args []string
	Env  []string
	// EnvUnreadable says why the environment could not be read ("" when it
	// was, or when Args is nil too).
	EnvUnreadable string
	// Where names the source: "the profile's command line and environment",
	// "/proc/<pid>/cmdline of the process listening on port 8080".
	Where string
}

// StrataFile is what strata reads of a Strata config file
// (dialect.ParseStrataFile).
type StrataFile struct {
	// Name is the file's base name (the result never holds a local path).
	Name string
	Exe  string   `json:"exe"`
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
}
