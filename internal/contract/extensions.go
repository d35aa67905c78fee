package contract

import "github.com/strata-bench/strata/internal/dialect"

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
	ModelHashing   *ModelHashing     `json:"model_hashing,omitempty"`
	ModelCheck     *ModelCheck       `json:"model_check,omitempty"`
	GGUF           *GGUF             `json:"gguf,omitempty"`
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
	Dialect         dialect.Dialect     `json:"dialect"`
	ReasoningBudget dialect.Budget      `json:"reasoning_budget"`
	BudgetCheck     dialect.BudgetCheck `json:"budget_check"`
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
}

// LocalProcess is the process found listening on the server's port.
type LocalProcess struct {
	FoundBy string `json:"found_by"`
	Program string `json:"program"`
}

// ServedBefore is what an already-serving engine says of its past work.
type ServedBefore struct {
	// Answered is the number of requests answered before the run, or nil
	// when the engine does not say (Reason says why).
	Answered *int64             `json:"requests_answered,omitempty"`
	Reason   string             `json:"reason,omitempty"`
	Evidence map[string]float64 `json:"metrics"`
	// Ignored are the /metrics samples left out of Evidence, each with why:
	// a value JSON cannot hold (a Prometheus client writes NaN for an empty
	// summary's quantiles).
	Ignored []string `json:"ignored,omitempty"`
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
