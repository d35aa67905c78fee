package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/result"
)

func newReport(env Env) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print a saved result again and re-validate it strictly",
		Long: `Print the plain report of a result folder and re-validate it strictly: the
format and schema version (unknown ones are rejected), the JSON Schema
(schema/strata-standard-benchmark-1.schema.json), exact types and no unknown
keys, every null explained in missing, the request records against the
protocol, count identities, metrics recomputed from tokens and timings,
summaries and concurrency rounds rebuilt from the records, every sanity verdict
re-scored from the saved outputs, artifact hashes, and relative paths.

Each violation is one line naming its JSON Pointer; the exit code is 1 if there
is any.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes exactly one result folder, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			bundle, err := prompts.Bundle()
			if err != nil {
				return err
			}
			dir := env.Path(args[0])
			v, err := result.Validate(dir, bundle)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if v.Results != nil && !quiet {
				result.WriteReadme(w, v.Results)
				fmt.Fprintln(w)
			}
			if len(v.Violations) == 0 {
				fmt.Fprintf(w, "valid: %s follows the result contract (%d requests, status %s)\n", dir, len(v.Results.Requests), v.Results.Run.Status)
				return nil
			}
			fmt.Fprintf(w, "INVALID: %d violation(s) in %s\n", len(v.Violations), dir)
			for _, x := range v.Violations {
				fmt.Fprintln(w, "  "+x.String())
			}
			return checkFailed{fmt.Sprintf("%s failed validation with %d violation(s)", dir, len(v.Violations))}
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the validation outcome")
	return cmd
}
