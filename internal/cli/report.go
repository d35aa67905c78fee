package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/report"
	"github.com/strata-bench/strata/internal/validate"
)

// reportOptions are the flags of report.
type reportOptions struct {
	quiet                bool
	chartsDir, bundleDir string
}

func newReport(env procstate.State) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use: "report DIR [DIR...]",
		Example: `  strata bench report bench-results/RUN
  strata bench report --charts charts/ bench-results/RUN`,
		Short: "Print a saved result again and re-validate it strictly",
		Long: `Print the plain report of a result folder and re-validate it strictly: the
format and schema version (unknown ones are rejected), the JSON Schema
(schema/strata-standard-benchmark-1.schema.json), exact types and no unknown
keys, every null explained in missing, the request records against the
protocol, count identities, metrics recomputed from tokens and timings,
summaries and concurrency rounds rebuilt from the records, every sanity verdict
re-scored from the saved outputs, artifact hashes, and relative paths. The
charts a folder lists (chart-*.svg) are drawn again from results.json and
compared byte for byte: a chart that differs is a violation naming it.

Each violation is one line naming its JSON Pointer; the exit code is 1 if there
is any. Several folders are checked one after another. It also rebuilds the
README.md numbers from results.json and notes where the folder's README.md
differs (an operator may have corrected it by hand, so that is a note, not a
violation). --charts OUT writes the run's charts as SVG files into OUT, which
must be outside the result folder (a result folder holds only what the spec
lists; a symbolic link into it is inside it), and a symbolic link where a chart
goes is refused, never written through.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs a result folder")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bundleFlag(env, o.bundleDir, args); err != nil {
				return err
			}
			var failed []string
			for _, arg := range args {
				dir := env.Path(arg)
				n, err := reportFolder(env, cmd.OutOrStdout(), dir, o)
				if err != nil {
					return err
				}
				if n > 0 {
					failed = append(failed, fmt.Sprintf("%s (%s)", dir, humanize.Count(n, "violation", "violations")))
				}
			}
			if len(failed) > 0 {
				return checkFailed("failed validation: " + strings.Join(failed, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only the validation outcome")
	cmd.Flags().StringVar(&o.bundleDir, "bundle", "", "the bundle folder for a result of the spec's protocol (default: ./bench/prompts/standard-v1)")
	cmd.Flags().StringVar(&o.chartsDir, "charts", "", "write SVG charts (prompt rate, decode rate, TTFT per case) into this folder, outside the result folder")
	return cmd
}

// reportFolder validates one result folder, prints its report (unless
// quiet), where its README.md differs and the outcome, and writes its
// charts; it returns the folder's number of violations.
func reportFolder(env procstate.State, w io.Writer, dir string, o reportOptions) (int, error) {
	bundle, err := folderBundle(env, dir, o.bundleDir)
	if err != nil {
		return 0, err
	}
	v, err := validate.Dir(dir, bundle)
	if err != nil {
		return 0, err
	}
	if v.Results != nil {
		if !o.quiet {
			if err := report.README(w, v.Results); err != nil {
				return 0, fmt.Errorf("print the report of %s: %w", dir, err)
			}
			printf(w, "\n")
		}
		for _, d := range report.Diff(dir, v.Results) {
			printf(w, "note: %s\n", d)
		}
		if o.chartsDir != "" {
			written, err := writeCharts(env.Path(o.chartsDir), dir, v.Results)
			if err != nil {
				return 0, err
			}
			printf(w, "charts: %s\n", strings.Join(written, ", "))
		}
	}
	if len(v.Violations) == 0 {
		printf(w, "valid: %s follows the result contract (%d requests, status %s)\n", dir, len(v.Results.Requests), v.Results.Run.Status)
		return 0, nil
	}
	printf(w, "INVALID: %s in %s\n", humanize.Count(len(v.Violations), "violation", "violations"), dir)
	for _, x := range v.Violations {
		printf(w, "  %s\n", x.String())
	}
	return len(v.Violations), nil
}

// writeCharts writes a run's charts into out, refusing a folder inside the
// result folder.
func writeCharts(out, resultDir string, r *contract.Results) ([]string, error) {
	cs, err := charts.ForRun(r)
	if err != nil {
		return nil, err
	}
	prefix := contract.Slug(r.Run.ID)
	var files []charts.File
	for _, m := range charts.Metrics() {
		files = append(files, charts.File{Name: prefix + "-" + m.Metric + ".svg", Data: cs[m.Metric]})
	}
	return charts.Write(out, []string{resultDir}, files)
}
