package benchrun

import (
	"context"
	"fmt"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/preflight"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/runner"
)

// Check is `strata bench check`: the preflight on its own, one line per
// fixture to p.Stdout, then a total. It fails (exitcode.CheckFailed) on any
// difference or when nothing could be checked.
func Check(ctx context.Context, st procstate.State, o Target) error {
	if err := o.validate(); err != nil {
		return err
	}
	p, err := newSession(st)
	if err != nil {
		return err
	}
	defer p.scr.Clear()
	w := lineOut(p.Stdout)
	prof, err := o.loadProfile(p)
	if err != nil {
		return err
	}
	bundle, err := o.bundle(p)
	if err != nil {
		return fmt.Errorf("refusing to check: %w", err)
	}
	t, err := connect(ctx, p, o, prof, bundle, nil, "")
	if err != nil {
		return err
	}
	defer t.close()
	srv := runner.ProbeServer(ctx, t.client)
	if err := t.checkKey(srv, bundle); err != nil {
		return err
	}
	w.Line("preflight of %s (%s) against the bundle of %s", t.baseURL, dialect.Of(srv.Dialect).Name(), protocolLine(bundle))
	pf, err := preflightCheck(ctx, t.client, srv, bundle, t.redactor(p, bundle), func(line string) { w.Line("%s", line) })
	if err != nil {
		return err
	}
	for _, l := range preflight.Summary(pf) {
		w.Line("%s", l)
	}
	for _, l := range pf.LengthProblems() {
		w.Line("warning: a run would be nonconforming: %s", l)
	}
	if pf.Context != nil {
		for _, l := range preflight.Warnings(pf.Context) {
			w.Line("warning: %s", l)
		}
	}
	if !pf.OK() {
		if !pf.Verifiable {
			return exitcode.CheckFailed{Msg: "the preflight could not be done: " + pf.Reason}
		}
		return exitcode.CheckFailed{Msg: fmt.Sprintf("%s (%s)", preflightVerdict(pf), pf.Tally())}
	}
	return nil
}

// preflightCheck runs the preflight. progress, when set, gets each line.
func preflightCheck(ctx context.Context, c *client.Client, srv record.Server, bundle *fixtures.Bundle, red *redact.Redactor, progress func(string)) (*contract.Preflight, error) {
	src, sum, err := prompts.Template(bundle)
	if err != nil {
		return nil, fmt.Errorf("refusing to run: %w", err)
	}
	tmpl, err := chattemplate.Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("the bundle's chat template: %w", err)
	}
	in := preflight.Input{Client: c, Dialect: dialect.Of(srv.Dialect), Bundle: bundle, Template: tmpl, TemplateSHA256: sum, EngineTemplate: srv.Template,
		ContextTokens: srv.ContextSize, Redact: red.String}
	if progress != nil {
		in.Progress = func(_, _ int, f contract.PreflightFixture) { progress(preflight.FixtureLine(f)) }
	}
	return preflight.Check(ctx, in), nil
}

// preflightVerdict says what a verifiable preflight that is not OK showed:
// a difference, or nothing, as no fixture could be checked.
func preflightVerdict(pf *contract.Preflight) string {
	if len(pf.ByOutcome()[contract.OutcomeDiffer]) == 0 && (pf.TemplateAgrees || pf.EngineTemplateSHA256 == "") {
		return "the engine's own template and tokenizer were " + contract.OutcomeNotChecked + " against the bundle"
	}
	if pf.TemplateAgrees {
		// The same template, another prompt: the engine's chat path
		// changes what reaches it (Ollama's reading of the tools).
		return "the engine's own rendering DIFFERS from the bundle's, with the bundle's chat template"
	}
	return "the engine's own template and tokenizer DIFFER from the bundle"
}

// reportPreflight prints what matters of a preflight before the warm-up:
// everything when it failed, one line when it agrees.
func reportPreflight(w Printer, pf *contract.Preflight, verbose bool) {
	if pf.Context != nil {
		for _, l := range preflight.Warnings(pf.Context) {
			w.Line("warning: %s", l)
		}
	}
	if pf.OK() && !verbose {
		what := "the engine's template and tokenizer agree with the bundle"
		if len(pf.Fixtures) > 0 && pf.Fixtures[0].RenderingUnchecked {
			what = "the engine's tokenizer counts as the bundle does (it shows no rendering)"
		}
		w.Line("preflight: %s on all %d fixtures", what, len(pf.Fixtures))
		return
	}
	if !pf.Verifiable {
		w.Line("preflight not verifiable: %s", pf.Reason)
		return
	}
	w.Line("preflight: %s:", preflightVerdict(pf))
	for _, f := range pf.Fixtures {
		if !f.Agree {
			w.Line("  %s", preflight.FixtureLine(f))
		}
	}
	for _, l := range preflight.Summary(pf) {
		w.Line("  %s", l)
	}
	for _, l := range pf.LengthProblems() {
		w.Line("warning: the run will be nonconforming: %s", l)
	}
}
