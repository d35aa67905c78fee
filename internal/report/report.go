// Package report writes the plain report of a result (its README.md) from
// results.json alone, and checks a folder's README against it.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
)

// notMeasured is how the report writes a null.
const notMeasured = "not measured"

func fnum(v *float64, prec int) string {
	if v == nil {
		return notMeasured
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

// unit puts the unit after a measured value, and none after a null
// ("not measured", never "not measured s").
func unit(v, u string) string {
	if strings.HasPrefix(v, notMeasured) {
		return v
	}
	return v + " " + u
}

// num writes a value in the readouts' numbers (humanize.Number), or "not
// measured".
func num(v *float64) string {
	if v == nil {
		return notMeasured
	}
	return humanize.Number(*v)
}

func inum(v *int64) string {
	if v == nil {
		return notMeasured
	}
	return fmt.Sprintf("%d", *v)
}

func sval(v *string) string {
	if v == nil || *v == "" {
		return notMeasured
	}
	return mdEscape(*v)
}

// printer writes one formatted piece of the report.
type printer func(format string, a ...any)

// README writes the plain report of a result: protocol and status,
// hardware, model, counts, the per-case table with the Capped column, the
// cache counts, sanity outcomes, failures, limitations and artifacts. It
// returns the first write error, after which it writes nothing more.
func README(w io.Writer, r *contract.Results) error {
	var err error
	p := printer(func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	})
	writeOverview(p, r)
	writeMachine(p, r)
	writeRequestCounts(p, r)
	writePerformance(p, r)
	writeCharts(p, r)
	writeEnergy(p, r)
	writePromptCache(p, r)
	if r.Run.OptionalConcurrency {
		writeConcurrency(p, r)
	}
	writeSanity(p, r)
	writeFailures(p, r)
	writeLimitations(p, r)
	writeEvidence(p, r)
	return err
}

// writeOverview writes the title, the run's table (protocol, status,
// stages, sanity, corpus, commit, command) and why the run is not a
// complete one.
func writeOverview(p printer, r *contract.Results) {
	p("# Strata standard benchmark result %s\n\n", r.Run.ID)
	p("| | |\n| --- | --- |\n")
	p("| Protocol | `%s` (draft), profile `%s` |\n", r.Protocol.ID, r.Protocol.Profile)
	p("| Status | **%s** |\n", r.Run.Status)
	writeEngineRows(p, r)
	p("| Started | %s |\n", r.Run.StartedAt)
	p("| Required stages | %s |\n", unit(fnum(r.Run.RequiredDurationS, 1), "s"))
	if r.Run.OptionalConcurrency {
		p("| Optional concurrency stage | selected, %s |\n", unit(fnum(r.Run.OptionalDurationS, 1), "s"))
	} else {
		p("| Optional concurrency stage | not selected |\n")
	}
	p("| Sanity | **%d/%d** passed |\n", r.Quality.Passed, r.Quality.Total)
	p("| Corpus SHA-256 | `%s` |\n", r.Protocol.CorpusSHA256)
	p("| strata commit | %s |\n", sval(r.Software.StrataCommit))
	p("| Command | `%s` |\n\n", escape.CodeSpan(r.Run.Command))
	sr := r.Extensions.StatusReasons
	writeStatusReasons(p, "**Nonconforming.** This run is not a standard result:", sr.Nonconforming)
	writeStatusReasons(p, "**Partial.** Required work was not done:", sr.Partial)
}

// writeEngineRows says in the first section who started the engine and
// what it had answered before the run (bold when it is not shown to have
// been freshly loaded), and names the engine log or says there is none,
// with why.
func writeEngineRows(p printer, r *contract.Results) {
	if e := r.Extensions.Engine; e != nil {
		if derive.Fresh(e) {
			p("| Engine | %s |\n", mdEscape(derive.Freshness(e)))
		} else {
			p("| Engine | **%s** |\n", mdEscape(derive.Freshness(e)))
		}
	}
	for _, a := range r.Artifacts {
		if a.Kind == contract.ArtifactEngineLog {
			p("| Engine log | `%s` |\n", escape.CodeSpan(a.Path))
			return
		}
	}
	why, ok := r.Missing[contract.PtrEngineLog]
	if !ok {
		why = "the folder lists no engine_log artifact"
	}
	p("| Engine log | **none**: %s |\n", mdEscape(why))
}

// writeStatusReasons lists the reasons for one status under its lead
// sentence, and nothing when there are none.
func writeStatusReasons(p printer, lead string, reasons []contract.StatusReason) {
	if len(reasons) == 0 {
		return
	}
	p("%s\n\n", lead)
	for _, s := range reasons {
		p("- %s\n", mdEscape(s.Text))
	}
	p("\n")
}

// writeMachine writes the machine and model section: GPUs, CPU and RAM,
// OS, engine, model and its files, configuration, background workloads and
// the engine's dialect.
func writeMachine(p printer, r *contract.Results) {
	p("## Machine and model\n\n")
	if len(r.Hardware.GPUs) == 0 {
		p("- GPUs: %s\n", notMeasured)
	}
	for _, g := range r.Hardware.GPUs {
		mem := notMeasured
		if g.MemoryBytes != nil {
			mem = fmt.Sprintf("%.1f GiB", float64(*g.MemoryBytes)/(1<<30))
		}
		p("- GPU %d: %s, %s %s, power limit %s\n", g.DeviceIndex, mdEscape(g.Name), mem, sval(g.MemoryKind), unit(fnum(g.PowerLimitW, 0), "W"))
	}
	ram := notMeasured
	if r.Hardware.RAMBytes != nil {
		ram = fmt.Sprintf("%.1f GiB (%d bytes)", float64(*r.Hardware.RAMBytes)/(1<<30), *r.Hardware.RAMBytes)
	}
	p("- CPU: %s; RAM: %s\n", sval(r.Hardware.CPU), ram)
	if r.Software.OS != nil {
		p("- OS: %s %s\n", mdEscape(r.Software.OS.Name), sval(r.Software.OS.Version))
	} else {
		p("- OS: %s\n", notMeasured)
	}
	p("- Engine: %s\n", sval(r.Software.EngineVersion))
	p("- Model: %s; quantization %s; revision %s\n", sval(r.Model.ID), sval(r.Model.Quantization), sval(r.Model.Revision))
	if len(r.Model.Files) == 0 {
		p("- Model files: %s\n", notMeasured)
	}
	for _, f := range r.Model.Files {
		p("- Model file `%s`: SHA-256 %s\n", escape.CodeSpan(f.Path), sval(f.SHA256))
	}
	p("- Configuration: track `%s` (%s); context %s tokens per slot; server capacity %s\n",
		escape.CodeSpan(r.Configuration.Track), sval(r.Configuration.TrackNotes), inum(r.Configuration.ContextTokens), inum(r.Configuration.ServerCapacity))
	if len(r.Hardware.BackgroundWorkloads) > 0 {
		p("- Background workloads: %s\n", mdEscape(strings.Join(r.Hardware.BackgroundWorkloads, "; ")))
	}
	writeEngineSection(p, r.Extensions)
}

// writeRequestCounts writes each stage's request counts.
func writeRequestCounts(p printer, r *contract.Results) {
	p("\n## Requests\n\n| Stage | Planned | Attempted | Completed | Capped | Failed | Skipped |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, ph := range protocol.Phases() {
		c := r.RequestCounts.Phase(string(ph))
		p("| %s | %d | %d | %d | %d | %d | %d |\n", ph, c.Planned, c.Attempted, c.Completed, c.Truncated, c.Failed, c.Skipped)
	}
}

// writePerformance writes the per-case table of the performance stage.
func writePerformance(p printer, r *contract.Results) {
	p("\n## Performance (concurrency 1)\n\n")
	p("Median (min–max, n) of each case's requests. Rates are the engine's own counts over its own timers; latencies are the client's monotonic clock from dispatch. %s The short prompt (about 30 tokens) measures the fixed cost of a request, so its prompt rate is left out here and in the charts; results.json keeps it.\n\n", cappedNote(r))
	p("| Case | Capped | Prompt tok/s | Decode tok/s | TTFT s | First answer s | Total s |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range protocol.PerformanceCases() {
		capped, n := CappedOf(r, c)
		cell := func(metric string) string { return readout(r, protocol.PhasePerformance, c, metric) }
		p("| %s | %d/%d | %s | %s | %s | %s | %s |\n", c, capped, n, cell(contract.MetricPromptTPS),
			cell(contract.MetricDecodeTPS), cell(contract.MetricTTFT), cell(contract.MetricFirstAnswer), cell(contract.MetricTotal))
	}
}

// readout is a case's summary of metric as the README's tables and the
// charts write it, or what they show in its place.
func readout(r *contract.Results, phase protocol.Phase, caseID, metric string) string {
	if out := humanize.LeftOut(caseID, metric); out != "" {
		return out
	}
	return humanize.Readout(r.Summary(string(phase), caseID, metric))
}

// cappedNote says what the Capped column counts and, as the requests
// show, which capped requests have a first-answer time: one whose answer
// began before the cap has one, one still reasoning at the cap has none.
func cappedNote(r *contract.Results) string {
	capped, answered := 0, 0
	for _, q := range r.Requests {
		if q.Phase == string(protocol.PhasePerformance) && q.Status == contract.Truncated {
			capped++
			if q.Timings.FirstAnswerS != nil {
				answered++
			}
		}
	}
	out := fmt.Sprintf("**Capped** counts the requests that stopped at the %d-token cap; their total is the time to the cap.", protocol.PerformanceCap)
	if capped == 0 {
		return out + " No request reached the cap here."
	}
	return out + fmt.Sprintf(" Here %s reached the cap: %d had begun the answer before it (a first-answer time in the table), %d had not (no first-answer time).",
		humanize.Count(capped, "request", "requests"), answered, capped-answered)
}

// writeCharts shows the charts results.json lists, each by a relative
// link to its file (so a pull request shows them too); a folder without
// them has no section.
func writeCharts(p printer, r *contract.Results) {
	var shown []string
	for _, m := range charts.Metrics() {
		for _, a := range r.Artifacts {
			if a.Path == charts.FileName(m.Metric) {
				shown = append(shown, fmt.Sprintf("![%s (%s)](%s)\n", m.Title, humanize.UnitWord(m.Metric), a.Path))
				break
			}
		}
	}
	if len(shown) == 0 {
		return
	}
	p("\n## Charts\n\nPer case, the bar is the median, the line runs from min to max and a dot is one request; each value is written as in the tables, and what they leave out is left out. The charts are drawn from results.json alone: `strata bench report` draws them again and compares them byte for byte.\n\n%s", strings.Join(shown, ""))
}

// writeEnergy writes the energy table beside the performance one: the
// source, interval and idle baseline, each case's joules and decode tokens
// per joule, and each concurrency round's joules. A run that measured
// nothing says why; a result without the block (an older or recovered
// run) has no section.
func writeEnergy(p printer, r *contract.Results) {
	e := r.Extensions.Energy
	if e == nil {
		return
	}
	p("\n## Energy (GPU power)\n\n")
	if e.NotMeasured != "" {
		p("%s: %s.\n", notMeasured, mdEscape(e.NotMeasured))
		return
	}
	p("Joules of the sampled GPUs (%s) over each request's dispatch→end window: the trapezoid over the power readings of `%s` every %s (%d readings in `%s`), the window's edges interpolated; a window shorter than three sampling intervals has none. Idle baseline before the warm-up: %s (recorded, not subtracted).",
		gpuList(e.GPUs), escape.CodeSpan(e.SourceName()), interval(e.IntervalS), e.SampleCount, e.Samples, unit(fnum(e.IdleW, 1), "W"))
	if e.Stopped != "" {
		p(" The source stopped early: %s.", mdEscape(e.Stopped))
	}
	if said := contract.DroppedText(e.Dropped); said != "" {
		p(" %s.", mdEscape(said))
	}
	p("\n\n| Case | Joules | Decode tok/J |\n| --- | --- | --- |\n")
	for _, c := range protocol.PerformanceCases() {
		p("| %s | %s | %s |\n", c, humanize.Readout(e.Summary(c, contract.MetricJoules)), humanize.Readout(e.Summary(c, contract.MetricDecodeTokensPerJoule)))
	}
	if len(e.Rounds) > 0 {
		p("\nConcurrency rounds (one energy per round, never split among its requests):\n\n| Round | Window s | Joules | Output tok/J |\n| --- | --- | --- | --- |\n")
		for _, rd := range e.Rounds {
			p("| %d | %s | %s | %s |\n", rd.Round, num(rd.WindowS), num(rd.Joules), num(rd.OutputTokensPerJoule))
		}
	}
}

// interval writes a sampling interval in seconds, as precise as it is.
func interval(s *float64) string {
	if s == nil {
		return notMeasured
	}
	return fmt.Sprintf("%g s", *s)
}

func gpuList(gpus []int) string {
	parts := make([]string, 0, len(gpus))
	for _, g := range gpus {
		parts = append(parts, fmt.Sprintf("GPU %d", g))
	}
	return strings.Join(parts, ", ")
}

// CappedOf counts a case's performance requests, and those of them that
// stopped at the token cap (the report's Capped column; the pilot's too).
func CappedOf(r *contract.Results, caseID string) (capped, n int) {
	for _, q := range r.Requests {
		if q.Phase == string(protocol.PhasePerformance) && q.CaseID == caseID {
			n++
			if q.Status == contract.Truncated {
				capped++
			}
		}
	}
	return capped, n
}

// writePromptCache writes the cached and freshly read prompt tokens of
// each timed request (performance and concurrency).
func writePromptCache(p printer, r *contract.Results) {
	p("\n### Prompt cache\n\nReused (cached) versus freshly read prompt tokens per request. Shared template-prefix reuse is allowed; cached tokens above the fixture's shared prefix + %d mean the user payload came from the cache, and such a request is left out of the speed summaries.\n\n", protocol.CacheBoundaryAllowance)
	p("| Request | Input | Cached (reused) | Read (fresh) |\n| --- | --- | --- | --- |\n")
	for _, q := range r.Requests {
		if q.Phase != string(protocol.PhasePerformance) && q.Phase != string(protocol.PhaseConcurrency) {
			continue
		}
		p("| %s | %s | %s | %s |\n", q.ID, inum(q.Tokens.InputTokens), inum(q.Tokens.CachedTokens), inum(q.Tokens.ReadTokens))
	}
}

// writeConcurrency writes the optional concurrency stage: what the
// server's capacity means for it, each round, and the per-request medians.
func writeConcurrency(p printer, r *contract.Results) {
	p("\n## Optional concurrency (4 requests released together, 3 rounds)\n\n")
	p("%s\n\n", capacityNote(r.Configuration.ServerCapacity))
	p("| Round | Wall s | Output tokens | Aggregate tok/s | Failed |\n| --- | --- | --- | --- | --- |\n")
	for _, rd := range r.ConcurrencyRounds {
		p("| %d | %s | %s | %s | %d |\n", rd.Round, num(rd.WallS), inum(rd.OutputTokens), num(rd.AggregateTPS), rd.Failed)
	}
	cell := func(metric string) string {
		return readout(r, protocol.PhaseConcurrency, protocol.CaseShortBurst, metric)
	}
	p("\nPer request, median (min–max, n):\n\n| Case | Prompt tok/s | Decode tok/s | TTFT s | Total s |\n| --- | --- | --- | --- | --- |\n")
	p("| %s | %s | %s | %s | %s |\n", protocol.CaseShortBurst, cell(contract.MetricPromptTPS), cell(contract.MetricDecodeTPS), cell(contract.MetricTTFT), cell(contract.MetricTotal))
}

// writeSanity writes the sanity counts by category and each case's verdict.
func writeSanity(p printer, r *contract.Results) {
	q := r.Quality
	p("\n## Sanity checks: %d/%d\n\n", q.Passed, q.Total)
	p("Instruction %d/%d, retrieval %d/%d, tool call %d/%d. Small functional checks, not an intelligence ranking.\n\n",
		q.Categories.Instruction.Passed, q.Categories.Instruction.Total, q.Categories.Retrieval.Passed, q.Categories.Retrieval.Total,
		q.Categories.ToolCall.Passed, q.Categories.ToolCall.Total)
	p("| Case | Status | Verdict | Reason |\n| --- | --- | --- | --- |\n")
	for _, rq := range r.Requests {
		if rq.Evaluation == nil {
			continue
		}
		verdict := "fail"
		if rq.Evaluation.Passed {
			verdict = "pass"
		}
		p("| %s | %s | %s | %s |\n", rq.CaseID, rq.Status, verdict, mdEscape(rq.Evaluation.Reason))
	}
}

// writeFailures lists every failed and skipped request with its error, and
// why the run stopped early.
func writeFailures(p printer, r *contract.Results) {
	var failures []string
	for _, rq := range r.Requests {
		if rq.Status == contract.Failed || rq.Status == contract.Skipped {
			msg := ""
			if rq.Error != nil {
				msg = rq.Error.Kind + ": " + rq.Error.Message
			}
			failures = append(failures, fmt.Sprintf("- %s: %s (%s)", rq.ID, rq.Status, mdEscape(msg)))
		}
	}
	p("\n## Failures and skipped requests\n\n")
	if len(failures) == 0 {
		p("None.\n")
	} else {
		p("%s\n", strings.Join(failures, "\n"))
	}
	if r.Extensions.Aborted != "" {
		p("\nThe run stopped early: %s.\n", mdEscape(r.Extensions.Aborted))
	}
}

// writeLimitations lists the run's limitations and where the reasons for
// its null values are.
func writeLimitations(p printer, r *contract.Results) {
	p("\n## Limitations\n\n")
	for _, l := range r.Extensions.Limitations {
		p("- %s\n", mdEscape(l))
	}
	p("- Values written \"%s\" are null in results.json; `missing` there gives the reason for each (%d entries).\n", notMeasured, len(r.Missing))
}

// writeEvidence lists the artifacts with their hashes, and how to check
// the folder again.
func writeEvidence(p printer, r *contract.Results) {
	p("\n## Evidence\n\n| Kind | File | SHA-256 |\n| --- | --- | --- |\n")
	for _, a := range r.Artifacts {
		p("| %s | [%s](%s) | `%s` |\n", mdEscape(a.Kind), mdEscape(a.Path), linkTarget(a.Path), escape.CodeSpan(a.SHA256))
	}
	p("\nRe-validate this folder with `strata bench report <folder>`.\n")
}

// writeEngineSection states the identified engine, how the reasoning budget
// was said to it, the preflight, and the evidence that thinking ran.
func writeEngineSection(p printer, ext contract.Extensions) {
	d := ext.EngineDialect
	if d == nil {
		return
	}
	name := string(d.Dialect.Engine)
	if d.Dialect.Build > 0 {
		name = fmt.Sprintf("%s b%d", name, d.Dialect.Build)
	}
	p("- Engine dialect: %s, identified by %s\n", mdEscape(name), mdEscape(d.Dialect.IdentifiedBy))
	switch {
	case d.ReasoningBudget.Field == nil && d.BudgetCheck.State != "":
		p("- Reasoning budget: no field sent; check: %s\n", mdEscape(d.BudgetCheck.State))
	case d.ReasoningBudget.Field != nil:
		p("- Reasoning budget sent: `%s: %d`; check: %s\n", escape.CodeSpan(*d.ReasoningBudget.Field), *d.ReasoningBudget.Value, mdEscape(d.BudgetCheck.State))
	}
	if pf := ext.Preflight; pf != nil {
		switch {
		case !pf.Verifiable:
			p("- Preflight (the engine's own template and tokenizer): not verifiable: %s\n", mdEscape(pf.Reason))
		case pf.Stopped != "":
			p("- Preflight (the engine's own template and tokenizer): %d of %d checked fixtures agree; %s\n", pf.Agree, pf.Agree+pf.Differ, mdEscape(pf.Stopped))
		case pf.Differ == 0 && pf.CountOnly():
			p("- Preflight (the engine's own tokenizer; it shows no rendering): all %d fixtures count as the bundle does\n", pf.Agree)
		case pf.Differ == 0 && (pf.TemplateAgrees || pf.EngineTemplateSHA256 == ""):
			p("- Preflight (the engine's own template and tokenizer): all %d fixtures agree with the bundle\n", pf.Agree)
		default:
			var ids []string
			for _, f := range pf.Fixtures {
				if !f.Agree {
					ids = append(ids, f.RequestID)
				}
			}
			tmpl := "the same template as the bundle"
			switch {
			case pf.TemplateAgrees:
			case pf.EngineTemplateSHA256 == "":
				tmpl = "a template it does not reveal"
			default:
				tmpl = "a template other than the bundle's"
			}
			// A difference that shows nothing of the workload (contract
			// Preflight.Differing) is said so, not left to read as the bold
			// one beside a complete status.
			switch {
			case len(pf.Differing()) > 0 || !pf.CountsAloneDiffer():
				p("- Preflight (the engine's own template and tokenizer): %s; the engine serves %s\n", preflightOutcomes(pf), tmpl)
			case pf.OffChatPath:
				p("- Preflight (the engine's own tokenizer, off its chat path): %d of %d fixtures count otherwise (%s), on a route that leaves out what the bundle's template reads, so they show nothing of the workload; the engine serves %s\n", pf.Differ, pf.Agree+pf.Differ, mdEscape(strings.Join(ids, ", ")), tmpl)
			default:
				p("- Preflight (the engine's own template and tokenizer): %d of %d fixtures count otherwise (%s), tool cases only, which this engine hands its template in its own shape of the tools, so they show nothing of the workload; the engine serves %s\n", pf.Differ, pf.Agree+pf.Differ, mdEscape(strings.Join(ids, ", ")), tmpl)
			}
		}
	}
	if t := ext.Thinking; t != nil {
		if len(t.WithoutReasoning) == 0 {
			p("- Thinking: reasoning arrived on all %d dispatched requests\n", t.Dispatched)
		} else {
			p("- Thinking: **%d of %d dispatched requests produced no reasoning** (%s), although the profile thinks\n", len(t.WithoutReasoning), t.Dispatched, mdEscape(strings.Join(t.WithoutReasoning, ", ")))
		}
	}
}

// preflightOutcomes names the fixtures of a preflight that did not agree,
// by outcome, in the words the terminal uses (contract
// PreflightFixture.Outcome), with why the first one not checked was not.
func preflightOutcomes(pf *contract.Preflight) string {
	by := pf.ByOutcome()
	var parts []string
	for _, o := range []string{contract.OutcomeDiffer, contract.OutcomeNotChecked} {
		if ids := by[o]; len(ids) > 0 {
			parts = append(parts, fmt.Sprintf("**%d of %d fixtures %s** (%s)", len(ids), len(pf.Fixtures), o, mdEscape(strings.Join(ids, ", "))))
		}
	}
	for _, f := range pf.Fixtures {
		if f.Outcome() == contract.OutcomeNotChecked {
			parts[len(parts)-1] += ": " + mdEscape(f.Problem)
			break
		}
	}
	return strings.Join(parts, "; ")
}

// capacityNote says what four clients released together meet on this
// server: the spec asks that queueing never be described as four-way
// parallel decoding.
func capacityNote(slots *int64) string {
	switch {
	case slots == nil:
		return "The server's configured capacity is not known, so whether the four requests queued or ran in parallel cannot be said."
	case protocol.Queues(*slots):
		return fmt.Sprintf("The server's configured capacity is %d slot(s): with fewer than %d, the requests queue, which is not %d-way parallel decoding.", *slots, protocol.ConcurrencyClients, protocol.ConcurrencyClients)
	}
	return fmt.Sprintf("The server's configured capacity is %d slots, enough for the %d requests to be decoded together.", *slots, protocol.ConcurrencyClients)
}

// mdEscape makes a string from the run (an operator's flag, an engine's
// answer) plain text on one Markdown line: no HTML, links, images or
// emphasis of its own, hidden characters as visible escapes.
func mdEscape(s string) string { return escape.Markdown(s) }

// linkTarget is a relative link to an artifact, with nothing in it that
// Markdown or a browser would read as a scheme or markup.
func linkTarget(p string) string {
	if strings.ContainsAny(p, ":()<> \"'") || strings.IndexFunc(p, escape.Hidden) >= 0 {
		return "#"
	}
	return p
}

// Diff rebuilds the README from results.json and lists where the
// folder's README.md differs (at most ten lines).
func Diff(dir string, r *contract.Results) []string {
	data, err := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	if err != nil {
		return []string{"README.md cannot be read: " + err.Error()}
	}
	var want strings.Builder
	_ = README(&want, r) // a strings.Builder's writes never fail
	got, exp := strings.Split(string(data), "\n"), strings.Split(want.String(), "\n")
	var out []string
	for i := 0; i < max(len(got), len(exp)); i++ {
		g, e := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			e = exp[i]
		}
		if g != e {
			out = append(out, fmt.Sprintf("README.md line %d differs from the numbers in results.json: has %q, results.json gives %q", i+1, clipLine(g), clipLine(e)))
			if len(out) == 10 {
				out = append(out, "README.md: further differences not listed")
				break
			}
		}
	}
	return out
}

func clipLine(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
