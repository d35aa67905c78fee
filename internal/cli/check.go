package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/runner"
)

func newCheck(env Env) *cobra.Command {
	var o targetOptions
	cmd := &cobra.Command{
		Use:   "check (--url URL | --profile NAME | --simulate) [flags]",
		Short: "Check the engine's own chat template and tokenizer against the frozen bundle",
		Long: `Check, before any benchmark request, that the engine renders and counts the
protocol's prompts exactly as the bundle was built: every fixture is rendered by
the engine (POST /apply-template with the exact chat body a run sends, tools and
template kwargs included) and tokenized by it (POST /tokenize). The rendering is
compared byte for byte with strata's rendering of the fixture with the template
the bundle was built with, the count with the fixture's frozen input_tokens, and
the engine's template (/props chat_template) with the SHA-256 in the bundle's
build.json. One line per fixture, then a total.

No completion is requested, so the engine stays freshly loaded. bench run runs
the same check before its warm-up and records it in the result. An engine
without these endpoints gets "not verifiable" with the reason.

Exit 0 when every fixture agrees, 1 on any difference or when nothing could be
checked.`,
		Example: `  strata bench check --url http://127.0.0.1:8080
  strata bench check --profile llama-3060
  strata bench check --simulate`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(cmd.Context(), cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "base URL of a server that is already running")
	f.StringVar(&o.profile, "profile", "", "engine profile (started if it is not serving, and stopped after)")
	f.BoolVar(&o.simulate, "simulate", false, "check strata's simulated engine")
	f.BoolVar(&o.noStart, "no-start", false, "never start an engine: use the one serving at the profile's URL or fail")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "name of an environment variable holding the server's API key")
	return cmd
}

func runCheck(ctx context.Context, cmd *cobra.Command, env Env, o targetOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	stderr, w := cmd.ErrOrStderr(), cmd.OutOrStdout()
	prof, cleanup, err := o.loadProfile(env)
	if err != nil {
		return err
	}
	defer cleanup()
	bundle, err := prompts.Bundle()
	if err != nil {
		return fmt.Errorf("refusing to check: %w", err)
	}
	t, err := connect(ctx, env, o, prof, stderr)
	if err != nil {
		return err
	}
	defer t.stop()
	srv := runner.ProbeServer(ctx, t.client)
	fmt.Fprintf(w, "preflight of %s (%s) against bundle %s\n", t.baseURL, srv.Dialect.Name(), prompts.Where)
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
		for _, l := range pf.Context.Warnings() {
			fmt.Fprintf(w, "warning: %s\n", l)
		}
	}
	if !pf.OK() {
		if !pf.Verifiable {
			return checkFailed{"the preflight could not be done: " + pf.Reason}
		}
		return checkFailed{fmt.Sprintf("the engine's template or tokenizer differs from the bundle (%d of %d fixtures differ)", pf.Differ, len(pf.Fixtures))}
	}
	return nil
}
