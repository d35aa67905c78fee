package site_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
)

var update = flag.Bool("update", false, "regenerate testdata/site-repo.git, the committed test repository")

// TestUpdateTestRepository regenerates the bare test repository at the
// checkout's testdata/site-repo.git (with -update), used by the CLI tests
// and the README's site example.
func TestUpdateTestRepository(t *testing.T) {
	t.Parallel()
	if !*update {
		t.Skip("run with -update to regenerate testdata/site-repo.git")
	}
	s := submissions.BuildScenario(t, protocol.StandInID)
	dst, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "site-repo.git"))
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	r, err := git.PlainClone(dst, true, &git.CloneOptions{URL: s.Repo.Dir})
	if err != nil {
		t.Fatal(err)
	}
	// Keep no trace of the temporary folder it was cloned from.
	if err := r.DeleteRemote("origin"); err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	delete(cfg.Branches, "main")
	if err := r.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dst, "refs", "remotes")); err != nil {
		t.Fatal(err)
	}
	s.WriteMetadata(t)
	t.Logf("wrote %s and its metadata", dst)
}
