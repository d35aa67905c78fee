// Package install finds where the running strata came from: its commit (the
// binary's VCS stamp, or the COMMIT file a release carries beside the
// binary), whether it is a source build, and whether the checkout around
// the working folder is another one (its HEAD read with go-git). It is apart from internal/version so that what only
// prints a version (the simulator) does not pull in go-git.
package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
	"github.com/strata-bench/strata/internal/version"
)

// Where a commit was read from (Info.From).
const (
	FromStamp      = "vcs_stamp"
	FromCommitFile = "commit_file"
)

// CommitFile is the file a release archive (and the Debian package) puts
// beside the binary, holding the full commit it was built from.
const CommitFile = "COMMIT"

// Conforming says how to get an install whose runs carry a commit.
const Conforming = "install a release archive or the Debian package (each carries a COMMIT file beside the binary), " +
	"or build in a strata git checkout with VCS stamping (go build -buildvcs=true ./cmd/strata); " +
	"go run and go install …@version record no commit"

// Info is where the running strata came from.
type Info struct {
	// Commit is the full commit; "" when unknown (Reason says why).
	Commit string
	// From is FromStamp or FromCommitFile ("" without a commit); Source says it in words, without machine paths (the result
	// records it).
	From, Source string
	// Kind is "release" for a binary with a COMMIT file beside it or no
	// checkout of its own, "source" for a checkout's own build.
	Kind   string
	Reason string
	// ModuleVersion is the module version the toolchain recorded (a tag
	// for go install …@version, "(devel)" for a build in a checkout).
	ModuleVersion string
	// Warnings are said before anything is sent: a checkout around the
	// working folder that is not the binary's own, a COMMIT file that
	// disagrees with the stamp.
	Warnings []string
}

// Inputs are where to look: the working folder, this binary's path and
// what the binary knows of its own build.
type Inputs struct {
	Workdir, Executable string
	Build               version.Build
}

// Module is this project's module path; a checkout is recognised by it.
const Module = "github.com/strata-bench/strata"

// Detect finds the install's commit: the binary's VCS stamp, else the
// COMMIT file beside it. Only those are tied to the binary: the HEAD of the
// checkout a build that kept its file paths was compiled from (go run, a
// plain go build) is that checkout's commit now, which may be a later one,
// or a clean one where the build was made from changes, so such a binary
// has no commit. A checkout that merely holds the working folder is never
// the source of the commit; when it is another checkout than the binary's
// own, Detect warns.
func Detect(in Inputs) Info {
	info := Info{Kind: "release", ModuleVersion: in.Build.ModuleVersion}
	own := ""
	if in.Build.SourceDir != "" {
		own = findCheckout(in.Build.SourceDir)
	}
	fileCommit, fileErr := readCommitFile(in.Executable)
	if errors.Is(fileErr, os.ErrNotExist) && (own != "" || in.Build.Commit != "") {
		info.Kind = "source"
	}
	switch {
	case in.Build.Commit != "" && notACommit(in.Build.Commit) != "":
		info.Reason = "the binary's VCS stamp " + notACommit(in.Build.Commit)
	case in.Build.Commit != "":
		info.Commit, info.From, info.Source = in.Build.Commit, FromStamp, "the binary's embedded VCS stamp"
		if in.Build.Modified {
			info.Source += " (built from a modified tree)"
		}
		if fileErr == nil && fileCommit != in.Build.Commit {
			info.Warnings = append(info.Warnings, fmt.Sprintf("the %s file beside the binary names %s, but the binary was built from %s; the binary's own stamp is recorded",
				CommitFile, fileCommit, in.Build.Commit))
		}
	case fileErr == nil:
		info.Commit, info.From, info.Source = fileCommit, FromCommitFile, "the "+CommitFile+" file beside the binary"
	case !errors.Is(fileErr, os.ErrNotExist):
		info.Reason = fileErr.Error()
	case own != "":
		info.Reason = "no VCS stamp in the binary and no " + CommitFile + " file beside it; the HEAD of the checkout it was built from cannot be tied to it " +
			"(that checkout may have moved to another commit since the build, or the build been made from changes its HEAD does not hold)"
	default:
		info.Reason = "no VCS stamp in the binary, no " + CommitFile + " file beside it, and no checkout it was built from"
	}
	if w := otherCheckout(in.Workdir, own, info.Commit); w != "" {
		info.Warnings = append(info.Warnings, w)
	}
	return info
}

// Line says in one line which commit the install records and where it
// came from, or that it has none.
func (i Info) Line() string {
	if i.Commit == "" {
		return "commit unknown: " + i.Reason
	}
	return "commit " + i.Commit + " from " + i.Source
}

// readCommitFile reads the COMMIT file beside the binary (its real path: a
// symlink such as /usr/bin/strata points into the folder that holds it).
func readCommitFile(executable string) (string, error) {
	if executable == "" {
		return "", os.ErrNotExist
	}
	if real, err := filepath.EvalSymlinks(executable); err == nil {
		executable = real
	}
	path := filepath.Join(filepath.Dir(executable), CommitFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	c := strings.TrimSpace(string(data))
	if why := notACommit(c); why != "" {
		return "", fmt.Errorf("the %s file beside the binary %s", CommitFile, why)
	}
	return c, nil
}

// otherCheckout is the warning for a strata checkout around the working
// folder that is not the binary's own (own) and is at another commit than
// the one recorded, or "".
func otherCheckout(workdir, own, commit string) string {
	around := findCheckout(workdir)
	if around == "" || around == own {
		return ""
	}
	head, err := headOf(around)
	if err == nil && head == commit {
		return ""
	}
	at := "whose HEAD cannot be read"
	if err == nil {
		at = "at " + head
	}
	recorded := "the binary's own commit " + commit + " is recorded"
	if commit == "" {
		recorded = "its HEAD is not used, since this binary was not built from it"
	}
	return fmt.Sprintf("the working folder is inside the strata checkout %s (%s), which is not the one this binary was built from; %s", around, at, recorded)
}

// notACommit says why s is not the full ID of a commit ("" when it is): an
// ID is 40 or 64 lowercase hex digits, and the all-zero one is git's "no
// object", never a commit.
func notACommit(s string) string {
	if len(s) != 40 && len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return "does not hold a full commit (40 or 64 lowercase hex digits)"
	}
	if strings.Trim(s, "0") == "" {
		return "holds the all-zero ID, which names no commit"
	}
	return ""
}

// findCheckout returns the root of the strata checkout holding dir, or "".
func findCheckout(dir string) string {
	for d := dir; d != ""; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if strings.Contains(string(data), "module "+Module+"\n") {
				if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
					return d
				}
			}
			return ""
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

// headOf is git rev-parse HEAD of the checkout at dir. A linked worktree
// (git worktree add) keeps its HEAD under the main repository's
// .git/worktrees/NAME and its objects and refs in the common folder.
//
// It reads through go-git's storage layer, not its porcelain (git.PlainOpen
// and Repository.Head): the porcelain brings the transports, OpenPGP and
// SSH with it, some 200 packages that every binary reaching this one
// (the process state, provenance, benchrun and their tests) linked only to
// read one reference. gitDir is the porcelain's finding of the .git folder
// (repository.go, dotGitToOSFilesystems and dotGitCommonDirectory, go-git
// v5.19.3), which that layer does not export.
func headOf(dir string) (string, error) {
	fs, err := gitDir(dir)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", dir, err)
	}
	ref, err := storer.ResolveReference(filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("HEAD: %w", err)
	}
	h := ref.Hash().String()
	if why := notACommit(h); why != "" {
		return "", errors.New("HEAD " + why)
	}
	return h, nil
}

// gitDir is the repository folder of the checkout at dir: dir/.git, the
// folder a .git file names ("gitdir: PATH", a linked worktree's), joined
// with the common folder its commondir file names.
func gitDir(dir string) (billy.Filesystem, error) {
	dot := filepath.Join(dir, ".git")
	fi, err := os.Stat(dot)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(dot)
		if err != nil {
			return nil, err
		}
		line, ok := strings.CutPrefix(string(b), "gitdir: ")
		if !ok {
			return nil, errors.New(".git file has no gitdir: prefix")
		}
		dot = strings.TrimSpace(strings.Split(line, "\n")[0])
		if !filepath.IsAbs(dot) {
			dot = filepath.Join(dir, dot)
		}
		if err := namesBack(dot, filepath.Join(dir, ".git")); err != nil {
			return nil, err
		}
	}
	fs := osfs.New(dot)
	common, err := os.ReadFile(filepath.Join(dot, "commondir"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fs, nil
	case err != nil:
		return nil, err
	case len(common) == 0:
		return fs, nil
	}
	path := strings.TrimSpace(string(common))
	if !filepath.IsAbs(path) {
		path = filepath.Join(dot, path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("the common folder %s: %w", path, err)
	}
	return dotgit.NewRepositoryFilesystem(fs, osfs.New(path)), nil
}

// namesBack holds a .git file to the repository folder it names: git
// writes the worktree's own .git file into that folder's gitdir file, so
// a .git file naming another repository (its .git, or the folder of one of
// its worktrees) is not this checkout's, and its HEAD is not read as this
// one's.
func namesBack(dot, file string) error {
	data, err := os.ReadFile(filepath.Join(dot, "gitdir"))
	if err != nil {
		return fmt.Errorf("the .git file names %s, which is no worktree's repository folder: %w", dot, err)
	}
	back := strings.TrimSpace(string(data))
	if !filepath.IsAbs(back) {
		back = filepath.Join(dot, back)
	}
	a, errA := os.Stat(back)
	b, errB := os.Stat(file)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return fmt.Errorf("the .git file names %s, the repository folder of another checkout (%s)", dot, back)
	}
	return nil
}
