package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/validate"
)

// compareHelp is the help text of the command compare.
const compareHelp = `Compare two result folders side by side: per prompt case and metric, each run's
median with its min–max and n, the difference (candidate − baseline), the ratio
and which way the candidate moved (faster/slower for a rate, lower/higher
latency for a time; within 0.5 % "about the same"), and the sanity verdicts next
to each other. Both folders are validated first.

It refuses to compare across protocol IDs or corpus SHAs, and unless the two
ran the same model and quantization. Byte-identical model files (the same
SHA-256s, whatever their paths) are the same model and quantization even when
no --quantization was declared, and the output says so; otherwise both runs
must declare the same quantization (bench run --quantization) and name the same
model. Cases and concurrency levels are never pooled (a case in one run only is
listed, not compared), and it warns loudly when the GPUs, CPU or engine
versions differ, since a claimed improvement needs a same-machine baseline.
--markdown prints Markdown; --charts DIR writes one SVG per metric, baseline
and candidate side by side.`

func newCompare(env procstate.State) *cobra.Command {
	var markdown bool
	var chartsDir string
	cmd := &cobra.Command{
		Use:   "compare BASELINE CANDIDATE [--markdown] [--charts DIR]",
		Short: "Compare two results side by side, per case and metric",
		Long:  compareHelp,
		Example: `  strata bench compare bench-results/RUN-A bench-results/RUN-B
  strata bench compare --markdown --charts charts/ bench-results/RUN-A bench-results/RUN-B`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare takes two result folders: BASELINE CANDIDATE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := validResults(env, args)
			if err != nil {
				return err
			}
			c, err := compare.New(rs[0], rs[1])
			var refusal *compare.Refusal
			if errors.As(err, &refusal) {
				return checkFailed(refusal.Error())
			}
			if err != nil {
				return err
			}
			write := c.WriteText
			if markdown {
				write = c.WriteMarkdown
			}
			if err := write(cmd.OutOrStdout()); err != nil {
				return fmt.Errorf("print the comparison: %w", err)
			}
			if chartsDir == "" {
				return nil
			}
			return writeCompareCharts(env, cmd.ErrOrStderr(), c, chartsDir, args)
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print Markdown")
	cmd.Flags().StringVar(&chartsDir, "charts", "", "write one SVG chart per metric into this folder, outside both result folders")
	return cmd
}

// validResults reads the result folders dirs name, each validated first:
// only a valid result is compared.
func validResults(env procstate.State, dirs []string) ([2]*contract.Results, error) {
	var rs [2]*contract.Results
	for i, a := range dirs {
		b, err := folderBundle(env, env.Path(a), "")
		if err != nil {
			return rs, err
		}
		v, err := validate.Dir(env.Path(a), b)
		if err != nil {
			return rs, err
		}
		if len(v.Violations) > 0 {
			return rs, fmt.Errorf("%s is not a valid result (%s, first: %s); run strata bench report on it", a, humanize.Count(len(v.Violations), "violation", "violations"), v.Violations[0])
		}
		rs[i] = v.Results
	}
	return rs, nil
}

// writeCompareCharts writes one SVG per metric into chartsDir, outside
// both result folders, and names each file written on w.
func writeCompareCharts(env procstate.State, w io.Writer, c *compare.Comparison, chartsDir string, dirs []string) error {
	cs, err := c.Charts()
	if err != nil {
		return err
	}
	var files []charts.File
	for _, m := range charts.Metrics() {
		files = append(files, charts.File{Name: "compare-" + m.Metric + ".svg", Data: cs[m.Metric]})
	}
	written, err := charts.Write(env.Path(chartsDir), []string{env.Path(dirs[0]), env.Path(dirs[1])}, files)
	for _, p := range written {
		printf(w, "chart: %s\n", p)
	}
	return err
}
