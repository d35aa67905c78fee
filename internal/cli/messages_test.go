package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestNotAResultFolder: bench report, compare and submit on a folder with
// no results.json say that it is not a result folder, not what a file
// system call said about a file in it.
func TestNotAResultFolder(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	mustWrite(t, filepath.Join(work, "plain", "notes.txt"), "not a result\n")
	plain := filepath.Join(work, "plain")
	want := plain + " is not a result folder (no results.json)"
	for _, args := range [][]string{
		{"bench", "report", "plain"},
		{"bench", "compare", "plain", results(t, "baseline")},
		{"bench", "submit", "plain"},
	} {
		r := runIn(t, work, "", args...)
		if r.code != exitcode.Failed || !strings.Contains(r.stderr, "strata: "+want+"\n") || strings.Contains(r.stdout+r.stderr, "lstat") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d with %q", args, r.code, r.stdout, r.stderr, exitcode.Failed, want)
		}
	}
}

// TestSubmitFolderOfResults: bench submit given the folder that holds
// result folders (bench-results) names them and says to give one, and
// calls nothing in them private data.
func TestSubmitFolderOfResults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		runs []string
		says string
	}{
		{[]string{"baseline"}, "it holds 1 result folder: run-baseline; give it: strata bench submit "},
		{[]string{"baseline", "candidate"}, "it holds 2 result folders: run-baseline, run-candidate; give one of them: strata bench submit "},
	} {
		work := t.TempDir()
		for _, name := range c.runs {
			copyDir(t, results(t, name), filepath.Join(work, "bench-results", "run-"+name))
		}
		mustWrite(t, filepath.Join(work, "bench-results", "notes", "x.txt"), "not a result\n")
		r := runIn(t, work, "", "bench", "submit", "bench-results")
		want := filepath.Join(work, "bench-results") + " is not a result folder (no results.json); " + c.says + filepath.Join("bench-results", "run-baseline") + "\n"
		if r.code != exitcode.Failed || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "private data") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d with %q", c.runs, r.code, r.stdout, r.stderr, exitcode.Failed, want)
		}
	}
}

// TestUnknownCommandBeforeFlags: a mistyped command is named as one, with
// the command meant, also when flags follow it (flags the mistyped command
// would have taken are no unknown flags of the level above); a flag that
// no command takes is still an unknown flag.
func TestUnknownCommandBeforeFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args       []string
		want, help string
	}{
		{[]string{"becnh", "run", "--simulate"}, `unknown command "becnh" for "strata"; did you mean "bench"?`, "Run 'strata --help' for usage."},
		{[]string{"becnh", "--simulate"}, `unknown command "becnh" for "strata"; did you mean "bench"?`, "Run 'strata --help' for usage."},
		{[]string{"bench", "runn", "--simulate", "--results-dir", "x"}, `unknown command "runn" for "strata bench"; did you mean "run"?`, "Run 'strata bench --help' for usage."},
		{[]string{"bench", "corpus", "verfy", "--protocol", "p"}, `did you mean "verify"?`, "Run 'strata bench corpus --help' for usage."},
		{[]string{"bench", "--simulate"}, "unknown flag: --simulate", "Run 'strata bench --help' for usage."},
		{[]string{"bench", "run", "--simulat"}, "unknown flag: --simulat", "Run 'strata bench run --help' for usage."},
	} {
		r := runIn(t, t.TempDir(), "", c.args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, c.help) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q and %q", c.args, r.code, r.stderr, exitcode.Usage, c.want, c.help)
		}
	}
}

// TestTypedPathsAreShown: a path the user typed is shown as typed (and as
// resolved against the working folder), never as <secret>, though its last
// name is one the terminal's filter reads as a secret setting's (passwd)
// or a provider's key (ghp_…).
func TestTypedPathsAreShown(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	passwd := filepath.Join(work, "etc", "passwd")
	mustWrite(t, passwd, "root:x:0:0\n")
	mustWrite(t, filepath.Join(work, "passwd"), "root:x:0:0\n")
	local := filepath.Join(work, "passwd")
	token := filepath.Join(work, "x", "ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Jf0Ks2Ma4Q")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "run", "--simulate", "--results-dir", passwd}, "--results-dir " + passwd + ": " + passwd + " is a file, not a folder for results"},
		{[]string{"bench", "run", "--simulate", "--results-dir=" + passwd}, "--results-dir " + passwd + ": " + passwd + " is a file, not a folder for results"},
		{[]string{"bench", "run", "--simulate", "--results-dir", "passwd"}, "--results-dir " + local + ": " + local + " is a file, not a folder for results"},
		{[]string{"bench", "report", passwd}, "result folder " + passwd + ": not a folder"},
		{[]string{"bench", "report", token}, "result folder " + token + ": "},
	} {
		r := runIn(t, work, "", c.args...)
		if r.code == exitcode.OK || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "<secret>") {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
