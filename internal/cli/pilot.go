package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/pilot"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/validate"
)

// pilotHelp is the help text of the command pilot, with the 2 % rule's
// threshold (%s) from its home.
const pilotHelp = `Print the evidence of the spec's activation checklist ("The draft becomes
final only after the measured pilot in the activation checklist") from result
folders, as Markdown, or with --json in a stable shape (format
"strata-pilot-evidence", version 1; the README documents it).

Each folder is validated first, exactly as strata bench report does. Per valid
folder: the machine, the engine (and whether it is a real one or strata's
simulator), the status with its reasons, the required and optional durations,
per performance case the requests that reached the cap and the measured prompt
lengths against the %s rule, the template check (the preflight: the engine's own
rendering and counts of every fixture, the tool cases included), the sanity
outcomes and the failed and skipped requests by kind. Across folders: the
sanity outcomes per case and the failures by kind. Then the checklist, once per
protocol ID, item by item: each shown by the folders that show it, or open. The
template check and the cases the mock server cannot show (insufficient context,
an error after a first delta, queueing with fewer than four slots) count only
on a real engine; two hardware configurations count only from complete runs, the
longer required duration marking the slower system. Nothing is inferred: an
item no valid folder shows stays open.

A folder that fails validation is listed with its error and violations and is
no evidence; the others are still printed, and the exit code is 1. A name that
is not a folder, or the same folder twice, is a usage error (exit 2) before
anything is read. A copy of a folder (the same run ID, or the same outputs.jsonl)
is the same run: it is listed as a copy of the first and counted once.`

func newPilot(env procstate.State) *cobra.Command {
	var asJSON bool
	var bundleDir string
	cmd := &cobra.Command{
		Use:   "pilot DIR... [--json]",
		Short: "Print the activation checklist's evidence from result folders",
		Long:  fmt.Sprintf(pilotHelp, protocol.LengthTolerance()),
		Example: `  strata bench pilot bench/results/*/
  strata bench pilot --json bench/results/RUN-A bench/results/RUN-B`,
		Args: func(cmd *cobra.Command, args []string) error {
			return pilotArgs(env, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bundleFlag(env, bundleDir, args); err != nil {
				return err
			}
			inputs := make([]pilot.Input, 0, len(args))
			for _, arg := range args {
				dir := env.Path(arg)
				in := pilot.Input{Path: filepath.ToSlash(arg)}
				if in.Bundle, in.Err = folderBundle(env, dir, bundleDir); in.Err == nil {
					in.Validation, in.Err = validate.Dir(dir, in.Bundle)
				}
				inputs = append(inputs, in)
			}
			rep := pilot.Build(inputs, pilot.Options{Energy: pilot.ResultsEnergy})
			write := rep.WriteMarkdown
			if asJSON {
				write = rep.WriteJSON
			}
			if err := write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if bad := rep.Invalid(); len(bad) > 0 {
				names := make([]string, len(bad))
				for i, f := range bad {
					names[i] = f.Path
				}
				return checkFailed(fmt.Sprintf("%s not valid, no evidence: %s", humanize.Count(len(bad), "folder is", "folders are"), strings.Join(names, ", ")))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the evidence as JSON (format strata-pilot-evidence, version 1)")
	cmd.Flags().StringVar(&bundleDir, "bundle", "", "the bundle folder for results of the spec's protocol (default: ./bench/prompts/standard-v1)")
	return cmd
}

// pilotArgs refuses, before any folder is read, no folder, a name that is
// not a folder, and a folder named twice (it would count as two pieces of
// evidence).
func pilotArgs(env procstate.State, args []string) error {
	if len(args) == 0 {
		return usagef("pilot needs at least one result folder")
	}
	seen := map[string]string{}
	for _, arg := range args {
		dir := env.Path(arg)
		st, err := os.Stat(dir)
		switch {
		case err != nil:
			return usagef("pilot: %s is not a result folder: %v", arg, err)
		case !st.IsDir():
			return usagef("pilot: %s is not a result folder: it is a file", arg)
		}
		key := filepath.Clean(dir)
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if first, ok := seen[key]; ok {
			return usagef("pilot: %s and %s are the same folder; name each result once", first, arg)
		}
		seen[key] = arg
	}
	return nil
}
