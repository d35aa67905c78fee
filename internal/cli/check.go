package cli

import (
	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/benchrun"
	"github.com/strata-bench/strata/internal/procstate"
)

func newCheck(env procstate.State) *cobra.Command {
	var o benchrun.Target
	cmd := &cobra.Command{
		Use:   "check (--url URL | --profile NAME | --simulate) [flags]",
		Short: "Hold the engine's own template and tokenizer to the bundle",
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
			st := env
			st.Stdout, st.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return benchrun.Check(cmd.Context(), st, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", "", "the root URL of a server that is already running, e.g. http://127.0.0.1:8080, not …/v1")
	f.StringVar(&o.Profile, "profile", "", "engine profile (started if it is not serving, and stopped after)")
	f.BoolVar(&o.Simulate, "simulate", false, "check strata's simulated engine")
	f.BoolVar(&o.NoStart, "no-start", false, "never start an engine: use the one serving at the profile's URL or fail")
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", "name of an environment variable holding the server's API key")
	f.StringVar(&o.Protocol, "protocol", "", "the protocol whose bundle to check against (default: the spec's inside a Strata checkout, else strata's stand-in)")
	f.StringVar(&o.BundleDir, "bundle", "", "the bundle folder of a checkout's protocol (default: ./bench/prompts/standard-v1)")
	return cmd
}
