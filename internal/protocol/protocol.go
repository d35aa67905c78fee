// Package protocol holds the Strata standard benchmark protocol as data: its
// identity, the profile's sampling settings and template kwargs, the stages
// with their cases, repetitions, caps and seeds, the request IDs, and the
// thresholds the runner applies. It is the single source of truth: every
// other package reads these values from here, and changing one of them is a
// new protocol ID (see ../shared/spec/BENCHMARK_PROTOCOL.md).
package protocol

import (
	"fmt"
	"net"
	"net/url"
	"time"
)

// The result format every protocol writes.
const (
	ResultFormat  = "strata-standard-benchmark"
	SchemaVersion = 1

	// BundleName is the folder of the spec's bundle under a Strata
	// checkout's bench/prompts.
	BundleName = "standard-v1"
)

// RequestTimeout is the fixed wall-clock limit per request, counted from
// dispatch (queueing included). It is a safeguard, not a suite deadline.
const RequestTimeout = 1800 * time.Second

// LengthTolerancePercent is the 2 % rule: the measured input_tokens of the 4K
// and 16K cases must stay within this percentage of their targets.
// LengthRule applies it and says it; a bundle's build.json records it.
const LengthTolerancePercent = 2

// DecodeCountSlack is the cross-check of an engine's decode count against
// its own rate: predicted_n agrees with predicted_per_second x decode_s
// when they differ by at most DecodeCountSlackPerSecond x decode_s +
// DecodeCountSlack tokens (the engine rounds its rate to 0.1 tokens/s).
const (
	DecodeCountSlackPerSecond = 0.05
	DecodeCountSlack          = 1
)

// FinishStatus is what a finish reason means for a request that ended
// normally: stop and tool_calls end it completed, length (the cap) ends it
// truncated. known is false for any other reason, which fails the request.
func FinishStatus(reason string) (truncated, known bool) {
	switch reason {
	case "stop", "tool_calls":
		return false, true
	case "length":
		return true, true
	}
	return false, false
}

// CacheBoundaryAllowance is the number of tokens cached_tokens may exceed a
// request's max_shared_prefix_tokens by (merges at the prefix boundary)
// before the user payload counts as read from the cache.
const CacheBoundaryAllowance = 8

// Sampling is the profile's required sampling settings, in the order the
// result contract lists them.
type Sampling struct {
	Temperature       float64 `json:"temperature"`
	TopP              float64 `json:"top_p"`
	TopK              int     `json:"top_k"`
	MinP              float64 `json:"min_p"`
	PresencePenalty   float64 `json:"presence_penalty"`
	RepetitionPenalty float64 `json:"repetition_penalty"`
	ReasoningEffort   string  `json:"reasoning_effort"`
}

// TemplateKwargs are the chat_template_kwargs every request carries.
type TemplateKwargs struct {
	EnableThinking   bool `json:"enable_thinking"`
	PreserveThinking bool `json:"preserve_thinking"`
}

// ProfileSampling returns the Qwen model-card defaults the profile requires.
func ProfileSampling() Sampling {
	return Sampling{
		Temperature:       1.0,
		TopP:              0.95,
		TopK:              20,
		MinP:              0.0,
		PresencePenalty:   0.0,
		RepetitionPenalty: 1.0,
		ReasoningEffort:   "xhigh",
	}
}

// ProfileTemplateKwargs returns the thinking flags the profile requires.
func ProfileTemplateKwargs() TemplateKwargs {
	return TemplateKwargs{EnableThinking: true, PreserveThinking: true}
}

// ReasoningBudgetTokens is sent with every request: 0 means "no custom
// budget" in Strata's server (llama.cpp ignores the field on the chat
// endpoint).
const ReasoningBudgetTokens = 0

// ToolChoice is the tool_choice of the tool-call cases.
const ToolChoice = "auto"

// ToolDescription is the description of every mock function.
const ToolDescription = "Synthetic benchmark lookup; no external action is performed."

// Phase names a stage of the run.
type Phase string

// The stages.
const (
	PhaseWarmup      Phase = "warmup"
	PhasePerformance Phase = "performance"
	PhaseSanity      Phase = "sanity"
	PhaseConcurrency Phase = "concurrency"
)

// Phases lists the stages in the order they run.
var phases = [...]Phase{PhaseWarmup, PhasePerformance, PhaseSanity, PhaseConcurrency}

// Phases returns the stages in run order.
func Phases() []Phase { return append([]Phase(nil), phases[:]...) }

// Category is a sanity-check category.
type Category string

// The sanity categories.
const (
	CategoryInstruction Category = "instruction"
	CategoryRetrieval   Category = "retrieval"
	CategoryToolCall    Category = "tool_call"
)

// Categories lists the sanity categories in report order.
func Categories() []Category {
	return []Category{CategoryInstruction, CategoryRetrieval, CategoryToolCall}
}

// Case IDs.
const (
	CaseWarmup     = "warmup"
	CaseShort      = "short"
	CasePrompt4K   = "prompt-4k"
	CasePrompt16K  = "prompt-16k"
	CaseShortBurst = "short-burst"
)

// Caps per stage (max_tokens; they include reasoning and final output).
const (
	WarmupCap      = 128
	PerformanceCap = 512
	SanityCap      = 2048
	ConcurrencyCap = 512
)

// Repetitions and rounds.
const (
	PerformanceRepetitions = 3
	ConcurrencyRounds      = 3
	ConcurrencyClients     = 4
)

// Queues reports whether a concurrency round queues on a server of slots
// slots: its ConcurrencyClients requests, released together, wait for
// one another on fewer slots, and that is never four-way parallel
// decoding ("four clients may queue on a server with fewer than four
// slots").
func Queues(slots int64) bool { return slots < ConcurrencyClients }

// PerformanceCases are the performance cases in the order each repetition
// sends them.
func PerformanceCases() []string { return []string{CaseShort, CasePrompt4K, CasePrompt16K} }

// SanityCases are the twelve sanity IDs in run order.
func SanityCases() []string {
	return []string{"I1", "I2", "I3", "I4", "R1", "R2", "R3", "R4", "T1", "T2", "T3", "T4"}
}

// SanityCategory returns the category of a sanity case ID.
func SanityCategory(caseID string) (Category, error) {
	if len(caseID) == 2 {
		switch caseID[0] {
		case 'I':
			return CategoryInstruction, nil
		case 'R':
			return CategoryRetrieval, nil
		case 'T':
			return CategoryToolCall, nil
		}
	}
	return "", fmt.Errorf("unknown sanity case %q", caseID)
}

// TargetTokens is the target input length of a long performance prompt
// (and of the retrieval cases built from it), in tokens.
func TargetTokens(caseID string) (int, bool) {
	switch caseID {
	case CasePrompt4K:
		return 4096, true
	case CasePrompt16K:
		return 16384, true
	}
	return 0, false
}

// Length is the 2 % rule's verdict on one prompt.
type Length struct {
	// Within is true when the prompt's tokens are within
	// LengthTolerancePercent of its target.
	Within bool
	// DeviationPercent is (tokens − target) / target × 100.
	DeviationPercent float64
	// Why is "" within the rule, else the rule's sentence ("not within 2%
	// of 4096"), which a caller completes with whose count it is.
	Why string
}

// LengthRule applies the 2 % rule to a prompt of tokens whose target
// (TargetTokens of the case it was built for) is target. Integer
// arithmetic keeps the boundary exact: |tokens-target|*100 <= 2*target.
func LengthRule(tokens, target int) Length {
	d := tokens - target
	v := Length{DeviationPercent: float64(d) * 100 / float64(target)}
	if d < 0 {
		d = -d
	}
	if v.Within = d*100 <= LengthTolerancePercent*target; !v.Within {
		v.Why = fmt.Sprintf("not within %d%% of %d", LengthTolerancePercent, target)
	}
	return v
}

// LengthTolerance is the 2 % rule's threshold as a report writes it
// ("2 %").
func LengthTolerance() string { return fmt.Sprintf("%d %%", LengthTolerancePercent) }

// Request is one scheduled request of the protocol.
type Request struct {
	ID          string
	Phase       Phase
	CaseID      string
	Repetition  int // one-based; the round for concurrency
	Round       int // 1..3 for concurrency, 0 otherwise
	Client      int // 1..4 for concurrency, 0 otherwise
	Seed        int
	Cap         int
	Concurrency int
}

// WarmupID is the warm-up's request ID.
func WarmupID() string { return "warmup" }

// PerformanceID is the request ID of a performance case's repetition.
func PerformanceID(caseID string, rep int) string {
	return fmt.Sprintf("performance-%s-r%d", caseID, rep)
}

// SanityID is the request ID of a sanity case.
func SanityID(caseID string) string { return "sanity-" + caseID }

// ConcurrencyID is the request ID of a client of a concurrency round.
func ConcurrencyID(round, client int) string {
	return fmt.Sprintf("concurrency-r%d-c%d", round, client)
}

// ConcurrencySeed is the seed of client j (1..4) in round r (1..3).
func ConcurrencySeed(round, client int) int { return 4*(round-1) + client }

// Lookup returns the scheduled request with this ID, required or optional.
func Lookup(id string) (Request, bool) {
	for _, r := range Schedule(true) {
		if r.ID == id {
			return r, true
		}
	}
	return Request{}, false
}

// Schedule returns the scheduled requests in run order: the 22 required ones
// and, when optional is true, the 12 of the concurrency stage.
func Schedule(optional bool) []Request {
	out := []Request{{
		ID: WarmupID(), Phase: PhaseWarmup, CaseID: CaseWarmup, Repetition: 1,
		Seed: 1, Cap: WarmupCap, Concurrency: 1,
	}}
	for rep := 1; rep <= PerformanceRepetitions; rep++ {
		for _, c := range PerformanceCases() {
			out = append(out, Request{
				ID: PerformanceID(c, rep), Phase: PhasePerformance, CaseID: c, Repetition: rep,
				Seed: rep, Cap: PerformanceCap, Concurrency: 1,
			})
		}
	}
	for _, c := range SanityCases() {
		out = append(out, Request{
			ID: SanityID(c), Phase: PhaseSanity, CaseID: c, Repetition: 1,
			Seed: 1, Cap: SanityCap, Concurrency: 1,
		})
	}
	if optional {
		for r := 1; r <= ConcurrencyRounds; r++ {
			for j := 1; j <= ConcurrencyClients; j++ {
				out = append(out, Request{
					ID: ConcurrencyID(r, j), Phase: PhaseConcurrency, CaseID: CaseShortBurst,
					Repetition: r, Round: r, Client: j, Seed: ConcurrencySeed(r, j),
					Cap: ConcurrencyCap, Concurrency: ConcurrencyClients,
				})
			}
		}
	}
	return out
}

// PlannedCount is the planned number of requests of a phase.
func PlannedCount(p Phase, optional bool) int {
	n := 0
	for _, r := range Schedule(optional) {
		if r.Phase == p {
			n++
		}
	}
	return n
}

// IsLoopback reports whether host (a name or an address, without a port)
// is this machine's loopback: the protocol measures "through a dedicated
// server on the inference machine, using loopback HTTP". It is the one
// loopback rule (runs, profiles, the simulator and the site's preview).
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Remote is the remote-server rule: a server that is not on loopback gives
// a nonconforming result, because standard latency is a loopback
// measurement. It reports whether the server at base (its URL) is such a
// server, and the sentence that says so.
func Remote(base string) (bool, string) {
	u, err := url.Parse(base)
	if err != nil {
		return true, "the server URL cannot be parsed: " + err.Error()
	}
	host := u.Hostname()
	if IsLoopback(host) {
		return false, ""
	}
	return true, fmt.Sprintf("the server (%s) is not on loopback; standard latency is a loopback measurement", host)
}

// The configuration tracks: "default" for an unmodified release's
// setup-generated settings, "custom" for anything else ("never merge these
// tracks into one headline result").
const (
	TrackDefault = "default"
	TrackCustom  = "custom"
)

// ValidTrack reports whether t is one of the tracks, and when it is not,
// the sentence that says which are.
func ValidTrack(t string) (bool, string) {
	if t == TrackDefault || t == TrackCustom {
		return true, ""
	}
	return false, fmt.Sprintf("expected %q or %q", TrackDefault, TrackCustom)
}
