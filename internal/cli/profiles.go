package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
)

func newProfiles(env procstate.State) *cobra.Command {
	return &cobra.Command{
		Use:     "profiles",
		Example: `  strata bench profiles`,
		Short:   "List the engine profiles found",
		Long: `List the engine profiles strata can find: ./profiles/NAME.toml, then
strata/profiles/NAME.toml in the user config folder (the first of a name wins),
and the built-in "simulator". A profile that does not parse is listed with its
error.

A profile is a small TOML file:

  url          = "http://127.0.0.1:8080"      # what the engine serves
  command      = ["llama-server", "-m", "/models/q-00001-of-00002.gguf", "--port", "8080"]
  workdir      = "/opt/llama"                 # optional
  load_timeout = "10m"                        # optional
  api_key_env  = "LLAMA_API_KEY"              # the variable's name, never the key
  model_files  = ["/models/q-*.gguf"]         # optional, paths or globs
  [env]
  CUDA_VISIBLE_DEVICES = "0"
  [identity]                                  # operator-declared; flags win
  track = "default"
  track_notes = "0.2.1 release, setup defaults"
  quantization = "IQ3_XXS"

Unknown keys are an error.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			bad := 0
			for _, p := range engine.List(env.Dir) {
				if p.Err != nil {
					bad++
					printf(w, "%-20s %s\n  error: %v\n", p.Name, p.Path, p.Err)
					continue
				}
				printf(w, "%-20s %s\n", p.Name, p.Path)
			}
			printf(w, "(looked in %v)\n", engine.Dirs(env.Dir))
			if bad > 0 {
				return checkFailed(fmt.Sprintf("%s not parse", humanize.Count(bad, "profile does", "profiles do")))
			}
			return nil
		},
	}
}

func newProfileCheck(env procstate.State) *cobra.Command {
	return &cobra.Command{
		Use: "check NAME",
		Example: `  strata bench profile check simulator
  strata bench profile check my-llama-server`,
		Short: "Validate an engine profile",
		Long: `Read and validate a profile: TOML syntax, no unknown keys, a loopback url, a
command that exists, a valid load_timeout, an existing workdir, api_key_env
naming a variable, and the identity track. Every problem is listed; exit 1 if any.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("profile check takes one profile name")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == engine.SimulatorName {
				printf(cmd.OutOrStdout(), "simulator: built-in profile (strata engine simulate on a free loopback port); ok\n")
				return nil
			}
			p, err := engine.Load(args[0], env.Dir)
			if err != nil {
				return err
			}
			errs := p.Check()
			w := cmd.OutOrStdout()
			if len(errs) == 0 {
				printf(w, "%s (%s): ok\n  url %s\n  command %v\n", p.Name, p.Path, p.URL, p.Command)
				return nil
			}
			printf(w, "%s (%s): %s\n", p.Name, p.Path, humanize.Count(len(errs), "problem", "problems"))
			for _, e := range errs {
				printf(w, "  %v\n", e)
			}
			return checkFailed(fmt.Sprintf("profile %s is not usable", p.Name))
		},
	}
}
