package benchrun

import (
	"context"
	"fmt"
	"io"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/preflight"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/runner"
)

// Check is `strata bench check`: the preflight on its own, one line per
// fixture to p.Stdout, then a total. It fails (exitcode.CheckFailed) on any
// difference or when nothing could be checked.
func Check(ctx context.Context, p Process, o Target) error {
	if err := o.validate(); err != nil {
		return err
	}
	p = p.withScreen()
	defer p.scr.Clear()
	w := p.Stdout
	prof, err := o.loadProfile(p)
	if err != nil {
		return err
	}
	bundle, err := o.bundle(p)
	if err != nil {
		return fmt.Errorf("refusing to check: %w", err)
	}
	t, err := connect(ctx, p, o, prof, nil)
	if err != nil {
		return err
	}
	defer t.stop()
	srv := runner.ProbeServer(ctx, t.client)
	fmt.Fprintf(w, "preflight of %s (%s) against the bundle of %s\n", t.baseURL, srv.Dialect.Name(), protocolLine(bundle))
	pf, err := preflightCheck(ctx, t.client, srv, bundle, func(line string) { fmt.Fprintln(w, line) })
	if err != nil {
		return err
	}
	for _, l := range pf.Summary() {
		fmt.Fprintln(w, l)
	}
	for _, l := range pf.LengthProblems() {
		fmt.Fprintf(w, "warning: a run would be nonconforming: %s\n", l)
	}
	if pf.Context != nil {
		for _, l := range preflight.Warnings(pf.Context) {
			fmt.Fprintf(w, "warning: %s\n", l)
		}
	}
	if !pf.OK() {
		if !pf.Verifiable {
			return exitcode.CheckFailed{Msg: "the preflight could not be done: " + pf.Reason}
		}
		return exitcode.CheckFailed{Msg: fmt.Sprintf("the engine's template or tokenizer differs from the bundle (%d of %d fixtures differ)", pf.Differ, len(pf.Fixtures))}
	}
	return nil
}

// preflightCheck runs the preflight. progress, when set, gets each line.
func preflightCheck(ctx context.Context, c *client.Client, srv record.Server, bundle *fixtures.Bundle, progress func(string)) (*contract.Preflight, error) {
	src, sum, err := prompts.Template(bundle)
	if err != nil {
		return nil, fmt.Errorf("refusing to run: %w", err)
	}
	tmpl, err := chattemplate.Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("the bundle's chat template: %w", err)
	}
	in := preflight.Input{Client: c, Dialect: srv.Dialect, Bundle: bundle, Template: tmpl, TemplateSHA256: sum, EngineTemplate: srv.Template,
		ContextTokens: srv.ContextSize}
	if progress != nil {
		in.Progress = func(_, _ int, f contract.PreflightFixture) { progress(f.Line()) }
	}
	return preflight.Check(ctx, in), nil
}

// reportPreflight prints what matters of a preflight before the warm-up:
// everything when it failed, one line when it agrees.
func reportPreflight(w io.Writer, pf *contract.Preflight, verbose bool) {
	if pf.Context != nil {
		for _, l := range preflight.Warnings(pf.Context) {
			fmt.Fprintf(w, "warning: %s\n", l)
		}
	}
	if pf.OK() && !verbose {
		what := "the engine's template and tokenizer agree with the bundle"
		if len(pf.Fixtures) > 0 && pf.Fixtures[0].RenderingUnchecked {
			what = "the engine's tokenizer counts as the bundle does (it shows no rendering)"
		}
		fmt.Fprintf(w, "preflight: %s on all %d fixtures\n", what, len(pf.Fixtures))
		return
	}
	if !pf.Verifiable {
		fmt.Fprintf(w, "preflight not verifiable: %s\n", pf.Reason)
		return
	}
	fmt.Fprintln(w, "preflight: the engine's own template and tokenizer DIFFER from the bundle:")
	for _, f := range pf.Fixtures {
		if !f.Agree {
			fmt.Fprintf(w, "  %s\n", f.Line())
		}
	}
	for _, l := range pf.Summary() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, l := range pf.LengthProblems() {
		fmt.Fprintf(w, "warning: the run will be nonconforming: %s\n", l)
	}
}
