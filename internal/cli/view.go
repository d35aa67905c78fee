package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/site"
	"github.com/strata-bench/strata/internal/validate"
)

// viewHelp is the help text of the command view.
const viewHelp = `Show result folders on this machine with the results site's own pages: each
folder gets the run page the site draws (identity, per-case medians with ranges,
charts, sanity verdicts, concurrency rounds, evidence with hashes), and every
two valid folders a compare page where strata bench compare compares them (the
earlier run as the baseline, up to 8 pairs a folder, nearest in time first; a
pair it refuses is listed with its reasons). A folder of any status is shown:
complete, partial or nonconforming, simulated or on a real engine, interrupted
or recovered. Every page says "local — not reviewed": a run is approved only by
review, on the site of a results repository (bench site), never here.

Each folder is validated first, as bench report does. A folder that fails is
still shown, labelled invalid, with its violations on its page and a warning
here, and it is compared with nothing (bench compare compares only valid
results): this view is where one looks at a run that went wrong, and the exit
code stays 0 (bench report is the check). A path that is not a result folder (no
results.json) is refused with exit 2 before anything is written.

--out DIR writes the pages into DIR: a new or empty folder, or an earlier site
or view, which is replaced; never a folder inside a result folder. --serve
serves them on loopback (--addr) until Ctrl-C, from --out or else from a
temporary folder removed when it stops, with the site's Content-Security-Policy,
nosniff, and all evidence as plain text.`

// viewOptions are the flags of view.
type viewOptions struct {
	out, addr, bundleDir string
	serve                bool
}

func newView(env procstate.State) *cobra.Command {
	var o viewOptions
	cmd := &cobra.Command{
		Use:   "view DIR [DIR...] (--out DIR | --serve)",
		Short: "Show result folders with the site's run and compare pages, marked local — not reviewed",
		Long:  viewHelp,
		Example: `  strata bench view --serve bench-results/RUN
  strata bench view --out view bench-results/RUN-A bench-results/RUN-B
  strata bench view --serve --addr 127.0.0.1:8001 bench-results/*/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("view needs a result folder")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runView(cmd, env, args, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write the pages here (new, empty, or an earlier site or view)")
	f.BoolVar(&o.serve, "serve", false, "serve the pages on loopback until Ctrl-C")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8000", "loopback address for --serve")
	f.StringVar(&o.bundleDir, "bundle", "", "the bundle folder of a checkout's protocol, as bench report --bundle")
	return cmd
}

func runView(cmd *cobra.Command, env procstate.State, args []string, o viewOptions) error {
	if o.out == "" && !o.serve {
		return usagef("view writes its pages with --out DIR, serves them with --serve, or both")
	}
	if o.serve {
		if err := previewAddr(o.addr); err != nil {
			return err
		}
	}
	dirs, err := viewDirs(env, args)
	if err != nil {
		return err
	}
	if err := bundleFlag(env, o.bundleDir, args); err != nil {
		return err
	}
	out := env.Path(o.out)
	if o.out != "" {
		if _, err := charts.Outside("--out", out, dirs); err != nil {
			return err
		}
	}
	folders, err := viewFolders(env, cmd, args, dirs, o.bundleDir)
	if err != nil {
		return err
	}
	s, err := site.View(folders)
	if err != nil {
		return err
	}
	if o.out == "" {
		tmp, err := os.MkdirTemp("", "strata-view-")
		if err != nil {
			return err
		}
		// Best effort: the preview has ended, and what is left is a
		// temporary folder's.
		defer func() { _ = os.RemoveAll(tmp) }()
		out = filepath.Join(tmp, "view")
	}
	if err := site.Build(s, out); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	where := out
	if o.out == "" {
		where = "a temporary folder, removed when the preview stops"
	}
	printf(w, "view: %s (%s, %s; %s)\n", where, humanize.Count(len(folders), "folder", "folders"),
		humanize.Count(comparePages(out), "compare page", "compare pages"), site.LocalMark)
	if !o.serve {
		return nil
	}
	return serveDir(cmd.Context(), out, o.addr, w)
}

// viewDirs resolves the folders bench view is given, refusing before any
// work a path that is not a result folder and a folder given twice.
func viewDirs(env procstate.State, args []string) ([]string, error) {
	var dirs []string
	seen := map[string]string{}
	for _, arg := range args {
		dir := filepath.Clean(env.Path(arg))
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, usagef("%s: no such folder", arg)
		case err != nil:
			return nil, usagef("%s is not a result folder: %v", arg, err)
		case !st.IsDir():
			return nil, usagef("%s is a file, not a result folder", arg)
		case !isResultFolder(dir):
			err := validate.ResultFolder(arg, dir)
			if held := resultFoldersIn(arg, dir); len(held) > 0 {
				return nil, usagef("%v; give them instead: strata bench view %s", err, strings.Join(held, " "))
			}
			return nil, usagef("%v", err)
		case seen[dir] != "":
			return nil, usagef("%s is given twice (%s, %s)", dir, seen[dir], arg)
		}
		seen[dir] = arg
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// viewFolders validates each folder as bench report does, and warns of
// each invalid one, whose page lists its violations.
func viewFolders(env procstate.State, cmd *cobra.Command, args, dirs []string, bundleDir string) ([]site.Folder, error) {
	var folders []site.Folder
	for i, dir := range dirs {
		bundle, err := folderBundle(env, dir, bundleDir)
		if err != nil {
			return nil, err
		}
		v, err := validate.Dir(dir, bundle)
		if err != nil {
			return nil, err
		}
		f := site.Folder{Name: filepath.Clean(args[i]), Dir: dir, Results: v.Results}
		for _, x := range v.Violations {
			f.Violations = append(f.Violations, x.String())
		}
		if len(f.Violations) > 0 {
			printf(cmd.ErrOrStderr(), "warning: %s is not a valid result (%s, first: %s): its page lists them, and it is compared with nothing\n",
				args[i], humanize.Count(len(f.Violations), "violation", "violations"), f.Violations[0])
		}
		folders = append(folders, f)
	}
	return folders, nil
}

// comparePages counts the compare pages of a built site or view.
func comparePages(out string) int {
	pages, err := filepath.Glob(filepath.Join(out, "compare", "*.html"))
	if err != nil {
		return 0 // the pattern is fixed and well formed
	}
	return len(pages)
}

// isResultFolder reports whether dir holds a results.json
// (validate.ResultFolder).
func isResultFolder(dir string) bool {
	return validate.ResultFolder(dir, dir) == nil
}

// resultFoldersIn names the result folders directly inside dir (named as
// arg, the way the user wrote it), at most three and then how many more.
func resultFoldersIn(arg, dir string) []string {
	var nr validate.NotResultFolder
	if !errors.As(validate.ResultFolder(arg, dir), &nr) {
		return nil
	}
	var held []string
	for _, name := range nr.Inside {
		held = append(held, filepath.Join(arg, name))
	}
	sort.Strings(held)
	if n := len(held); n > 3 {
		held = append(held[:3], fmt.Sprintf("and %d more", n-3))
	}
	return held
}
