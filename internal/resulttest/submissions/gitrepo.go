package submissions

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/strata-bench/strata/internal/install"
)

// Repo is a git repository in a temporary folder, committed to with go-git.
type Repo struct {
	Dir  string
	r    *git.Repository
	when time.Time
}

// NewRepo initializes a repository whose default branch is main.
func NewRepo(tb testing.TB) *Repo {
	tb.Helper()
	return repoAt(tb, tb.TempDir())
}

func repoAt(tb testing.TB, dir string) *Repo {
	tb.Helper()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		tb.Fatal(err)
	}
	return &Repo{Dir: dir, r: r, when: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
}

// Checkout makes dir a source checkout of strata (the module's go.mod in a
// repository with a commit) and returns its commit: a checkout around a
// run's working folder that is not the running binary's own.
func Checkout(tb testing.TB, dir string) string {
	tb.Helper()
	g := repoAt(tb, dir)
	g.Write(tb, "go.mod", []byte("module "+install.Module+"\n"))
	return g.Commit(tb, "a checkout")
}

// CopyFolder copies a result folder into the work tree at rel.
func (g *Repo) CopyFolder(tb testing.TB, src, rel string) {
	tb.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		g.Write(tb, filepath.Join(rel, e.Name()), data)
	}
}

// Write writes a file into the work tree.
func (g *Repo) Write(tb testing.TB, rel string, data []byte) {
	tb.Helper()
	p := filepath.Join(g.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Commit stages everything and commits; it returns the commit ID.
func (g *Repo) Commit(tb testing.TB, msg string) string {
	tb.Helper()
	wt, err := g.r.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		tb.Fatal(err)
	}
	g.when = g.when.Add(time.Hour)
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "Maintainer", Email: "m@strata.invalid", When: g.when}})
	if err != nil {
		tb.Fatal(err)
	}
	return h.String()
}
