// Package pilot gathers the evidence the spec's activation checklist asks
// for ("The draft becomes final only after the measured pilot in the
// activation checklist") from result folders that validation has already
// checked: per folder the machine, engine, status, durations, capped
// requests, measured prompt lengths against the 2 % rule, the template
// check, sanity outcomes and failures; across folders the sanity outcomes
// per case and the failures by kind; and the checklist item by item, each
// shown by the folders that show it or left open. It reads only what a
// valid folder records: an invalid folder is listed with its violations
// and is never evidence, and an item no folder shows stays open.
//
// The JSON form (Report) is a stable shape, "strata-pilot-evidence"
// version 1; the README's section on `strata bench pilot` documents it.
package pilot

import (
	"fmt"
	"slices"
	"sort"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/report"
	"github.com/strata-bench/strata/internal/validate"
)

// The JSON form's name and version: a consumer rejects other versions.
const (
	Format  = "strata-pilot-evidence"
	Version = 1
)

// Input is one folder as the command validated it.
type Input struct {
	// Path is the folder as the user named it (what the output shows).
	Path string
	// Validation is the validator's outcome; nil when Err is set.
	Validation *validate.Validation
	// Err says why the folder could not be validated at all (its bundle
	// is not found, results.json cannot be opened).
	Err error
	// Bundle is the folder's protocol bundle (the frozen prompt lengths
	// and caps the context check needs).
	Bundle *fixtures.Bundle
}

// EnergyReader is the seam for energy per request:
// it reads a folder's energy summaries per case. The pilot shows energy
// only for a folder for which it returns any; nil reads none. It lives
// here, not in the runner or the probe, so the energy work fills it in
// once results carry energy, without the pilot guessing its shape.
type EnergyReader func(*contract.Results) []CaseEnergy

// CaseEnergy is one case's energy as the pilot shows it.
type CaseEnergy struct {
	Phase  string `json:"phase"`
	CaseID string `json:"case_id"`
	// Source names the power reading (NVML, nvidia-smi, ...).
	Source string `json:"source"`
	// Joules per request (per round for concurrency): median, min, max, n.
	MedianJ *float64 `json:"median_j"`
	MinJ    *float64 `json:"min_j"`
	MaxJ    *float64 `json:"max_j"`
	N       int      `json:"n"`
	// DecodeTokensPerJ is the median decode tokens per joule, where the
	// engine's counts exist.
	DecodeTokensPerJ *float64 `json:"decode_tokens_per_j"`
	// Note says why a value is null ("not measured: ...").
	Note string `json:"note,omitempty"`
}

// Options shape a report.
type Options struct {
	Energy EnergyReader
}

// Report is the whole pilot evidence.
type Report struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Folders []Folder `json:"folders"`
	// Checklists is one checklist per protocol ID among the valid folders:
	// evidence for one protocol is never evidence for another.
	Checklists []Checklist `json:"checklists"`
	// Sanity and Failures are across the valid folders.
	Sanity   []SanityCase    `json:"sanity"`
	Failures []FailureAcross `json:"failures"`
}

// Folder is one folder given.
type Folder struct {
	// Label is "#n", the folder's place among the arguments.
	Label string `json:"label"`
	Path  string `json:"path"`
	Valid bool   `json:"valid"`
	// Error is why the folder could not be validated; Violations are the
	// validator's lines. Either makes the folder no evidence.
	Error      string   `json:"error,omitempty"`
	Violations []string `json:"violations,omitempty"`
	// CopyOf is the label of an earlier folder of the same run (the same
	// run ID, or the same outputs.jsonl): a copy is valid but no evidence
	// of its own, so the run counts once.
	CopyOf   string    `json:"copy_of,omitempty"`
	Evidence *Evidence `json:"evidence,omitempty"`
	results  *contract.Results
	bundle   *fixtures.Bundle
}

// Evidence is what a valid folder shows.
type Evidence struct {
	RunID               string                  `json:"run_id"`
	ProtocolID          string                  `json:"protocol_id"`
	Status              string                  `json:"status"`
	StatusReasons       []contract.StatusReason `json:"status_reasons"`
	Machine             Machine                 `json:"machine"`
	Engine              Engine                  `json:"engine"`
	RequiredDurationS   *float64                `json:"required_duration_s"`
	OptionalConcurrency bool                    `json:"optional_concurrency"`
	OptionalDurationS   *float64                `json:"optional_duration_s"`
	Performance         []Case                  `json:"performance"`
	Template            Template                `json:"template_check"`
	Sanity              Sanity                  `json:"sanity"`
	Failures            []FailureGroup          `json:"failures"`
	Energy              []CaseEnergy            `json:"energy,omitempty"`
}

// Machine is the inference host.
type Machine struct {
	GPUs     []contract.GPU        `json:"gpus"`
	CPU      *string               `json:"cpu"`
	RAMBytes *int64                `json:"ram_bytes"`
	OS       *contract.NameVersion `json:"os"`
}

// Engine is the engine that served the run.
type Engine struct {
	Version      *string `json:"version"`
	Dialect      string  `json:"dialect"`
	IdentifiedBy string  `json:"identified_by"`
	// Real is false for strata's simulator or an unidentified engine;
	// NotRealReason says which. The checklist's cases count only on a real
	// engine ("the cases the mock server cannot show").
	Real           bool   `json:"real_engine"`
	NotRealReason  string `json:"not_real_reason,omitempty"`
	ServerCapacity *int64 `json:"server_capacity"`
	ContextTokens  *int64 `json:"context_tokens"`
}

// Case is one performance case: how many requests reached the cap, and
// the measured prompt lengths against the 2 % rule.
type Case struct {
	CaseID   string `json:"case_id"`
	Requests int    `json:"requests"`
	Capped   int    `json:"capped"`
	// TargetTokens is the 2 % rule's target (null for the short prompt,
	// which has none).
	TargetTokens *int `json:"target_tokens"`
	// WithinRule is true when every measured length is within 2 % of the
	// target, false when one is not, null when nothing was measured or
	// the case has no target.
	WithinRule *bool    `json:"within_rule"`
	Measured   []Length `json:"measured"`
}

// Length is one request's measured prompt length.
type Length struct {
	RequestID   string `json:"request_id"`
	Status      string `json:"status"`
	InputTokens *int64 `json:"input_tokens"`
	// DeviationPercent is (input − target) / target × 100.
	DeviationPercent *float64 `json:"deviation_percent"`
}

// Template check states.
const (
	TemplateVerified      = "verified"
	TemplateDiffers       = "differs"
	TemplateIncomplete    = "incomplete"
	TemplateCountsOnly    = "counts only"
	TemplateNotVerifiable = "not verifiable"
	TemplateNotRecorded   = "not recorded"
)

// Template is the preflight's outcome: the engine's own rendering and
// counts of every fixture against the bundle's.
type Template struct {
	State  string `json:"state"`
	Detail string `json:"detail"`
	Agree  int    `json:"fixtures_agree"`
	Differ int    `json:"fixtures_differ"`
	// ToolCasesAgree is true when the tool-call fixtures (T1–T4) are among
	// the agreeing ones: the spec asks for tool formatting included.
	ToolCasesAgree       bool   `json:"tool_cases_agree"`
	TemplateAgrees       bool   `json:"template_agrees"`
	EngineTemplateSHA256 string `json:"engine_template_sha256,omitempty"`
	BundleTemplateSHA256 string `json:"bundle_template_sha256,omitempty"`
}

// Sanity is the folder's sanity score and each verdict.
type Sanity struct {
	Passed     int                 `json:"passed"`
	Total      int                 `json:"total"`
	Categories contract.Categories `json:"categories"`
	Cases      []Verdict           `json:"cases"`
}

// Verdict is one sanity case's outcome.
type Verdict struct {
	CaseID string `json:"case_id"`
	Status string `json:"status"`
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
}

// FailureGroup is the failed (or skipped) requests of one error kind.
type FailureGroup struct {
	Status   string   `json:"status"`
	Kind     string   `json:"kind"`
	Requests []string `json:"requests"`
	// Message is the first request's error message (a skip reason for
	// skipped ones).
	Message string `json:"first_message"`
}

// SanityCase is one sanity case across the valid folders.
type SanityCase struct {
	CaseID   string          `json:"case_id"`
	Passed   int             `json:"passed"`
	Of       int             `json:"of"`
	Outcomes []FolderVerdict `json:"outcomes"`
}

// FolderVerdict is one folder's verdict of a case.
type FolderVerdict struct {
	Folder string `json:"folder"`
	Status string `json:"status"`
	Passed bool   `json:"passed"`
}

// FailureAcross is one status and error kind across the valid folders.
type FailureAcross struct {
	Status  string        `json:"status"`
	Kind    string        `json:"kind"`
	Count   int           `json:"count"`
	Folders []FolderCount `json:"folders"`
}

// FolderCount is how many requests of a kind one folder has.
type FolderCount struct {
	Folder string `json:"folder"`
	Count  int    `json:"count"`
}

// Build gathers the evidence of the folders, in the order given.
func Build(inputs []Input, o Options) *Report {
	rep := &Report{Format: Format, Version: Version, Folders: []Folder{}, Checklists: []Checklist{}, Sanity: []SanityCase{}, Failures: []FailureAcross{}}
	runs := map[string]string{} // a run's identities to the label of its first folder
	for i, in := range inputs {
		f := Folder{Label: fmt.Sprintf("#%d", i+1), Path: in.Path}
		switch {
		case in.Err != nil:
			f.Error = in.Err.Error()
		case in.Validation == nil || in.Validation.Results == nil:
			f.Error = "results.json could not be read"
			f.Violations = violationLines(in.Validation)
		case len(in.Validation.Violations) > 0:
			f.Error = fmt.Sprintf("%s: not evidence until strata bench report finds none", humanize.Count(len(in.Validation.Violations), "violation", "violations"))
			f.Violations = violationLines(in.Validation)
		default:
			f.Valid = true
			if f.CopyOf = copyOf(runs, in.Validation.Results, f.Label); f.CopyOf == "" {
				f.results, f.bundle = in.Validation.Results, in.Bundle
				f.Evidence = evidenceOf(f.results, o)
			}
		}
		rep.Folders = append(rep.Folders, f)
	}
	valid := rep.valid()
	rep.Checklists = checklists(valid)
	rep.Sanity = sanityAcross(valid)
	rep.Failures = failuresAcross(valid)
	return rep
}

// copyOf is the label of the first folder of the same run as r ("" when
// r is a run of its own, which runs then records under label). One run is
// one piece of evidence however many copies of its folder there are: a
// copy has the run's ID, and one whose ID was edited still has its
// outputs.jsonl (every dispatch and event of the run), which no other
// run can have.
func copyOf(runs map[string]string, r *contract.Results, label string) string {
	ids := []string{"run " + r.Run.ID}
	for _, a := range r.Artifacts {
		if a.Kind == contract.ArtifactOutputs {
			ids = append(ids, "outputs "+a.SHA256)
		}
	}
	for _, id := range ids {
		if first, ok := runs[id]; ok {
			return first
		}
	}
	for _, id := range ids {
		runs[id] = label
	}
	return ""
}

// Invalid lists the folders that are no evidence.
func (r *Report) Invalid() []Folder {
	var out []Folder
	for _, f := range r.Folders {
		if !f.Valid {
			out = append(out, f)
		}
	}
	return out
}

func (r *Report) valid() []*Folder {
	var out []*Folder
	for i := range r.Folders {
		if r.Folders[i].Valid && r.Folders[i].CopyOf == "" {
			out = append(out, &r.Folders[i])
		}
	}
	return out
}

func violationLines(v *validate.Validation) []string {
	if v == nil {
		return nil
	}
	out := make([]string, 0, len(v.Violations))
	for _, x := range v.Violations {
		out = append(out, x.String())
	}
	return out
}

func evidenceOf(r *contract.Results, o Options) *Evidence {
	reasons := append(append([]contract.StatusReason{}, r.Extensions.StatusReasons.Nonconforming...), r.Extensions.StatusReasons.Partial...)
	e := &Evidence{
		RunID: r.Run.ID, ProtocolID: r.Protocol.ID, Status: r.Run.Status, StatusReasons: reasons,
		Machine:           Machine{GPUs: r.Hardware.GPUs, CPU: r.Hardware.CPU, RAMBytes: r.Hardware.RAMBytes, OS: r.Software.OS},
		Engine:            engineOf(r),
		RequiredDurationS: r.Run.RequiredDurationS, OptionalConcurrency: r.Run.OptionalConcurrency, OptionalDurationS: r.Run.OptionalDurationS,
		Performance: casesOf(r),
		Template:    templateOf(r.Extensions.Preflight),
		Sanity:      sanityOf(r),
		Failures:    failuresOf(r),
	}
	if o.Energy != nil {
		e.Energy = o.Energy(r)
	}
	return e
}

func engineOf(r *contract.Results) Engine {
	e := Engine{Version: r.Software.EngineVersion, ServerCapacity: r.Configuration.ServerCapacity, ContextTokens: r.Configuration.ContextTokens}
	if d := r.Extensions.EngineDialect; d != nil {
		e.Dialect, e.IdentifiedBy = string(d.Dialect.Engine), d.Dialect.IdentifiedBy
	}
	e.Real, e.NotRealReason = realEngine(r)
	return e
}

// realEngine reports whether the folder's engine is a real one: identified,
// and with no trace of strata's simulator (the validator derives the
// simulated_engine reason from config.json, whatever the folder says).
func realEngine(r *contract.Results) (bool, string) {
	d := r.Extensions.EngineDialect
	if d == nil {
		return false, "the folder does not identify its engine"
	}
	if d.Dialect.Simulated || slices.ContainsFunc(r.Extensions.StatusReasons.Nonconforming, func(s contract.StatusReason) bool { return s.Kind == contract.SimulatedEngine }) {
		return false, "strata's simulator"
	}
	return true, ""
}

func casesOf(r *contract.Results) []Case {
	var out []Case
	for _, c := range protocol.PerformanceCases() {
		capped, n := report.CappedOf(r, c)
		k := Case{CaseID: c, Requests: n, Capped: capped, Measured: []Length{}}
		target, hasTarget := protocol.TargetTokens(c)
		if hasTarget {
			k.TargetTokens = &target
		}
		measured, within := 0, true
		for _, q := range r.Requests {
			if q.Phase != string(protocol.PhasePerformance) || q.CaseID != c {
				continue
			}
			l := Length{RequestID: q.ID, Status: q.Status, InputTokens: q.Tokens.InputTokens}
			if hasTarget && q.Tokens.InputTokens != nil {
				v := protocol.LengthRule(int(*q.Tokens.InputTokens), target)
				l.DeviationPercent = &v.DeviationPercent
				measured++
				within = within && v.Within
			}
			k.Measured = append(k.Measured, l)
		}
		if measured > 0 {
			k.WithinRule = &within
		}
		out = append(out, k)
	}
	return out
}

// toolCases are the request IDs of the tool-call fixtures.
func toolCases() []string {
	var out []string
	for _, c := range protocol.SanityCases() {
		if cat, err := protocol.SanityCategory(c); err == nil && cat == protocol.CategoryToolCall {
			out = append(out, protocol.SanityID(c))
		}
	}
	return out
}

func templateOf(pf *contract.Preflight) Template {
	if pf == nil {
		return Template{State: TemplateNotRecorded, Detail: "the folder records no preflight (the engine's own template and tokenizer were not held to the bundle)"}
	}
	t := Template{Agree: pf.Agree, Differ: pf.Differ, TemplateAgrees: pf.TemplateAgrees,
		EngineTemplateSHA256: pf.EngineTemplateSHA256, BundleTemplateSHA256: pf.BundleTemplateSHA256}
	agreeing := map[string]bool{}
	for _, f := range pf.Fixtures {
		if f.Agree && !f.RenderingUnchecked {
			agreeing[f.RequestID] = true
		}
	}
	t.ToolCasesAgree = true
	for _, id := range toolCases() {
		t.ToolCasesAgree = t.ToolCasesAgree && agreeing[id]
	}
	checked := fmt.Sprintf("%d of %d fixtures agree", pf.Agree, len(pf.Fixtures))
	switch {
	case !pf.Verifiable:
		t.State, t.Detail = TemplateNotVerifiable, pf.Reason
	case pf.Differ > 0 || (pf.EngineTemplateSHA256 != "" && !pf.TemplateAgrees):
		t.State, t.Detail = TemplateDiffers, checked+"; "+pf.TemplateLine()
	case pf.CountOnly():
		t.State, t.Detail = TemplateCountsOnly, checked+" by count; the engine shows no rendering, so the template itself is not checked"
	case !pf.OK() || !t.ToolCasesAgree:
		t.State, t.Detail = TemplateIncomplete, checked+"; not every fixture, tool cases included, was checked"
		if pf.Stopped != "" {
			t.Detail += " (" + pf.Stopped + ")"
		}
	default:
		t.State, t.Detail = TemplateVerified, checked+" in rendering and count, the tool cases T1–T4 included"
		if pf.EngineTemplateSHA256 != "" {
			t.Detail += "; the engine's template is the bundle's"
		}
	}
	return t
}

func sanityOf(r *contract.Results) Sanity {
	s := Sanity{Passed: r.Quality.Passed, Total: r.Quality.Total, Categories: r.Quality.Categories, Cases: []Verdict{}}
	for _, q := range r.Requests {
		if q.Evaluation != nil {
			s.Cases = append(s.Cases, Verdict{CaseID: q.CaseID, Status: q.Status, Passed: q.Evaluation.Passed, Reason: q.Evaluation.Reason})
		}
	}
	return s
}

// failuresOf groups the failed and skipped requests by status and error
// kind, failures first.
func failuresOf(r *contract.Results) []FailureGroup {
	out := []FailureGroup{}
	index := map[[2]string]int{}
	for _, q := range r.Requests {
		if q.Status != contract.Failed && q.Status != contract.Skipped {
			continue
		}
		kind, msg := "unknown", ""
		if q.Error != nil {
			kind, msg = q.Error.Kind, q.Error.Message
		}
		k := [2]string{q.Status, kind}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, FailureGroup{Status: q.Status, Kind: kind, Message: msg})
		}
		out[i].Requests = append(out[i].Requests, q.ID)
	}
	sort.SliceStable(out, func(i, j int) bool { return failureLess(out[i].Status, out[i].Kind, out[j].Status, out[j].Kind) })
	return out
}

func failureLess(s1, k1, s2, k2 string) bool {
	if s1 != s2 {
		return s1 == contract.Failed
	}
	return k1 < k2
}

func sanityAcross(folders []*Folder) []SanityCase {
	out := []SanityCase{}
	for _, c := range protocol.SanityCases() {
		sc := SanityCase{CaseID: c, Outcomes: []FolderVerdict{}}
		for _, f := range folders {
			for _, v := range f.Evidence.Sanity.Cases {
				if v.CaseID == c {
					sc.Outcomes = append(sc.Outcomes, FolderVerdict{Folder: f.Label, Status: v.Status, Passed: v.Passed})
					sc.Of++
					if v.Passed {
						sc.Passed++
					}
				}
			}
		}
		out = append(out, sc)
	}
	return out
}

func failuresAcross(folders []*Folder) []FailureAcross {
	var out []FailureAcross
	index := map[[2]string]int{}
	for _, f := range folders {
		for _, g := range f.Evidence.Failures {
			k := [2]string{g.Status, g.Kind}
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, FailureAcross{Status: g.Status, Kind: g.Kind})
			}
			out[i].Count += len(g.Requests)
			out[i].Folders = append(out[i].Folders, FolderCount{Folder: f.Label, Count: len(g.Requests)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return failureLess(out[i].Status, out[i].Kind, out[j].Status, out[j].Kind) })
	if out == nil {
		out = []FailureAcross{}
	}
	return out
}

// ResultsEnergy reads a folder's energy from its results.json
// (extensions.energy): each performance case's joules per request and
// median decode tokens per joule, or, when nothing was measured, one line
// saying why.
func ResultsEnergy(r *contract.Results) []CaseEnergy {
	e := r.Extensions.Energy
	if e == nil {
		return nil
	}
	if e.NotMeasured != "" {
		return []CaseEnergy{{Phase: string(protocol.PhasePerformance), Note: "not measured: " + e.NotMeasured}}
	}
	var out []CaseEnergy
	for _, c := range protocol.PerformanceCases() {
		ce := CaseEnergy{Phase: string(protocol.PhasePerformance), CaseID: c, Source: e.SourceName()}
		if s := e.Summary(c, contract.MetricJoules); s != nil {
			ce.MedianJ, ce.MinJ, ce.MaxJ, ce.N = s.Median, s.Min, s.Max, s.N
		}
		if s := e.Summary(c, contract.MetricDecodeTokensPerJoule); s != nil {
			ce.DecodeTokensPerJ = s.Median
		}
		out = append(out, ce)
	}
	return out
}
