package contract

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Extensions is results.json's extensions: what strata records beyond the
// contract, one typed block each. Assembly writes it; validate, report,
// the site, submit and compare read it through this type and nothing else
// (the JSON Schema holds its shape, field by field). A block strata did
// not gather is absent.
type Extensions struct {
	// StatusReasons are the reasons for the run's status, with their kinds.
	StatusReasons StatusReasons `json:"status_reasons"`
	Fixtures      *FixturesInfo `json:"fixtures,omitempty"`
	// Limitations are the report's standing caveats for this run.
	Limitations   []string       `json:"limitations,omitempty"`
	EngineDialect *EngineDialect `json:"engine_dialect,omitempty"`
	Thinking      *Thinking      `json:"thinking,omitempty"`
	// CacheReuse lists the requests left out of speed summaries because
	// their user payload came from the cache.
	CacheReuse    []CacheReuse     `json:"cache_reuse,omitempty"`
	SettingsCheck *SettingsSummary `json:"settings_check,omitempty"`
	// Aborted says why the rest of the run was skipped.
	Aborted   string     `json:"aborted,omitempty"`
	Recovered *Recovered `json:"recovered,omitempty"`
	Preflight *Preflight `json:"preflight,omitempty"`
	Engine    *Engine    `json:"engine,omitempty"`
	Install   *Install   `json:"install,omitempty"`
	// MachineSources names where each machine fact came from.
	MachineSources map[string]string `json:"machine_sources,omitempty"`
	// SelectedDevices are the GPUs the engine was told to use (the spec's
	// "selected device indices"), tied to hardware.gpus.
	SelectedDevices *SelectedDevices `json:"selected_devices,omitempty"`
	ModelHashing    *ModelHashing    `json:"model_hashing,omitempty"`
	ModelCheck      *ModelCheck      `json:"model_check,omitempty"`
	GGUF            *GGUF            `json:"gguf,omitempty"`
	Energy          *Energy          `json:"energy,omitempty"`
	// EngineConfig says where each configuration value came from, and what
	// the engine itself reported of its configuration.
	EngineConfig *EngineConfig `json:"engine_config,omitempty"`
}

// EngineConfig says where the configuration's values came from: what the
// engine reported (its routes), what it was given (its command line and
// environment) and what strata inferred, each named as such.
type EngineConfig struct {
	// Sources names, per configuration field strata filled
	// (context_tokens, server_capacity, kv_cache, …), where its values
	// were read.
	Sources map[string]string `json:"sources"`
	// Reported are the engine's own answers about its configuration, as it
	// sent them (numbers as numbers), by route.
	Reported []EngineReport `json:"reported"`
	// Given is what the engine process was given; null when the runner
	// could not see it (missing says why).
	Given *EngineGiven `json:"given"`
}

// EngineReport is one route's answer about the engine's configuration.
type EngineReport struct {
	Source string          `json:"source"`
	What   string          `json:"what"`
	Values json.RawMessage `json:"values"`
}

// EngineGiven is the engine process's command line and, for llama.cpp's
// server, the LLAMA_ARG_* variables of its environment.
type EngineGiven struct {
	From        string `json:"from"`
	CommandLine string `json:"command_line"`
	// LlamaArgEnv are the LLAMA_ARG_* variables (absent: not a llama.cpp
	// engine, or its environment could not be read: EnvNote says why).
	LlamaArgEnv map[string]string `json:"llama_arg_env,omitempty"`
	EnvNote     string            `json:"env_note,omitempty"`
}

// StatusReason is one reason for a run's status: the rule (Kind), the
// request it is about ("" for the run) and the sentence the report shows.
type StatusReason struct {
	Kind    ReasonKind `json:"kind"`
	Request string     `json:"request,omitempty"`
	Text    string     `json:"text"`
}

// StatusReasons are a run's reasons, nonconforming and partial.
type StatusReasons struct {
	Nonconforming []StatusReason `json:"nonconforming"`
	Partial       []StatusReason `json:"partial"`
}

// Texts are the sentences of reasons.
func Texts(rs []StatusReason) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Text)
	}
	return out
}

// FixturesInfo names the bundle and what each request may take from the
// cache.
type FixturesInfo struct {
	Bundle                string         `json:"bundle"`
	MaxSharedPrefixTokens map[string]int `json:"max_shared_prefix_tokens"`
}

// EngineDialect is the identified engine and how the reasoning budget was
// said to it.
type EngineDialect struct {
	Dialect         Dialect     `json:"dialect"`
	ReasoningBudget Budget      `json:"reasoning_budget"`
	BudgetCheck     BudgetCheck `json:"budget_check"`
	// SettingNames maps a protocol setting to the engine's own name for it.
	SettingNames map[string]string `json:"setting_names"`
}

// Thinking is the evidence that thinking ran: per dispatched request,
// whether any nonempty reasoning arrived.
type Thinking struct {
	EnableThinking   bool     `json:"enable_thinking"`
	Dispatched       int      `json:"requests_dispatched"`
	WithReasoning    int      `json:"requests_with_reasoning"`
	WithoutReasoning []string `json:"requests_without_reasoning"`
	Source           string   `json:"source"`
}

// CacheReuse is one request whose user payload came from the cache.
type CacheReuse struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
}

// SettingsSummary is the resolved-settings check over the run.
type SettingsSummary struct {
	Source            string   `json:"source"`
	Checked           int      `json:"requests_checked"`
	Revealed          int      `json:"requests_revealed"`
	Mismatches        []string `json:"mismatches"`
	NotRevealedReason string   `json:"not_revealed_reason,omitempty"`
}

// Recovered marks a run recovered from its journal.
type Recovered struct {
	From             string `json:"from"`
	FinishedRequests int    `json:"finished_requests"`
	TornLastLine     bool   `json:"torn_last_line"`
	Note             string `json:"note"`
}

// Engine is what the runner knew of the engine process.
type Engine struct {
	URL             string        `json:"url"`
	StartedByRunner bool          `json:"started_by_runner"`
	Profile         string        `json:"profile,omitempty"`
	LocalProcess    *LocalProcess `json:"local_process,omitempty"`
	ServedBeforeRun *ServedBefore `json:"served_before_run,omitempty"`
	// Log is the engine-log artifact's path, or null when the runner kept
	// none (missing says why: it did not start the engine).
	Log *string `json:"log"`
}

// LocalProcess is the process found listening on the server's port.
type LocalProcess struct {
	FoundBy string `json:"found_by"`
	Program string `json:"program"`
}

// NotFreshlyLoaded begins the words for an engine that had answered at
// least one request before the run (ServedBefore's Reason, where the
// engine shows work but no count).
const NotFreshlyLoaded = "not freshly loaded"

// ServedBefore is what an already-serving engine says of its past work.
type ServedBefore struct {
	// Answered is the number of requests answered before the run, or nil
	// when the engine does not say (Reason says why).
	Answered *int64             `json:"requests_answered"`
	Reason   string             `json:"reason,omitempty"`
	Evidence map[string]float64 `json:"metrics"`
	// Ignored are the /metrics samples left out of Evidence, each with why:
	// a value JSON cannot hold (a Prometheus client writes NaN for an empty
	// summary's quantiles).
	Ignored []string `json:"ignored,omitempty"`
}

// SelectedDevices are the device selections the engine ran with and the
// hardware.gpus entries they leave it.
type SelectedDevices struct {
	// Settings are the selections as given, each with where it was read
	// (empty: none was given, so the engine could use every GPU).
	Settings []DeviceSetting `json:"settings"`
	// DeviceIndices are the device_index of the hardware.gpus entries the
	// engine could use, in its own order; null when they cannot be tied
	// (missing says why).
	DeviceIndices []int `json:"device_indices"`
	// MainDeviceIndex is the device_index of the GPU -mg/--main-gpu names
	// (absent without one, or when it cannot be tied: TiedBy says why).
	MainDeviceIndex *int `json:"main_device_index,omitempty"`
	// TiedBy says how each selection was applied to hardware.gpus.
	TiedBy []string `json:"tied_by"`
}

// DeviceSetting is one device selection as the engine was given it.
type DeviceSetting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Install is where the install's commit came from.
type Install struct {
	BuildKind string `json:"build_kind"`
	// CommitFrom is vcs_stamp, commit_file or checkout; CommitSource says
	// it in words.
	CommitFrom   string `json:"commit_from,omitempty"`
	CommitSource string `json:"commit_source,omitempty"`
	NoCommit     string `json:"no_commit,omitempty"`
	// ModuleVersion is the module version the Go toolchain recorded: the
	// version of a `go install …@version` (which carries no commit),
	// "(devel)" for a build in a checkout.
	ModuleVersion string `json:"module_version,omitempty"`
}

// ModelHashing is how the model files were found and hashed.
type ModelHashing struct {
	DurationS         *float64        `json:"duration_s,omitempty"`
	Files             []HashedFile    `json:"files"`
	Problems          []string        `json:"problems"`
	Note              string          `json:"note,omitempty"`
	ModelPathResolved string          `json:"model_path_resolved,omitempty"`
	WhileEngineLoaded *HashedOverlaid `json:"while_engine_loaded,omitempty"`
}

// HashedFile is one model file found.
type HashedFile struct {
	Path       string `json:"path"`
	FoundIn    string `json:"found_in"`
	SizeBytes  int64  `json:"size_bytes"`
	FromCache  bool   `json:"from_cache"`
	ComputedAt string `json:"computed_at,omitempty"`
	Error      string `json:"error,omitempty"`
}

// HashedOverlaid says the files were hashed while the engine loaded them.
type HashedOverlaid struct {
	HashingS    float64 `json:"hashing_s"`
	EngineLoadS float64 `json:"engine_load_s"`
	FilesHashed int     `json:"files_hashed"`
	Note        string  `json:"note"`
}

// Model check states.
const (
	// ModelAdmitted: the metadata names the profile's model, and nothing
	// in it names another.
	ModelAdmitted = "admitted"
	// ModelOther: the metadata names another model, family, tokenizer or
	// vocabulary: the run is nonconforming ("derivative models require a
	// separate profile").
	ModelOther = "another model"
	// ModelUnverified: the metadata cannot tell; the model is what the
	// operator declared, not verified (not nonconforming on that ground).
	ModelUnverified = "declared, not verified"
)

// ModelCheck is the model held to its profile's rule.
type ModelCheck struct {
	State  string   `json:"state"`
	Rule   string   `json:"rule"`
	Found  []string `json:"found"`
	Reason string   `json:"reason"`
}

// GGUF is what the GGUF metadata of the first model file says, each value
// with its source: hints, never the operator-declared fields.
type GGUF struct {
	File     string              `json:"file"`
	Error    string              `json:"error,omitempty"`
	Metadata map[string]GGUFFact `json:"metadata,omitempty"`
}

// GGUFFact is one metadata value (a string, an integer or a list of
// strings) and where it came from.
type GGUFFact struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// String is the fact's value as text ("" when it is not text).
func (g *GGUF) String(name string) string {
	if g == nil {
		return ""
	}
	s, _ := g.Metadata[name].Value.(string)
	return s
}

// Energy is the selected GPUs' energy over the run: where the power
// readings came from and how often, the idle baseline before the warm-up,
// each request's joules over its dispatch→end window with its decode
// tokens per joule, the per-case summaries of both, and each concurrency
// round's joules (a round's energy is never split among its requests).
// The readings themselves are the samples artifact (PowerFile); validate
// derives every number here from it and the request records again.
type Energy struct {
	// Source names the power reader; nil when there is none, and then
	// NotMeasured says why (and missing, at PtrEnergySource).
	Source      *string `json:"source"`
	NotMeasured string  `json:"not_measured,omitempty"`
	// IntervalS is the sampling interval asked of the source.
	IntervalS *float64 `json:"interval_s"`
	// GPUs are the device indices sampled (hardware.gpus').
	GPUs []int `json:"gpus"`
	// Samples is the artifact that holds the readings ("" with none) and
	// SampleCount how many it holds.
	Samples     string `json:"samples,omitempty"`
	SampleCount int    `json:"sample_count"`
	// Stopped says why the source ended before the run did.
	Stopped string `json:"stopped,omitempty"`
	// Dropped counts the readings the sampler left out, by reason (absent
	// when it kept every reading): power.csv holds only the ones kept.
	Dropped []DroppedReadings `json:"dropped,omitempty"`
	// IdleW is the GPUs' mean draw before the warm-up, summed: recorded
	// beside the joules, not subtracted from them.
	IdleW     *float64        `json:"idle_w"`
	Requests  []EnergyRequest `json:"requests"`
	Summaries []Summary       `json:"summaries"`
	Rounds    []EnergyRound   `json:"rounds"`
}

// DroppedReadings is how many readings the sampler left out for one
// reason (a value that is no draw, or more readings than it keeps).
type DroppedReadings struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// DroppedText says how many readings were dropped and why ("" for none):
// "7 power readings dropped (5 not a finite number; 2 a negative draw)".
func DroppedText(dropped []DroppedReadings) string {
	total, parts := 0, make([]string, 0, len(dropped))
	for _, d := range dropped {
		total += d.Count
		parts = append(parts, fmt.Sprintf("%d %s", d.Count, d.Reason))
	}
	if total == 0 {
		return ""
	}
	noun := "readings"
	if total == 1 {
		noun = "reading"
	}
	return fmt.Sprintf("%d power %s dropped (%s)", total, noun, strings.Join(parts, "; "))
}

// EnergyRequest is one dispatched request's energy (concurrency requests
// have their round's instead).
type EnergyRequest struct {
	RequestID            string   `json:"request_id"`
	WindowS              *float64 `json:"window_s"`
	Joules               *float64 `json:"joules"`
	DecodeTokensPerJoule *float64 `json:"decode_tokens_per_joule"`
}

// EnergyRound is one concurrency round's energy, from its first dispatch
// to its last end.
type EnergyRound struct {
	Round                int      `json:"round"`
	WindowS              *float64 `json:"window_s"`
	Joules               *float64 `json:"joules"`
	OutputTokensPerJoule *float64 `json:"output_tokens_per_joule"`
}

// Energy metrics of the per-case summaries.
const (
	MetricJoules               = "joules"
	MetricDecodeTokensPerJoule = "decode_tokens_per_joule"
)

// Summary is the energy summary of a performance case and metric (nil:
// the block has none, or there is no block).
func (e *Energy) Summary(caseID, metric string) *Summary {
	if e == nil {
		return nil
	}
	for i := range e.Summaries {
		if s := &e.Summaries[i]; s.CaseID == caseID && s.Metric == metric {
			return s
		}
	}
	return nil
}

// SourceName is the power reader's name ("" when there is none).
func (e *Energy) SourceName() string {
	if e == nil || e.Source == nil {
		return ""
	}
	return *e.Source
}

// Measured says the block holds readings to compare.
func (e *Energy) Measured() bool { return e != nil && e.NotMeasured == "" && e.SampleCount > 0 }
