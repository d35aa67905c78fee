package site_test

import (
	"path"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
	"github.com/strata-bench/strata/internal/site"
)

// TestSimulatorClaimingCompleteIsNotListed: the simulator's folder edited
// to claim a complete run, in the manifest of an activated protocol, is not
// on the standard list: it is shown as unverifiable, with the reason.
func TestSimulatorClaimingCompleteIsNotListed(t *testing.T) {
	t.Parallel()
	f := submissions.ForgedRepo(t, protocol.StandInID, "2026-11-02T10:00:00Z")
	repo, err := manifest.Open(f.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	s, err := site.Collect(repo, manifest.Options{Activated: []string{protocol.StandInID}, Embedded: b, Now: checkedAt})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Approved) != 0 {
		t.Errorf("%d approved runs", len(s.Approved))
	}
	if len(s.Others) != 1 || s.Others[0].Folder != path.Base(f.Folder) || s.Others[0].Label != site.LabelUnverifiable ||
		!strings.Contains(strings.Join(s.Others[0].Reasons, " "), "simulated engine") {
		t.Errorf("others %+v", s.Others)
	}
}
