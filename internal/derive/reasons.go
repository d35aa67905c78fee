package derive

import (
	"fmt"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

// Split is the reasons as the result lists them, nonconforming and
// partial, each in order and without repeated sentences.
func Split(rs []contract.StatusReason) contract.StatusReasons {
	seen := map[string]bool{}
	out := contract.StatusReasons{Nonconforming: []contract.StatusReason{}, Partial: []contract.StatusReason{}}
	for _, r := range rs {
		if seen[r.Text] {
			continue
		}
		seen[r.Text] = true
		if r.Kind.Partial() {
			out.Partial = append(out.Partial, r)
		} else {
			out.Nonconforming = append(out.Nonconforming, r)
		}
	}
	return out
}

// Remote is the reason a server off loopback makes a run nonconforming
// (standard latency is a loopback measurement), or nil on loopback.
func Remote(base string) *contract.StatusReason {
	if remote, why := protocol.Remote(base); remote {
		return &contract.StatusReason{Kind: contract.RemoteServer, Text: why}
	}
	return nil
}

// BeforeRun are the reasons known before the first request: the engine
// (the simulator, settings it cannot take) and the identity (commit, model
// hashes, template, budget). The runner says them before the warm-up, with
// the words the result will use.
func BeforeRun(res *contract.Results, server contract.ServerEvidence, notTaken []string, budget string) []contract.StatusReason {
	return append(engineReasons(res, server, notTaken), identityReasons(res, budget)...)
}

// simulated is the reason a run of strata's simulator is nonconforming,
// naming every trace it left (dialect.SimulatorTraces of the server's
// evidence and the result), or nil when there is none.
func simulated(res *contract.Results, server contract.ServerEvidence) *contract.StatusReason {
	ext := res.Extensions
	ev := dialect.SimulatorEvidence{Server: server, GGUFName: ext.GGUF.String("name")}
	if d := ext.EngineDialect; d != nil {
		ev.RecordedSimulated = d.Dialect.Simulated
	}
	if e := ext.Engine; e != nil && e.ServedBeforeRun != nil {
		for k := range e.ServedBeforeRun.Evidence {
			ev.Metrics = append(ev.Metrics, k)
		}
	}
	if v := res.Software.EngineVersion; v != nil {
		ev.EngineVersion = *v
	}
	for _, f := range res.Model.Files {
		m := dialect.ModelFile{Path: f.Path}
		if f.SHA256 != nil {
			m.SHA256 = *f.SHA256
		}
		ev.ModelFiles = append(ev.ModelFiles, m)
	}
	traces := dialect.SimulatorTraces(ev)
	if len(traces) == 0 {
		return nil
	}
	return &contract.StatusReason{Kind: contract.SimulatedEngine, Text: "the server is strata's simulated engine, not a real inference engine: its numbers are made up (it left " +
		strings.Join(traces, "; ") + ")"}
}

func engineReasons(res *contract.Results, server contract.ServerEvidence, notTaken []string) []contract.StatusReason {
	var out []contract.StatusReason
	if r := simulated(res, server); r != nil {
		out = append(out, *r)
	}
	for _, n := range notTaken {
		out = append(out, contract.StatusReason{Kind: contract.SettingNotTaken, Text: "the engine cannot take the profile's setting " + n})
	}
	return out
}

// Workload are the reasons the engine ran another workload than the
// protocol's: what the preflight showed of its rendering and counts, and
// what its source says it does to the tool cases (dialect.ToolsReshaped).
// Where the preflight saw the tool cases rendered, their rendering
// decides: one that differs is named with the engine's known cause, one
// equal to the bundle's is the protocol's workload whatever the source
// said; where it did not, the source's fact stands.
func Workload(pf *contract.Preflight, d dialect.Dialect) []contract.StatusReason {
	reshaped := d.ToolsReshaped()
	r := PreflightDiffers(pf)
	switch {
	case r != nil && reshaped != "" && toolCasesAlone(pf.Differing()):
		diff := pf.Differing()
		r.Text = fmt.Sprintf("the preflight showed the engine renders %d of the %d fixtures it checked, the tool cases, otherwise than the bundle (first %s: %s), as its source says it must (%s), so the requests it ran are not the protocol's workload",
			len(diff), len(pf.Fixtures), diff[0].RequestID, differsHow(diff[0]), reshaped)
	case reshaped != "" && !pf.ShowsToolRendering():
		t := contract.StatusReason{Kind: contract.SettingNotTaken, Text: "the engine cannot take the tool cases' tools as the protocol gives them (" + reshaped +
			"), and the preflight did not show their rendering: T1–T4 are not the protocol's workload"}
		return append(nonNil(r), t)
	}
	return nonNil(r)
}

func nonNil(r *contract.StatusReason) []contract.StatusReason {
	if r == nil {
		return nil
	}
	return []contract.StatusReason{*r}
}

// toolCasesAlone reports whether every fixture listed is a tool case.
func toolCasesAlone(fs []contract.PreflightFixture) bool {
	for _, f := range fs {
		if !contract.CarriesTools(f.RequestID) {
			return false
		}
	}
	return len(fs) > 0
}

// PreflightDiffers is the reason a preflight that showed a fixture turned
// into another prompt makes the run nonconforming, or nil when it showed
// none (or there was none). The profile pins the chat template and the
// tokenizer, and the bundle freezes what they make of each fixture; an
// engine that renders or counts one otherwise runs another workload, a
// changed profile setting (spec, run status), whether or not its count
// falls outside the 2 % rule (a template that drops the tools changes T1–T4
// and leaves the long prompts' lengths alone).
func PreflightDiffers(pf *contract.Preflight) *contract.StatusReason {
	if pf == nil {
		return nil
	}
	diff := pf.Differing()
	if len(diff) == 0 {
		return nil
	}
	return &contract.StatusReason{Kind: contract.PreflightDiffers, Text: fmt.Sprintf("the preflight showed the engine's chat template or tokenizer is not the profile's: "+
		"%d of the %d fixtures it checked became another prompt than the bundle's (first %s: %s), so the requests it ran are not the protocol's workload",
		len(diff), len(pf.Fixtures), diff[0].RequestID, differsHow(diff[0]))}
}

// differsHow says how a fixture the preflight showed differing differs.
func differsHow(f contract.PreflightFixture) string {
	if f.FirstDifference != nil {
		return fmt.Sprintf("its rendering differs from the bundle's at byte %d", *f.FirstDifference)
	}
	return fmt.Sprintf("it counts %d tokens, frozen %d", *f.EngineTokens, f.FrozenTokens)
}

func identityReasons(res *contract.Results, budget string) []contract.StatusReason {
	var out []contract.StatusReason
	add := func(k contract.ReasonKind, text string) {
		out = append(out, contract.StatusReason{Kind: k, Text: text})
	}
	if res.Software.StrataCommit == nil {
		add(contract.NoCommit, "the install has no commit (strata_commit is null): required identity is missing")
	}
	if res.Model.Files == nil {
		add(contract.NoModelHashes, "no model file hashes: required identity is missing")
	}
	for _, f := range res.Model.Files {
		if f.SHA256 == nil {
			add(contract.UnhashedModel, "model file "+f.Path+" could not be hashed")
		}
	}
	if res.Configuration.Template == nil {
		add(contract.NoTemplate, "the effective chat template is unknown: required identity is missing")
	}
	if mc, ok := ModelOf(res); ok && mc.State == contract.ModelOther {
		add(contract.OtherModel, mc.Reason)
	}
	if budget != "" {
		add(contract.ReasoningBudget, budget)
	}
	return out
}

// RequestReasons are the reasons one request makes the run nonconforming:
// a refused request, a setting the server resolved otherwise, unexpected
// cache reuse of the user payload and the length rule (performance
// requests). Run-level checks use it for every request, and the live line
// as each request ends, so a warning is shown when it happens.
func RequestReasons(q contract.Request, o contract.Output, maxShared map[string]int) []contract.StatusReason {
	var out []contract.StatusReason
	add := func(k contract.ReasonKind, text string) {
		out = append(out, contract.StatusReason{Kind: k, Request: q.ID, Text: text})
	}
	if s := o.HTTPStatus; s != nil && (*s == 400 || *s == 422) {
		msg := ""
		if o.Error != nil {
			msg = " (" + o.Error.Message + ")"
		}
		add(contract.RefusedRequest, fmt.Sprintf("%s: the server refused the protocol's request with HTTP %d%s; no retry with other settings", q.ID, *s, msg))
	}
	if req, known := protocol.Lookup(q.ID); known {
		for _, m := range Mismatches(req, o.SettingsCheck.SeenFor(q.ID)) {
			add(contract.SettingOtherwise, "the server resolved "+m)
		}
	}
	if q.Phase != string(protocol.PhasePerformance) {
		return out
	}
	if why, hit := Reuse([]contract.Request{q}, maxShared)[q.ID]; hit {
		add(contract.CacheReuseKind, q.ID+": "+why+" (the user payload was read from the cache; restart the engine between runs)")
	}
	if bad, why := measure.LengthViolation(q.CaseID, q.Tokens.InputTokens); bad {
		add(contract.LengthRule, q.ID+": "+why)
	}
	return out
}

// Served says in a few words what an already-serving engine had done
// before the run: no request, some (contract.NotFreshlyLoaded), or
// unknown, with the engine's evidence.
func Served(s contract.ServedBefore) string {
	switch {
	case s.Answered != nil && *s.Answered == 0:
		return "it had answered no request before this run"
	case s.Answered != nil:
		return contract.NotFreshlyLoaded + ": it had answered " + humanize.Count(int(*s.Answered), "request", "requests") + " before this run"
	case strings.HasPrefix(s.Reason, contract.NotFreshlyLoaded):
		return s.Reason
	}
	return "whether it was freshly loaded is unknown: " + s.Reason
}

// Fresh reports whether the engine is shown to have been freshly loaded
// for the run: strata started it, or it had answered no request before.
func Fresh(e *contract.Engine) bool {
	if e == nil {
		return false
	}
	sb := e.ServedBeforeRun
	return e.StartedByRunner || sb != nil && sb.Answered != nil && *sb.Answered == 0
}

// Freshness says who started the engine and what it had answered before
// the run, for the report's first section, the pull request and bench
// compare.
func Freshness(e *contract.Engine) string {
	switch {
	case e == nil:
		return "not recorded"
	case e.StartedByRunner:
		return "freshly loaded: strata started it for this run"
	case e.ServedBeforeRun == nil:
		return "already serving, not started by strata; what it had answered before this run is not recorded"
	}
	return "already serving, not started by strata; " + Served(*e.ServedBeforeRun)
}

// RunnerStoppedKind is the error kind of a request that was in flight
// when the runner stopped (a recovered run: it was dispatched and no
// response was recorded), and RunnerStopped how a recovered run names what
// ended it (its interruption and its extensions.aborted).
const (
	RunnerStoppedKind = "runner_stopped"
	RunnerStopped     = "the runner stopped (it was killed, ran out of memory, or the machine went down) and the run was recovered from its journal"
)

// Interruption is the reason an interrupted run is partial.
func Interruption(how string) contract.StatusReason {
	if how == "" {
		how = "an interrupt"
	}
	return contract.StatusReason{Kind: contract.Interrupted, Text: "the run was interrupted: " + how}
}

// Evidence is what the folder holds that the reasons are derived from.
type Evidence struct {
	Results *contract.Results
	Outputs map[string]contract.Output
	// MaxShared is each fixture's max_shared_prefix_tokens, by request ID.
	MaxShared map[string]int
	// Budget is the reasoning-budget check's nonconforming sentence ("" when
	// the engine's budget means "none").
	Budget string
	// NotTaken are the profile settings the engine's chat endpoint cannot
	// take (dialect.NotTaken of the recorded dialect), each with its source.
	NotTaken []string
	// Server is what the server served about itself (config.json).
	Server contract.ServerEvidence
	// EngineLog is the engine log as the folder keeps it (nil: none).
	EngineLog []byte
}

// Reasons are every reason the evidence shows, in the order the result
// lists them: the simulator, each request's refusal and resolved settings,
// each performance request's cache reuse and length rule, requests the
// engine answered that strata did not send, the identity the run lacks,
// the reasoning budget, then skipped required work.
func Reasons(ev Evidence) []contract.StatusReason {
	res := ev.Results
	var out []contract.StatusReason
	add := func(k contract.ReasonKind, id, text string) {
		out = append(out, contract.StatusReason{Kind: k, Request: id, Text: text})
	}
	out = append(out, engineReasons(res, ev.Server, ev.NotTaken)...)
	var d dialect.Dialect
	if ed := res.Extensions.EngineDialect; ed != nil {
		d = dialect.Of(ed.Dialect)
	}
	out = append(out, Workload(res.Extensions.Preflight, d)...)
	out = append(out, nonNil(RanOtherwise(res.Extensions.Preflight, res.Requests))...)
	for _, q := range res.Requests {
		if o, ok := ev.Outputs[q.ID]; ok {
			out = append(out, RequestReasons(q, o, ev.MaxShared)...)
		}
	}
	out = append(out, nonNil(Foreign(d, ev.EngineLog, res.Requests, ev.Outputs))...)
	out = append(out, identityReasons(res, ev.Budget)...)
	var skipped []string
	for _, q := range res.Requests {
		if q.Status == contract.Skipped && q.Phase != string(protocol.PhaseConcurrency) {
			skipped = append(skipped, q.ID)
		}
	}
	if len(skipped) > 0 {
		add(contract.SkippedWork, "", fmt.Sprintf("required work was skipped: %d of the %d required requests (%s)",
			len(skipped), len(protocol.Schedule(false)), strings.Join(skipped, ", ")))
	}
	return out
}

// Foreign is the reason a run whose engine answered requests strata did
// not send while it went is nonconforming, or nil when its log shows none:
// the timer lines of the log's run part that no record pairs with
// (measure.PairLog), beyond the dispatched requests that lack engine
// timings. Latency is measured on a server doing only the protocol's
// work, and the log and the records must agree.
func Foreign(d dialect.Dialect, log []byte, reqs []contract.Request, outs map[string]contract.Output) *contract.StatusReason {
	p, ok := measure.PairLog(d, log, reqs, outs)
	if !ok || len(p.Extra) <= p.Untimed {
		return nil
	}
	x := p.Extra[0]
	return &contract.StatusReason{Kind: contract.ForeignRequests, Text: fmt.Sprintf("the engine answered %s strata did not send while the run went, so its latency was measured on a server doing other work: "+
		"%s holds the timer lines of %s below line %d, where the run's part begins, that no record of %s pairs with, more than the %s without engine timings "+
		"(the first at line %d: task %s, prompt %d tokens in %.2f ms, %d generated in %.2f ms)",
		humanize.Count(len(p.Extra)-p.Untimed, "request", "requests"), contract.EngineLog, humanize.Count(len(p.Extra), "request", "requests"), p.From, contract.OutputsFile,
		humanize.Count(p.Untimed, "dispatched request", "dispatched requests"), p.From+x.Line-1, x.Task, x.PromptN, x.PromptMS, x.PredictedN, x.PredictedMS)}
}

// RanOtherwise is the reason a run makes nonconforming when the engine
// counted requests otherwise than the bundle froze though its preflight
// showed their rendering as the bundle's and counted none (Ollama's
// render-only route), or nil. Such a fixture agreed on the premise that
// its rendering, tokenized as the bundle's, gives the frozen count; the
// run's count of the whole prompt (input_tokens, cached tokens included)
// is the engine's only count of it, so one that differs shows the engine
// ran another prompt than it showed, or tokenized it otherwise: a server
// may render a route's request one way and run the chat request another.
func RanOtherwise(pf *contract.Preflight, reqs []contract.Request) *contract.StatusReason {
	if pf == nil || pf.OffChatPath {
		return nil
	}
	shown := map[string]contract.PreflightFixture{}
	for _, f := range pf.Fixtures {
		if f.RenderingAgrees && f.EngineTokens == nil {
			shown[f.RequestID] = f
		}
	}
	var first string
	n := 0
	for _, q := range reqs {
		f, ok := shown[q.ID]
		if !ok || q.Tokens.InputTokens == nil || *q.Tokens.InputTokens == int64(f.FrozenTokens) {
			continue
		}
		if n++; n == 1 {
			first = fmt.Sprintf("%s: input_tokens %d, frozen %d", q.ID, *q.Tokens.InputTokens, f.FrozenTokens)
		}
	}
	if n == 0 {
		return nil
	}
	return &contract.StatusReason{Kind: contract.PreflightDiffers, Text: fmt.Sprintf("the engine counted %d of the requests whose rendering its preflight showed as the bundle's otherwise than the bundle froze (first %s), "+
		"so it ran other prompts than it showed, or tokenized them otherwise than the profile: the requests it ran are not the protocol's workload", n, first)}
}
