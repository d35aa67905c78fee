package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/version"
)

// gitCmd runs the git binary in dir, isolated from the machine's own git
// configuration, and returns its trimmed output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@strata.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@strata.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkout is a strata checkout made by the git binary: go.mod and two
// commits, and a linked worktree (git worktree add) at the first commit,
// so the worktree's HEAD is not the main checkout's.
type checkout struct {
	main, linked         string
	mainHead, linkedHead string
}

func newCheckout(t *testing.T) checkout {
	t.Helper()
	base := t.TempDir()
	c := checkout{main: filepath.Join(base, "strata"), linked: filepath.Join(base, "linked")}
	if err := os.MkdirAll(c.main, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, c.main, "init", "-q", "-b", "main")
	write(t, filepath.Join(c.main, "go.mod"), "module "+Module+"\n")
	gitCmd(t, c.main, "add", ".")
	gitCmd(t, c.main, "commit", "-q", "-m", "first")
	c.linkedHead = gitCmd(t, c.main, "rev-parse", "HEAD")
	write(t, filepath.Join(c.main, "README.md"), "second\n")
	gitCmd(t, c.main, "add", ".")
	gitCmd(t, c.main, "commit", "-q", "-m", "second")
	c.mainHead = gitCmd(t, c.main, "rev-parse", "HEAD")
	gitCmd(t, c.main, "worktree", "add", "-q", "-b", "other", c.linked, c.linkedHead)
	if got := gitCmd(t, c.linked, "rev-parse", "HEAD"); got != c.linkedHead {
		t.Fatalf("the linked worktree is at %s, want %s", got, c.linkedHead)
	}
	return c
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// release is a folder holding a binary and, unless commit is "", a COMMIT
// file; it returns the binary's path.
func release(t *testing.T, commit string) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "strata")
	write(t, exe, "")
	if commit != "" {
		write(t, filepath.Join(dir, CommitFile), commit+"\n")
	}
	return exe
}

const (
	stamp = "1111111111111111111111111111111111111111"
	other = "2222222222222222222222222222222222222222"
)

// noTie is the reason a binary without a stamp or a COMMIT file has no
// commit, even where it knows the checkout it was compiled from: that
// checkout's HEAD now may be a later commit, or a clean one where the
// build was made from changes.
const noTie = "the HEAD of the checkout it was built from cannot be tied to it"

// TestDetect: the binary's own commit wins (its stamp, then the COMMIT
// file beside it), and an ID that names no commit is none; the HEAD of
// the checkout a binary was compiled from cannot be tied to it; a checkout
// around the working folder is never the source, and one that is not the
// binary's own is warned of.
func TestDetect(t *testing.T) {
	t.Parallel()
	co := newCheckout(t)
	empty := t.TempDir()
	bare := release(t, "")
	linkDir := t.TempDir()
	linked := filepath.Join(linkDir, "strata")
	if err := os.Symlink(release(t, other), linked); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      Inputs
		commit  string
		from    string
		kind    string
		reason  string
		warning string
	}{
		{"stamp", Inputs{Workdir: empty, Executable: bare, Build: version.Build{Commit: stamp, ModuleVersion: "(devel)"}},
			stamp, FromStamp, "source", "", ""},
		{"COMMIT file", Inputs{Workdir: empty, Executable: release(t, other)}, other, FromCommitFile, "release", "", ""},
		{"COMMIT file through a symlink", Inputs{Workdir: empty, Executable: linked}, other, FromCommitFile, "release", "", ""},
		{"stamp wins over a COMMIT file that disagrees", Inputs{Workdir: empty, Executable: release(t, other), Build: version.Build{Commit: stamp}},
			stamp, FromStamp, "release", "", "the COMMIT file beside the binary names " + other},
		{"a COMMIT file that is not a commit", Inputs{Workdir: empty, Executable: release(t, "v1.0")}, "", "", "release",
			"does not hold a full commit", ""},
		{"a COMMIT file of all zeros", Inputs{Workdir: empty, Executable: release(t, strings.Repeat("0", 40))}, "", "", "release",
			"the all-zero ID, which names no commit", ""},
		{"a VCS stamp of all zeros", Inputs{Workdir: empty, Executable: bare, Build: version.Build{Commit: strings.Repeat("0", 40)}}, "", "", "source",
			"the binary's VCS stamp holds the all-zero ID, which names no commit", ""},
		{"go run in a linked worktree", Inputs{Workdir: co.linked, Executable: bare, Build: version.Build{SourceDir: co.linked}},
			"", "", "source", noTie, ""},
		{"go run in the main checkout, from a folder inside it", Inputs{Workdir: co.main, Executable: bare, Build: version.Build{SourceDir: co.main}},
			"", "", "source", noTie, ""},
		{"its own checkout, run inside another one", Inputs{Workdir: co.main, Executable: bare, Build: version.Build{SourceDir: co.linked}},
			"", "", "source", noTie, "the working folder is inside the strata checkout " + co.main + " (at " + co.mainHead + ")"},
		{"a stamp, run inside a checkout at another commit", Inputs{Workdir: co.linked, Executable: bare, Build: version.Build{Commit: stamp}},
			stamp, FromStamp, "source", "", "the binary's own commit " + stamp + " is recorded"},
		{"a release run inside a checkout at its own commit", Inputs{Workdir: co.main, Executable: release(t, co.mainHead)},
			co.mainHead, FromCommitFile, "release", "", ""},
		{"nothing, run inside a checkout", Inputs{Workdir: co.main, Executable: bare, Build: version.Build{ModuleVersion: "v1.2.3"}},
			"", "", "release", "no VCS stamp in the binary, no COMMIT file beside it, and no checkout it was built from",
			"its HEAD is not used, since this binary was not built from it"},
		{"nothing at all", Inputs{Workdir: empty, Executable: bare, Build: version.Build{ModuleVersion: "v1.2.3"}},
			"", "", "release", "no VCS stamp", ""},
		{"a source folder that is no checkout", Inputs{Workdir: empty, Executable: bare, Build: version.Build{SourceDir: empty}},
			"", "", "release", "no VCS stamp", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Detect(tc.in)
			if got.Commit != tc.commit || got.From != tc.from || got.Kind != tc.kind || !strings.Contains(got.Reason, tc.reason) ||
				(tc.reason == "") != (got.Reason == "") || got.ModuleVersion != tc.in.Build.ModuleVersion {
				t.Errorf("got %+v, want commit %q from %q, kind %s, reason %q", got, tc.commit, tc.from, tc.kind, tc.reason)
			}
			warnings := strings.Join(got.Warnings, "\n")
			if tc.warning == "" && warnings != "" || !strings.Contains(warnings, tc.warning) {
				t.Errorf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}

// TestHeadOfALinkedWorktree: go-git reads the HEAD of a worktree made by
// `git worktree add`, whose .git is a file naming a folder of the main
// repository (it failed there, and every run from such a checkout had no
// commit).
func TestHeadOfALinkedWorktree(t *testing.T) {
	t.Parallel()
	co := newCheckout(t)
	if fi, err := os.Stat(filepath.Join(co.linked, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("the linked worktree's .git is not a file: %v", err)
	}
	for dir, want := range map[string]string{co.linked: co.linkedHead, co.main: co.mainHead} {
		got, err := headOf(dir)
		if err != nil || got != want {
			t.Errorf("headOf(%s) = %q, %v; want %s", dir, got, err, want)
		}
	}
}

// TestHeadOfAnotherRepository: a .git file naming the repository folder of
// another checkout (a linked worktree of another repository, or that
// repository's own .git) is not this checkout's: its HEAD is never read as
// this one's.
func TestHeadOfAnotherRepository(t *testing.T) {
	t.Parallel()
	co := newCheckout(t)
	for name, gitdir := range map[string]string{
		"another worktree's folder": gitCmd(t, co.linked, "rev-parse", "--absolute-git-dir"),
		"another repository":        filepath.Join(co.main, ".git"),
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "go.mod"), "module "+Module+"\n")
		write(t, filepath.Join(dir, ".git"), "gitdir: "+gitdir+"\n")
		if got, err := headOf(dir); err == nil {
			t.Errorf("%s: headOf = %s, want an error", name, got)
		}
	}
}
