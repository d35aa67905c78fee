package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/result"
)

func newReport(env Env) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "report DIR [DIR...]",
		Short: "Print a saved result again and re-validate it strictly",
		Long: `Print the plain report of a result folder and re-validate it strictly: the
format and schema version (unknown ones are rejected), the JSON Schema
(schema/strata-standard-benchmark-1.schema.json), exact types and no unknown
keys, every null explained in missing, the request records against the
protocol, count identities, metrics recomputed from tokens and timings,
summaries and concurrency rounds rebuilt from the records, every sanity verdict
re-scored from the saved outputs, artifact hashes, and relative paths.

Each violation is one line naming its JSON Pointer; the exit code is 1 if there
is any. Several folders are checked one after another.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs a result folder")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			bundle, err := prompts.Bundle()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			var failed []string
			for _, arg := range args {
				dir := env.Path(arg)
				v, err := result.Validate(dir, bundle)
				if err != nil {
					return err
				}
				if v.Results != nil && !quiet {
					result.WriteReadme(w, v.Results)
					fmt.Fprintln(w)
				}
				if len(v.Violations) == 0 {
					fmt.Fprintf(w, "valid: %s follows the result contract (%d requests, status %s)\n", dir, len(v.Results.Requests), v.Results.Run.Status)
					continue
				}
				fmt.Fprintf(w, "INVALID: %d violation(s) in %s\n", len(v.Violations), dir)
				for _, x := range v.Violations {
					fmt.Fprintln(w, "  "+x.String())
				}
				failed = append(failed, fmt.Sprintf("%s (%d violation(s))", dir, len(v.Violations)))
			}
			if len(failed) > 0 {
				return checkFailed{"failed validation: " + strings.Join(failed, ", ")}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the validation outcome")
	return cmd
}
