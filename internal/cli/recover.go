package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/benchrun"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/journal"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
)

func newRecover(env procstate.State) *cobra.Command {
	return &cobra.Command{
		Use:   "recover [DIR]",
		Short: "Turn a killed run's journal into a partial result folder",
		Long: `A run keeps a journal while it goes (a hidden .<folder>.pending folder beside
where its result folder will be): every finished request's record, synced to disk
before the next request is sent. When the runner is killed (SIGKILL, out of
memory, a power loss) the journal stays; recover turns it into a valid partial
result folder: the requests it had finished exactly as the run would have written
them, the one in flight failed ("the runner stopped"), the rest skipped. An
engine the runner started wrote its output into the pending folder, and the
result keeps that log up to the kill; a --engine-log file is read only after a
run, so a recovered --url run has no engine log.

DIR is a pending folder or a folder holding them; without DIR, every unrecovered
journal under the current folder's result location (bench/results, else
./bench-results). A journal a running strata still writes is left alone.`,
		Example: `  strata bench recover
  strata bench recover bench-results`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			pending, err := pendingJournals(env, args, w)
			if err != nil || len(pending) == 0 {
				return err
			}
			src := sources(env, "")
			bundles := benchrun.Bundles{
				Open: func(id string) (*fixtures.Bundle, error) {
					def, err := src.Protocol(id)
					if err != nil {
						return nil, err
					}
					return src.Open(def)
				},
				Redactor: func(b *fixtures.Bundle) *redact.Redactor { return result.Redactor(env.Private(), b) },
			}
			var failed []string
			for _, p := range pending {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				shown := escape.Line(p)
				if g := engineGroupOf(cmd.Context(), p, env.Clock()); g > 0 && runtime.GOOS != "linux" {
					// No parent-death signal here: the engine may have
					// outlived the runner that was killed.
					printf(w, "note: the run in %s started an engine as process group %d; if it still runs, stop it: kill -- -%d\n", shown, g, g)
				}
				out, err := benchrun.Recover(cmd.Context(), p, bundles, folder.Finish, env.Clock())
				switch {
				case journal.IsLocked(err):
					printf(w, "skipped %s: a running strata still writes it\n", shown)
				case err != nil:
					printf(w, "FAILED %s: %s (the folder was left as it was)\n", shown, escape.Line(err.Error()))
					failed = append(failed, shown)
				default:
					printf(w, "recovered: %s\n", escape.Line(out))
				}
			}
			if len(failed) > 0 {
				return checkFailed(fmt.Sprintf("%s could not be recovered: %s", humanize.Count(len(failed), "journal", "journals"), strings.Join(failed, ", ")))
			}
			return nil
		},
	}
}

// engineGroupOf reads the engine's process group from a journal's header
// (0 when it names none or cannot be read: recover then says so itself).
func engineGroupOf(ctx context.Context, pending string, now time.Time) int {
	j, err := journal.Read(ctx, pending, now)
	if err != nil {
		return 0
	}
	return j.Header.EngineGroup
}

// pendingJournals are the pending folders DIR (args) names, or those under
// the result location; with none it says so, and where.
func pendingJournals(env procstate.State, args []string, w io.Writer) ([]string, error) {
	where := benchrun.ResultsRoot(env.Dir)
	if len(args) == 1 {
		where = env.Path(args[0])
	}
	st, err := os.Stat(where)
	switch {
	case errors.Is(err, fs.ErrNotExist) && len(args) == 0:
		// No run has written a result here: nothing was lost.
		printf(w, "nothing to recover: no result folder %s yet\n", escape.Line(where))
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s does not exist: name a pending result folder or a folder holding them", args[0])
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", where, err)
	case !st.IsDir():
		return nil, usagef("%s is not a folder", where)
	}
	pending := journal.Pending(where)
	if _, err := os.Lstat(filepath.Join(where, journal.Name)); err == nil {
		// A folder holding a journal itself: recovered only if it is a
		// pending folder strata made (Recover checks).
		pending = []string{where}
	}
	if len(pending) == 0 {
		printf(w, "nothing to recover under %s\n", escape.Line(where))
	}
	return pending, nil
}
