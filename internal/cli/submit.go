package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/submit"
	"github.com/strata-bench/strata/internal/validate"
)

func newSubmit(env procstate.State) *cobra.Command {
	return &cobra.Command{
		Use:     "submit DIR",
		Example: `  strata bench submit bench-results/RUN`,
		Short:   "Check a result folder; print its pull request (uploads nothing)",
		Long: `Check a result folder before you share it: the strict validator (with every
artifact hash), and a scan of every file for private data the redactor would
replace (home folders, user and host names, machine paths, private addresses,
e-mail and MAC addresses, keys). Then print, ready to paste, the pull request's
title in the spec's form (benchmark: <GPU> / <model> / <quant> / <protocol-id>)
and a body that links the report, names required versus optional stages and
lists every failed, skipped, missing and nonconforming measurement. Nothing is
uploaded. A folder without an engine log is not ready either: step 2 of the
spec's "Submit and review" asks for the engine logs (bench run --engine-log
FILE, or --profile). Exit 1 when a check fails (and no text is printed).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("submit takes one result folder")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := env.Path(args[0])
			b, err := folderBundle(env, dir, "")
			if err != nil {
				return err
			}
			v, err := validate.Dir(dir, b)
			if err != nil {
				return giveOne(err, args[0])
			}
			w := cmd.OutOrStdout()
			findings, err := submit.Scan(dir, result.Redactor(env.Private(), b))
			if err != nil {
				return err
			}
			noLog := ""
			if v.Results != nil {
				noLog = submit.NoEngineLog(v.Results)
			}
			if len(v.Violations) > 0 || len(findings) > 0 || noLog != "" {
				for _, x := range v.Violations {
					printf(w, "invalid: %s\n", x)
				}
				for _, f := range findings {
					printf(w, "private data: %s\n", f)
				}
				why := fmt.Sprintf("%s, %s", humanize.Count(len(v.Violations), "violation", "violations"), humanize.Count(len(findings), "private finding", "private findings"))
				if noLog != "" {
					printf(w, "incomplete: %s\n", noLog)
					why += ", no engine log (--engine-log)"
				}
				return checkFailed(fmt.Sprintf("%s is not ready to share: %s", dir, why))
			}
			printf(w, "Title:\n%s\n\nBody:\n%s", submit.Title(v.Results), submit.Body(v.Results, filepath.Base(dir)))
			return nil
		},
	}
}

// giveOne adds to the error of a folder that holds result folders, not
// one, the command that submits one of them.
func giveOne(err error, arg string) error {
	var nr validate.NotResultFolder
	if !errors.As(err, &nr) || len(nr.Inside) == 0 {
		return err
	}
	which := "give one of them"
	if len(nr.Inside) == 1 {
		which = "give it"
	}
	return fmt.Errorf("%w; %s: strata bench submit %s", err, which, filepath.Join(arg, nr.Inside[0]))
}
