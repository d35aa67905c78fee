package manifest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
)

// checkedAt is the time of every check in these tests (after the
// committed scenario's reviews).
var checkedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func opts(t *testing.T, activate ...string) manifest.Options {
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	return manifest.Options{Activated: activate, Embedded: b, Now: checkedAt}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if repo.Branch != "main" || repo.Head() != s.Commits["c5"] {
		t.Fatalf("branch %s head %s", repo.Branch, repo.Head())
	}
	m, err := repo.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	checked := repo.Verify(m, opts(t, protocol.StandInID))
	byRun := map[string]*manifest.Checked{}
	for _, c := range checked {
		byRun[c.Entry.RunID] = c
	}
	for _, role := range []string{"approved3060", "approvedA4000", "approvedMarkup"} {
		if c := byRun[s.RunIDs[role]]; !c.OK() {
			t.Errorf("%s: %v", role, c.Problems)
		}
	}
	if c := byRun[s.RunIDs["approved3060"]]; len(c.ChangedAfter) != 1 || c.ChangedAfter[0] != "outputs.jsonl" {
		t.Errorf("a later commit altered an approved artifact: changed-after %v", c.ChangedAfter)
	}
	if c := byRun[s.RunIDs["tampered"]]; c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "not the approved") {
		t.Errorf("tampered: %v", c.Problems)
	}
	if c := byRun[s.RunIDs["nonconforming"]]; c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "nonconforming") {
		t.Errorf("nonconforming: %v", c.Problems)
	}
	// The draft protocol is not activated by default: nothing is approved.
	for _, c := range repo.Verify(m, opts(t)) {
		if c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "not activated") {
			t.Errorf("%s approved without activation: %v", c.Entry.RunID, c.Problems)
		}
	}
	// An evidence commit that did not introduce the report.
	e := byRun[s.RunIDs["approvedA4000"]].Entry
	e.EvidenceCommit = s.Commits["c3"]
	if c := repo.Check(e, opts(t, protocol.StandInID)); c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "did not introduce") {
		t.Errorf("wrong evidence commit: %v", c.Problems)
	}
	e.EvidenceCommit = "abc"
	if c := repo.Check(e, opts(t, protocol.StandInID)); c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "full 40-character") {
		t.Errorf("short commit: %v", c.Problems)
	}
	e.ResultsPath = "../../etc/passwd"
	if c := repo.Check(e, opts(t, protocol.StandInID)); c.OK() {
		t.Error("a path outside bench/results was accepted")
	}
	// A review link the site would run, or that is not a link at all.
	good := byRun[s.RunIDs["approvedA4000"]].Entry
	for _, pr := range []string{"javascript:window.__pwned=1", "http://example.invalid/pr/1", "https://user:pw@example.invalid/pr/1",
		"data:text/html,<script>x</script>", "https://example.invalid/pr/1 extra", ""} {
		e := good
		e.ReviewPR = pr
		if c := repo.Check(e, opts(t, protocol.StandInID)); c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "review_pr") {
			t.Errorf("review_pr %q: %v", pr, c.Problems)
		}
	}
	// Reproduction run IDs must name approved entries that verify.
	for _, c := range []struct {
		ids  []string
		says string
	}{
		{[]string{"20990101T000000Z-000000"}, "is not an entry of the approved manifest"},
		{[]string{good.RunID}, "cannot reproduce itself"},
		{[]string{s.RunIDs["tampered"]}, "does not verify"},
	} {
		m2 := *m
		m2.Entries = append([]manifest.Entry{}, m.Entries...)
		for i := range m2.Entries {
			if m2.Entries[i].RunID == good.RunID {
				m2.Entries[i].Verification = manifest.IndependentlyReproduced
				m2.Entries[i].ReproductionRunIDs = c.ids
			}
		}
		for _, ch := range repo.Verify(&m2, opts(t, protocol.StandInID)) {
			if ch.Entry.RunID == good.RunID && (ch.OK() || !strings.Contains(strings.Join(ch.Problems, " "), c.says)) {
				t.Errorf("reproduction %v: %v", c.ids, ch.Problems)
			}
		}
	}
}

// TestParseIsStrict: a manifest with a duplicate name or invalid UTF-8 is
// refused, naming where.
func TestParseIsStrict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, says string }{
		{`{"format":"strata-approved-benchmarks","schema_version":1,"entries":[],"entries":[{"run_id":"x"}]}`, "duplicate object name"},
		{"{\"format\":\"strata-approved-benchmarks\",\"schema_version\":1,\"entries\":[{\"reviewed_by\":\"m\xffx\"}]}", "invalid UTF-8"},
		{`{"format":"strata-approved-benchmarks","schema_version":1,"entries":[]} {}`, "data after"},
	} {
		if _, err := manifest.Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v", c.doc, err)
		}
	}
}

func TestAdd(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := manifest.ReadWorktreeManifest(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	add := func(role string, activate ...string) (*manifest.Manifest, error) {
		m, err := repo.Add(cur, manifest.AddOptions{Options: opts(t, activate...), ResultsPath: s.Folders[role], ReviewPR: "https://example.invalid/pr/9", ReviewedBy: "maint"})
		return m, err
	}
	m, err := add("unreviewed", protocol.StandInID)
	if err != nil {
		t.Fatal(err)
	}
	e := m.Entries[len(m.Entries)-1]
	if e.RunID != s.RunIDs["unreviewed"] || e.EvidenceCommit != s.Commits["c3"] || e.ReviewedAt != "2026-11-30T12:00:00Z" || e.Verification != "evidence-reviewed" {
		t.Errorf("entry %+v", e)
	}
	if _, err := add("unreviewed"); err == nil || !strings.Contains(err.Error(), "not activated") {
		t.Errorf("draft protocol: %v", err)
	}
	if _, err := add("partial", protocol.StandInID); err == nil || !strings.Contains(err.Error(), "partial") {
		t.Errorf("partial: %v", err)
	}
	if _, err := add("nonconforming", protocol.StandInID); err == nil || !strings.Contains(err.Error(), "nonconforming") {
		t.Errorf("nonconforming: %v", err)
	}
	if _, err := add("approvedA4000", protocol.StandInID); err == nil || !strings.Contains(err.Error(), "already in the manifest") {
		t.Errorf("twice: %v", err)
	}
	if err := manifest.WriteWorktreeManifest(s.Repo.Dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := manifest.ReadWorktreeManifest(s.Repo.Dir)
	if err != nil || len(back.Entries) != len(m.Entries) {
		t.Fatalf("round trip: %v", err)
	}
}

// TestPartialEntryVerifies: a partial conforming run may be reviewed and
// listed (the spec), so an entry for one verifies; only the helper refuses
// to add it.
func TestPartialEntryVerifies(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	intro, err := repo.Introduced(s.Folders["partial"] + "/results.json")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(s.Repo.Dir, s.Folders["partial"], "results.json"))
	sum := sha256.Sum256(data)
	e := manifest.Entry{RunID: s.RunIDs["partial"], ProtocolID: protocol.StandInID, ResultsPath: s.Folders["partial"] + "/results.json",
		ResultsSHA256: hex.EncodeToString(sum[:]), EvidenceCommit: intro.Hash.String(), ReviewPR: "https://example.invalid/pr/1",
		ReviewedBy: "m", ReviewedAt: "2026-11-02T10:00:00Z", Verification: manifest.EvidenceReviewed, ReproductionRunIDs: []string{}}
	if c := repo.Check(e, opts(t, protocol.StandInID)); !c.OK() || c.Results.Run.Status != "partial" {
		t.Errorf("partial entry: %v", c.Problems)
	}
}

// TestSimulatorClaimingCompleteIsRefused: the simulator's folder edited to
// claim a complete run (its traces left in the evidence) is refused by the
// helper and fails verification, whatever the entry says.
func TestSimulatorClaimingCompleteIsRefused(t *testing.T) {
	t.Parallel()
	f := submissions.ForgedRepo(t, protocol.StandInID, "2026-11-02T10:00:00Z")
	repo, err := manifest.Open(f.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := repo.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range repo.Verify(m, opts(t, protocol.StandInID)) {
		if p := strings.Join(c.Problems, "\n"); c.OK() || !strings.Contains(p, "/run/status") || !strings.Contains(p, "simulated engine") {
			t.Errorf("the forged entry verifies or fails for another reason: %v", c.Problems)
		}
	}
	_, err = repo.Add(&manifest.Manifest{Format: manifest.Format, SchemaVersion: manifest.SchemaVersion, Entries: []manifest.Entry{}},
		manifest.AddOptions{Options: opts(t, protocol.StandInID), ResultsPath: f.Folder, ReviewPR: "https://example.invalid/pr/2", ReviewedBy: "maint"})
	if err == nil || !strings.Contains(err.Error(), "cannot be approved") || !strings.Contains(err.Error(), "/run/status") {
		t.Errorf("add: %v", err)
	}
}

// TestReviewInTheFuture: an entry reviewed after the time of the check
// fails verification; the same entry dated before it verifies.
func TestReviewInTheFuture(t *testing.T) {
	t.Parallel()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := repo.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	var e manifest.Entry
	for _, x := range m.Entries {
		if x.RunID == s.RunIDs["approvedA4000"] {
			e = x
		}
	}
	if c := repo.Check(e, opts(t, protocol.StandInID)); !c.OK() {
		t.Fatalf("the entry as reviewed: %v", c.Problems)
	}
	for _, when := range []string{"2999-01-01T00:00:00Z", checkedAt.Add(time.Second).Format(time.RFC3339)} {
		e.ReviewedAt = when
		if c := repo.Check(e, opts(t, protocol.StandInID)); c.OK() || !strings.Contains(strings.Join(c.Problems, " "), "after the time of this check") {
			t.Errorf("reviewed_at %s: %v", when, c.Problems)
		}
	}
}

// TestReviewBeforeItsEvidence: an entry reviewed
// before its evidence commit was made fails verification (the review
// cannot have seen it); reviewed at that second, it verifies.
func TestReviewBeforeItsEvidence(t *testing.T) {
	t.Parallel()
	_, repo, e := approvedA4000(t)
	c, err := repo.Commit(e.EvidenceCommit)
	if err != nil {
		t.Fatal(err)
	}
	made := c.Committer.When.UTC()
	for _, x := range []struct {
		at   time.Time
		fail bool
	}{{made.Add(-time.Second), true}, {made.AddDate(-1, 0, 0), true}, {made, false}} {
		e.ReviewedAt = x.at.Format(time.RFC3339)
		ch := repo.Check(e, opts(t, protocol.StandInID))
		if got := strings.Contains(strings.Join(ch.Problems, " "), "before its evidence commit"); got != x.fail || x.fail == ch.OK() {
			t.Errorf("reviewed_at %s (evidence committed %s): %v", e.ReviewedAt, made.Format(time.RFC3339), ch.Problems)
		}
	}
}

// TestReviewerNameIsPlainText: reviewed_by with a
// control character (ESC, a C1 NEL), a bidirectional override or
// invalid UTF-8 fails verification, and the helper refuses such a
// --reviewed-by; a name in any script verifies.
func TestReviewerNameIsPlainText(t *testing.T) {
	t.Parallel()
	s, repo, e := approvedA4000(t)
	for _, x := range []struct {
		name string
		bad  bool
	}{
		{"maint\x1b]0;pwned\x07\x1b[2J", true}, {"alice\u202etxt.exe", true}, {"bob\u0085", true}, {"eve\xff", true},
		{"line\nbreak", true}, {"Zoë Ölmez 张伟", false},
	} {
		e.ReviewedBy = x.name
		ch := repo.Check(e, opts(t, protocol.StandInID))
		if got := strings.Contains(strings.Join(ch.Problems, " "), "reviewed_by"); got != x.bad || x.bad == ch.OK() {
			t.Errorf("reviewed_by %q: %v", x.name, ch.Problems)
		}
		if !x.bad {
			continue
		}
		cur, err := manifest.ReadWorktreeManifest(s.Repo.Dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = repo.Add(cur, manifest.AddOptions{Options: opts(t, protocol.StandInID), ResultsPath: s.Folders["unreviewed"],
			ReviewPR: "https://example.invalid/pr/9", ReviewedBy: x.name})
		if err == nil || !strings.Contains(err.Error(), "--reviewed-by") || strings.ContainsAny(err.Error(), "\x1b\u202e\u0085") {
			t.Errorf("add with --reviewed-by %q: %v", x.name, err)
		}
	}
}

// approvedA4000 is the committed scenario, its repository and the
// manifest's entry of approvedA4000 (which verifies).
func approvedA4000(t *testing.T) (*submissions.Scenario, *manifest.Repo, manifest.Entry) {
	t.Helper()
	s := submissions.Committed(t)
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := repo.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range m.Entries {
		if x.RunID == s.RunIDs["approvedA4000"] {
			if c := repo.Check(x, opts(t, protocol.StandInID)); !c.OK() {
				t.Fatalf("the entry as reviewed: %v", c.Problems)
			}
			return s, repo, x
		}
	}
	t.Fatal("no entry for approvedA4000")
	return nil, nil, manifest.Entry{}
}

// TestFoldersReportsABrokenTree: a tree under bench/results that cannot be
// read is that error, not a repository without result folders nor a
// folder that is absent.
func TestFoldersReportsABrokenTree(t *testing.T) {
	t.Parallel()
	for _, broken := range []string{"bench/results", "bench/results/2026-11-01-run"} {
		t.Run(broken, func(t *testing.T) {
			t.Parallel()
			repo, err := manifest.Open(repoWithBrokenTree(t, broken))
			if err != nil {
				t.Fatal(err)
			}
			folders, err := repo.Folders()
			if err == nil || !strings.Contains(err.Error(), broken) || errors.Is(err, manifest.ErrNoFile) {
				t.Errorf("Folders() = %d folders, error %v; want the read error naming %s", len(folders), err, broken)
			}
		})
	}
}

// repoWithBrokenTree is a repository whose one commit on main holds, at
// path broken, a tree object whose one entry has no valid file mode.
func repoWithBrokenTree(t *testing.T, broken string) string {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: "refs/heads/main"}})
	if err != nil {
		t.Fatal(err)
	}
	h := storeObject(t, r, func(o plumbing.EncodedObject) error {
		o.SetType(plumbing.TreeObject)
		w, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write(append([]byte("zzz broken\x00"), make([]byte, 20)...)); err != nil {
			return err
		}
		return w.Close()
	})
	names := strings.Split(broken, "/")
	for i := len(names) - 1; i >= 0; i-- {
		h = storeObject(t, r, (&object.Tree{Entries: []object.TreeEntry{{Name: names[i], Mode: filemode.Dir, Hash: h}}}).Encode)
	}
	sig := object.Signature{Name: "Maintainer", Email: "m@strata.invalid", When: checkedAt}
	commit := storeObject(t, r, (&object.Commit{Author: sig, Committer: sig, Message: "broken", TreeHash: h}).Encode)
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), commit)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// storeObject writes the object encode fills into r's object store and
// returns its hash.
func storeObject(t *testing.T, r *git.Repository, encode func(plumbing.EncodedObject) error) plumbing.Hash {
	t.Helper()
	o := r.Storer.NewEncodedObject()
	if err := encode(o); err != nil {
		t.Fatal(err)
	}
	h, err := r.Storer.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOpenRoot: a checkout's top folder and a bare repository open; a
// folder inside a checkout is ErrNotRoot for OpenRoot (Open takes the
// checkout around it), and so is a folder in no repository.
func TestOpenRoot(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	submissions.Checkout(t, work)
	inside := filepath.Join(work, "bench")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir string
		root      bool
	}{
		{"a checkout's top folder", work, true},
		{"a bare repository", submissions.CommittedRepo(t), true},
		{"a folder inside a checkout", inside, false},
		{"a folder in no repository", t.TempDir(), false},
	} {
		_, err := manifest.OpenRoot(c.dir)
		if c.root != (err == nil) || !c.root && !errors.Is(err, manifest.ErrNotRoot) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := manifest.Open(inside); err != nil {
		t.Errorf("Open of a folder inside a checkout: %v", err)
	}
}
