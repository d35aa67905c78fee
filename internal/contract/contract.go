// Package contract is the result format of the protocol ("Result
// contract"): the types of results.json, field for field and in the spec's
// order, and the types of outputs.jsonl. A nil pointer or nil slice is a JSON
// null, and every null has a JSON Pointer in Missing saying why.
package contract

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/protocol"
)

// File names in a result folder.
const (
	ResultsFile  = "results.json"
	OutputsFile  = "outputs.jsonl"
	ReadmeFile   = "README.md"
	ConfigFile   = "config.json"
	TemplateFile = "chat_template.jinja"
	EngineLog    = "engine.log"
	// PowerFile is the energy block's samples: one power reading a line.
	PowerFile = "power.csv"
)

// Results is results.json.
type Results struct {
	Format            string        `json:"format"`
	SchemaVersion     int           `json:"schema_version"`
	Protocol          Protocol      `json:"protocol"`
	Run               Run           `json:"run"`
	Hardware          Hardware      `json:"hardware"`
	Software          Software      `json:"software"`
	Model             Model         `json:"model"`
	Configuration     Configuration `json:"configuration"`
	RequestCounts     RequestCounts `json:"request_counts"`
	Requests          []Request     `json:"requests"`
	Summaries         []Summary     `json:"summaries"`
	ConcurrencyRounds []Round       `json:"concurrency_rounds"`
	Quality           Quality       `json:"quality"`
	Artifacts         []Artifact    `json:"artifacts"`
	Missing           Missing       `json:"missing"`
	Extensions        Extensions    `json:"extensions"`
}

// Protocol is results.json's protocol block: which protocol, at which
// commit, with which profile and corpus.
type Protocol struct {
	ID                string  `json:"id"`
	GitCommit         *string `json:"git_commit"`
	Profile           string  `json:"profile"`
	CorpusSHA256      string  `json:"corpus_sha256"`
	ModelCardRevision *string `json:"model_card_revision"`
}

// Run statuses.
const (
	StatusComplete      = "complete"
	StatusPartial       = "partial"
	StatusNonconforming = "nonconforming"
)

// Run is results.json's run block: the run's ID, start, status, durations
// and command.
type Run struct {
	ID                  string   `json:"id"`
	StartedAt           string   `json:"started_at"`
	Status              string   `json:"status"`
	RequiredDurationS   *float64 `json:"required_duration_s"`
	OptionalDurationS   *float64 `json:"optional_duration_s"`
	OptionalConcurrency bool     `json:"optional_concurrency"`
	Command             string   `json:"command"`
}

// Hardware is the inference host's hardware (never a client's).
type Hardware struct {
	GPUs                []GPU     `json:"gpus"`
	CPU                 *string   `json:"cpu"`
	RAMBytes            *int64    `json:"ram_bytes"`
	Storage             []Storage `json:"storage"`
	BackgroundWorkloads []string  `json:"background_workloads"`
}

// GPU is one inference GPU.
type GPU struct {
	DeviceIndex int      `json:"device_index"`
	Name        string   `json:"name"`
	MemoryBytes *int64   `json:"memory_bytes"`
	MemoryKind  *string  `json:"memory_kind"`
	PowerLimitW *float64 `json:"power_limit_w"`
}

// Storage is one storage device.
type Storage struct {
	Kind  *string `json:"kind"`
	Model *string `json:"model"`
	Bus   *string `json:"bus"`
}

// NameVersion is a named component and its version (an OS, a driver, a
// runtime).
type NameVersion struct {
	Name    string  `json:"name"`
	Version *string `json:"version"`
}

// Software is the software that ran: the OS, drivers, runtimes, strata's
// commit and the engine.
type Software struct {
	OS            *NameVersion  `json:"os"`
	Drivers       []NameVersion `json:"drivers"`
	Runtime       []NameVersion `json:"runtime"`
	StrataCommit  *string       `json:"strata_commit"`
	EngineVersion *string       `json:"engine_version"`
	BuildKind     *string       `json:"build_kind"`
	RunnerCommit  *string       `json:"runner_commit"`
	BuildOptions  []string      `json:"build_options"`
}

// ModelFile is one model file by its pack-relative name, with its SHA-256.
type ModelFile struct {
	Path   string  `json:"path"`
	SHA256 *string `json:"sha256"`
}

// Model is the model measured: its ID, revisions, quantization, files and
// pack.
type Model struct {
	ID                *string     `json:"id"`
	Revision          *string     `json:"revision"`
	SourceRevision    *string     `json:"source_revision"`
	Quantization      *string     `json:"quantization"`
	Files             []ModelFile `json:"files"`
	TokenizerRevision *string     `json:"tokenizer_revision"`
	CustomPack        *string     `json:"custom_pack"`
}

// PathSHA is an attached file by its folder-relative path and SHA-256.
type PathSHA struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Configuration objects that mirror engine options keep the engine's own
// names, so they are raw JSON objects (or null).
type Configuration struct {
	Track               string          `json:"track"`
	TrackNotes          *string         `json:"track_notes"`
	ContextTokens       *int64          `json:"context_tokens"`
	ServerCapacity      *int64          `json:"server_capacity"`
	KVCache             json.RawMessage `json:"kv_cache"`
	ExpertCache         json.RawMessage `json:"expert_cache"`
	Offloading          json.RawMessage `json:"offloading"`
	Prefill             json.RawMessage `json:"prefill"`
	MTP                 json.RawMessage `json:"mtp"`
	Calibration         json.RawMessage `json:"calibration"`
	ExperimentalOptions json.RawMessage `json:"experimental_options"`
	Template            *PathSHA        `json:"template"`
	// Sampling is the profile's settings, field for field as
	// internal/protocol defines them.
	Sampling protocol.Sampling `json:"sampling"`
	// ChatTemplateKwargs is what every request body carried in
	// chat_template_kwargs, as sent (SentKwargs): the profile's thinking
	// flags, and its effort where the dialect passes it there too; null
	// when no body carried it.
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
}

// EngineOption returns the field of an engine-option object by its
// contract name, or nil for another name.
func (c *Configuration) EngineOption(name string) *json.RawMessage {
	switch name {
	case "kv_cache":
		return &c.KVCache
	case "expert_cache":
		return &c.ExpertCache
	case "offloading":
		return &c.Offloading
	case "prefill":
		return &c.Prefill
	case "mtp":
		return &c.MTP
	case "calibration":
		return &c.Calibration
	case "experimental_options":
		return &c.ExperimentalOptions
	}
	return nil
}

// EngineOptionObjects names the configuration objects that mirror engine
// options, in contract order.
func EngineOptionObjects() []string {
	return []string{"kv_cache", "expert_cache", "offloading", "prefill", "mtp", "calibration", "experimental_options"}
}

// Counts are one stage's request counts (planned = attempted + skipped;
// attempted = completed + truncated + failed).
type Counts struct {
	Planned   int `json:"planned"`
	Attempted int `json:"attempted"`
	Completed int `json:"completed"`
	Truncated int `json:"truncated"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped"`
}

// RequestCounts are the request counts of every stage.
type RequestCounts struct {
	Warmup      Counts `json:"warmup"`
	Performance Counts `json:"performance"`
	Sanity      Counts `json:"sanity"`
	Concurrency Counts `json:"concurrency"`
}

// Phase returns a pointer to the counts of a phase name.
func (rc *RequestCounts) Phase(p string) *Counts {
	switch p {
	case "warmup":
		return &rc.Warmup
	case "performance":
		return &rc.Performance
	case "sanity":
		return &rc.Sanity
	case "concurrency":
		return &rc.Concurrency
	}
	return nil
}

// Request statuses.
const (
	Completed = "completed"
	Truncated = "truncated"
	Failed    = "failed"
	Skipped   = "skipped"
)

// ErrorInfo is why a request failed or was skipped.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Tokens are a request's token counts (each from its source, or null with a
// reason).
type Tokens struct {
	InputTokens  *int64 `json:"input_tokens"`
	CachedTokens *int64 `json:"cached_tokens"`
	ReadTokens   *int64 `json:"read_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	DecodeTokens *int64 `json:"decode_tokens"`
}

// Timings are a request's engine durations and client latencies, in seconds.
type Timings struct {
	PromptS      *float64 `json:"prompt_s"`
	DecodeS      *float64 `json:"decode_s"`
	TTFTS        *float64 `json:"ttft_s"`
	FirstAnswerS *float64 `json:"first_answer_s"`
	TotalS       *float64 `json:"total_s"`
}

// Metrics are a request's two primary rates, in tokens per second.
type Metrics struct {
	PromptTPS *float64 `json:"prompt_tps"`
	DecodeTPS *float64 `json:"decode_tps"`
}

// Sources name where each count and timer of a request came from.
type Sources struct {
	InputTokens   *string `json:"input_tokens"`
	CachedTokens  *string `json:"cached_tokens"`
	ReadTokens    *string `json:"read_tokens"`
	OutputTokens  *string `json:"output_tokens"`
	DecodeTokens  *string `json:"decode_tokens"`
	EngineTimings *string `json:"engine_timings"`
	ClientTimings *string `json:"client_timings"`
}

// Evaluation is a sanity request's verdict.
type Evaluation struct {
	Category string `json:"category"`
	Passed   bool   `json:"passed"`
	Reason   string `json:"reason"`
}

// Request is one request record of results.json.
type Request struct {
	ID                  string      `json:"id"`
	Phase               string      `json:"phase"`
	CaseID              string      `json:"case_id"`
	Repetition          int         `json:"repetition"`
	Seed                int         `json:"seed"`
	MaxOutputTokens     int         `json:"max_output_tokens"`
	Concurrency         int         `json:"concurrency"`
	Round               *int        `json:"round"`
	Status              string      `json:"status"`
	FinishReason        *string     `json:"finish_reason"`
	Error               *ErrorInfo  `json:"error"`
	Tokens              Tokens      `json:"tokens"`
	Timings             Timings     `json:"timings"`
	Metrics             Metrics     `json:"metrics"`
	Sources             Sources     `json:"sources"`
	FirstDeltaKind      *string     `json:"first_delta_kind"`
	TokenAccountingNote *string     `json:"token_accounting_note"`
	Evaluation          *Evaluation `json:"evaluation"`
}

// Exclusion is a request left out of a summary, with why.
type Exclusion struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason"`
}

// Summary is one metric of one case: median, minimum, maximum and n, with
// what it includes and excludes.
type Summary struct {
	Phase              string      `json:"phase"`
	CaseID             string      `json:"case_id"`
	Concurrency        int         `json:"concurrency"`
	Metric             string      `json:"metric"`
	Unit               string      `json:"unit"`
	Median             *float64    `json:"median"`
	Min                *float64    `json:"min"`
	Max                *float64    `json:"max"`
	N                  int         `json:"n"`
	IncludedRequestIDs []string    `json:"included_request_ids"`
	Excluded           []Exclusion `json:"excluded"`
}

// Round is one optional concurrency round's aggregate.
type Round struct {
	Round        int      `json:"round"`
	RequestIDs   []string `json:"request_ids"`
	WallS        *float64 `json:"wall_s"`
	OutputTokens *int64   `json:"output_tokens"`
	AggregateTPS *float64 `json:"aggregate_tps"`
	Failed       int      `json:"failed"`
}

// Tally is a passed count over a total.
type Tally struct {
	Passed int `json:"passed"`
	Total  int `json:"total"`
}

// Categories are the sanity tallies by category.
type Categories struct {
	Instruction Tally `json:"instruction"`
	Retrieval   Tally `json:"retrieval"`
	ToolCall    Tally `json:"tool_call"`
}

// Quality is the sanity score: passed of 12, and by category.
type Quality struct {
	Passed     int        `json:"passed"`
	Total      int        `json:"total"`
	Categories Categories `json:"categories"`
}

// Artifact kinds.
const (
	ArtifactConfig     = "config"
	ArtifactEngineLog  = "engine_log"
	ArtifactOutputs    = "outputs"
	ArtifactProvenance = "provenance"
)

// Artifact is one evidence file of the folder, by kind, path and SHA-256.
type Artifact struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Missing maps JSON Pointers of null values to the reason each is null.
type Missing map[string]string

// Add records why the value at pointer is null. The first reason given
// stays: the code nearest the evidence says it first and most precisely
// (the install's own reason for a missing commit), and a later, generic
// sentence never replaces it.
func (m Missing) Add(pointer, reason string) {
	if _, ok := m[pointer]; !ok {
		m[pointer] = reason
	}
}

// pointerEscaper escapes a JSON Pointer token (RFC 6901); it is immutable
// once built.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// Pointer builds a JSON Pointer from reference tokens, escaping ~ and /.
func Pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		switch v := t.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			b.WriteString(pointerEscaper.Replace(v))
		}
	}
	return b.String()
}

// SortedKeys returns the pointers in order (for stable reports).
func (m Missing) SortedKeys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Metric names and units of the summaries.
const (
	MetricPromptTPS   = "prompt_tps"
	MetricDecodeTPS   = "decode_tps"
	MetricTTFT        = "ttft_s"
	MetricFirstAnswer = "first_answer_s"
	MetricTotal       = "total_s"
	UnitRate          = "tokens/s"
	UnitSeconds       = "s"
)

// SummaryMetrics lists the five summary metrics in report order.
func SummaryMetrics() []string {
	return []string{MetricPromptTPS, MetricDecodeTPS, MetricTTFT, MetricFirstAnswer, MetricTotal}
}

// Unit returns a metric's unit.
func Unit(metric string) string {
	if strings.HasSuffix(metric, "_tps") {
		return UnitRate
	}
	return UnitSeconds
}

// Output is one line of outputs.jsonl: the evidence of one request.
type Output struct {
	RequestID    string          `json:"request_id"`
	Status       string          `json:"status"`
	Request      json.RawMessage `json:"request"` // the exact body sent; null when skipped
	Answer       *string         `json:"answer"`
	Reasoning    *string         `json:"reasoning"`
	ToolCalls    []OutputCall    `json:"tool_calls"`
	FinishReason *string         `json:"finish_reason"`
	HTTPStatus   *int            `json:"http_status"`
	Usage        json.RawMessage `json:"usage"`
	Timings      json.RawMessage `json:"timings"`
	Error        *ErrorInfo      `json:"error"`
	ErrorBody    *string         `json:"error_body,omitempty"`
	Malformed    []string        `json:"malformed_lines,omitempty"`
	// DispatchedAt is the UTC wall time of dispatch; OffsetS the
	// dispatch's offset (monotonic) from the run's first dispatch, the
	// warm-up's (the run's durations are rebuilt from it and the events);
	// RoundOffsetS its offset from the first dispatch of its concurrency
	// round.
	DispatchedAt   *string  `json:"dispatched_at"`
	OffsetS        *float64 `json:"offset_s,omitempty"`
	RoundOffsetS   *float64 `json:"round_offset_s,omitempty"`
	FirstDeltaKind *string  `json:"first_delta_kind"`
	// Events are [seconds since dispatch, kind], dispatch at offset zero.
	Events json.RawMessage `json:"events"`
	// SettingsCheck is what the server revealed of the resolved settings.
	SettingsCheck *SettingsCheck `json:"settings_check,omitempty"`
	SkipReason    *string        `json:"skip_reason,omitempty"`
}

// SentKwargs is the chat_template_kwargs object of a request body as it
// was sent (nil: the body carries none, or there is no body).
func SentKwargs(body json.RawMessage) json.RawMessage {
	var b struct {
		Kwargs json.RawMessage `json:"chat_template_kwargs"`
	}
	if json.Unmarshal(body, &b) != nil || string(b.Kwargs) == "null" {
		return nil
	}
	return b.Kwargs
}

// SettingsCheck is what the server revealed of the settings it resolved for
// a request (llama.cpp's /slots keeps the last task's params per slot), and
// where they differ from what was sent.
type SettingsCheck struct {
	Source string `json:"source"`
	// Revealed is false when the server shows nothing; Reason says why.
	Revealed bool   `json:"revealed"`
	Reason   string `json:"reason,omitempty"`
	Slot     *int   `json:"slot,omitempty"`
	Task     *int64 `json:"id_task,omitempty"`
	// Seen holds the values the server showed by setting name, or, for a
	// concurrency round checked at once, by request ID and setting name.
	Seen       map[string]any `json:"seen,omitempty"`
	Mismatches []string       `json:"mismatches,omitempty"`
}

// SeenFor is what the check saw of one request's settings (nil: nothing).
func (c *SettingsCheck) SeenFor(id string) map[string]float64 {
	if c == nil || !c.Revealed {
		return nil
	}
	src := c.Seen
	if per, ok := c.Seen[id].(map[string]any); ok {
		src = per
	} else if _, keyed := c.Seen[id]; !keyed {
		for _, v := range c.Seen {
			if _, nested := v.(map[string]any); nested {
				return nil // a round's check that has nothing of this request
			}
		}
	}
	out := map[string]float64{}
	for k, v := range src {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// OutputCall is a structured tool call in outputs.jsonl.
type OutputCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// GPULabel names a result's GPUs for titles and tables: "NAME", "2x NAME",
// or "unknown GPU".
func (r *Results) GPULabel() string {
	switch len(r.Hardware.GPUs) {
	case 0:
		return "unknown GPU"
	case 1:
		return r.Hardware.GPUs[0].Name
	}
	return fmt.Sprintf("%dx %s", len(r.Hardware.GPUs), r.Hardware.GPUs[0].Name)
}

// Summary returns the summary of a phase, case and metric, or nil.
func (r *Results) Summary(phase, caseID, metric string) *Summary {
	for i := range r.Summaries {
		s := &r.Summaries[i]
		if s.Phase == phase && s.CaseID == caseID && s.Metric == metric {
			return s
		}
	}
	return nil
}
