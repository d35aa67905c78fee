package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/version"
)

// TestRunWithoutACommitWarnsFirst: a binary with no commit source (no VCS
// stamp, no COMMIT file beside it, no checkout of its own: a go install
// …@version) says so on the run's first line and warns, before anything is
// sent to the engine, that the run will be nonconforming, naming how to
// get an install that has a commit; the result has strata_commit null,
// the no_commit reason and the module version. The warning is said once.
func TestRunWithoutACommitWarnsFirst(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	var out, errb strings.Builder
	env := testEnv(t, work, strings.NewReader(""), &out, &errb)
	env.Build = &version.Build{ModuleVersion: "v1.2.3"}
	if code := Run(t.Context(), []string{"bench", "run", "--simulate"}, env); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	stderr := errb.String()
	lines := strings.Split(stderr, "\n")
	warning := "warning: the run will be nonconforming: this install has no commit (strata_commit will be null: no VCS stamp in the binary"
	if !strings.HasPrefix(lines[0], "strata "+version.Version+": commit unknown: no VCS stamp") ||
		!strings.HasPrefix(lines[1], warning) || !strings.Contains(lines[1], install.Conforming) {
		t.Errorf("first lines:\n%s", stderr)
	}
	if n := strings.Count(stderr, "install has no commit"); n != 1 {
		t.Errorf("the missing commit is said %d times:\n%s", n, stderr)
	}
	if i := strings.Index(stderr, "\nengine: "); i < 0 || i < strings.Index(stderr, warning) {
		t.Errorf("the warning does not come before the engine is asked anything:\n%s", stderr)
	}
	res, _ := readResults(t, work)
	kinds := map[contract.ReasonKind]bool{}
	for _, r := range res.Extensions.StatusReasons.Nonconforming {
		kinds[r.Kind] = true
	}
	ext := res.Extensions.Install
	if res.Software.StrataCommit != nil || !kinds[contract.NoCommit] || ext == nil || ext.ModuleVersion != "v1.2.3" || ext.CommitFrom != "" || ext.NoCommit == "" {
		t.Errorf("commit %v, reasons %v, install %+v", res.Software.StrataCommit, kinds, ext)
	}
}

// TestRunRecordsWhereItsCommitCameFrom: a run's first line names the commit
// and its source, the result records both, and a checkout around the
// working folder that is not the binary's own is warned of and not used.
func TestRunRecordsWhereItsCommitCameFrom(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	head := submissions.Checkout(t, work)
	r := runIn(t, work, "", "bench", "run", "--simulate")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(r.stderr, "\n")
	if lines[0] != "strata "+version.Version+": commit "+testCommit+" from the binary's embedded VCS stamp" ||
		!strings.HasPrefix(lines[1], "warning: the working folder is inside the strata checkout "+work+" (at "+head+")") ||
		!strings.Contains(lines[1], "the binary's own commit "+testCommit+" is recorded") {
		t.Errorf("first lines:\n%s", r.stderr)
	}
	res, _ := readResults(t, work)
	if c := res.Software.StrataCommit; c == nil || *c != testCommit || res.Extensions.Install.CommitFrom != install.FromStamp ||
		res.Extensions.Install.ModuleVersion != "(devel)" {
		t.Errorf("commit %v, install %+v", c, res.Extensions.Install)
	}
}

// TestVersionSaysWhereTheCommitCameFrom: `strata version` (and --version)
// names the commit and its source: the stamp, the COMMIT file beside the
// binary, or nothing, then with the module version and how to get a
// commit.
func TestVersionSaysWhereTheCommitCameFrom(t *testing.T) {
	t.Parallel()
	rel := t.TempDir()
	exe := filepath.Join(rel, "strata")
	commit := strings.Repeat("ab", 20)
	mustWrite(t, exe, "")
	mustWrite(t, filepath.Join(rel, install.CommitFile), commit+"\n")
	tests := []struct {
		name       string
		build      version.Build
		executable string
		want       []string
	}{
		{"stamp", version.Build{Commit: testCommit}, "", []string{"commit " + testCommit + " from the binary's embedded VCS stamp"}},
		{"release", version.Build{}, exe, []string{"commit " + commit + " from the COMMIT file beside the binary"}},
		{"go install", version.Build{ModuleVersion: "v1.2.3"}, "", []string{"commit unknown: no VCS stamp", "module version v1.2.3",
			"warning: a run from this install is nonconforming (strata_commit is null); to get a commit, " + install.Conforming}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"version"}, {"--version"}} {
				var out, errb strings.Builder
				env := testEnv(t, t.TempDir(), strings.NewReader(""), &out, &errb)
				env.Build, env.Executable = &tc.build, tc.executable
				if code := Run(t.Context(), args, env); code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
				}
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				ok := len(lines) == len(tc.want)+1 && strings.HasPrefix(lines[0], "strata "+version.Version+" (protocols ")
				for i := 0; ok && i < len(tc.want); i++ {
					ok = strings.HasPrefix(lines[i+1], tc.want[i])
				}
				if !ok {
					t.Errorf("%v:\n%s", args, out.String())
				}
			}
		})
	}
}

// TestRunFromItsCheckoutWithoutAStampHasNoCommit: a binary without a VCS
// stamp that knows the checkout it was compiled from (go run) records no
// commit: that checkout's HEAD now is not tied to the binary. The run says
// so first and is nonconforming.
func TestRunFromItsCheckoutWithoutAStampHasNoCommit(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	head := submissions.Checkout(t, work)
	var out, errb strings.Builder
	env := testEnv(t, work, strings.NewReader(""), &out, &errb)
	env.Build = &version.Build{ModuleVersion: "(devel)", SourceDir: work}
	if code := Run(t.Context(), []string{"bench", "run", "--simulate"}, env); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	first, _, _ := strings.Cut(errb.String(), "\n")
	if !strings.HasPrefix(first, "strata "+version.Version+": commit unknown: ") || !strings.Contains(first, "the HEAD of the checkout it was built from cannot be tied to it") {
		t.Errorf("first line %q", first)
	}
	res, _ := readResults(t, work)
	if c := res.Software.StrataCommit; c != nil || res.Run.Status != contract.StatusNonconforming || strings.Contains(res.Extensions.Install.NoCommit, head) {
		t.Errorf("commit %v (HEAD %s), status %s, install %+v", c, head, res.Run.Status, res.Extensions.Install)
	}
}
