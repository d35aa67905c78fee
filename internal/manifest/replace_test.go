package manifest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
)

// corrected is the committed scenario with approvedA4000's results.json
// corrected after its review (its recorded command edited) in a new
// commit, c6: the same run, new results to review.
func corrected(t *testing.T) (*submissions.Scenario, *manifest.Repo, *manifest.Manifest) {
	t.Helper()
	s := submissions.Committed(t)
	p := filepath.Join(s.Repo.Dir, s.Folders["approvedA4000"], "results.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s.Repo.Write(t, filepath.Join(s.Folders["approvedA4000"], "results.json"), resulttest.EditJSON(t, data, func(m map[string]any) {
		m["run"].(map[string]any)["command"] = "strata bench run --profile a4000 --track default"
	}))
	s.Commits["c6"] = s.Repo.Commit(t, "benchmark: A4000, command corrected")
	repo, err := manifest.Open(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := manifest.ReadWorktreeManifest(s.Repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, repo, cur
}

func addOpts(t *testing.T, results, replaces string) manifest.AddOptions {
	return manifest.AddOptions{Options: opts(t, protocol.StandInID), ResultsPath: results, ReviewPR: "https://example.invalid/pr/10",
		ReviewedBy: "maint", Replaces: replaces}
}

// mustAdd adds the report at results, replacing run replaces.
func mustAdd(t *testing.T, repo *manifest.Repo, m *manifest.Manifest, results, replaces string) *manifest.Manifest {
	t.Helper()
	out, err := repo.Add(m, addOpts(t, results, replaces))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// verifies fails the test unless every entry of the runs verifies.
func verifies(t *testing.T, repo *manifest.Repo, m *manifest.Manifest, runIDs ...string) {
	t.Helper()
	for _, c := range repo.Verify(m, opts(t, protocol.StandInID)) {
		for _, id := range runIDs {
			if c.Entry.RunID == id && !c.OK() {
				t.Errorf("entry of %s: %v", c.Entry.Ref(), c.Problems)
			}
		}
	}
}

func entryOf(m *manifest.Manifest, runID, sha string) (manifest.Entry, int) {
	for i, e := range m.Entries {
		if e.RunID == runID && e.ResultsSHA256 == sha {
			return e, i
		}
	}
	return manifest.Entry{}, -1
}

// TestAddReplacesTheSameRun: a run whose results changed after review is
// added again with --replaces: the new entry names the one it replaces,
// the old one stays in the manifest marked with what replaced it, and
// both verify. Without --replaces it is refused, saying how.
func TestAddReplacesTheSameRun(t *testing.T) {
	t.Parallel()
	s, repo, cur := corrected(t)
	id := s.RunIDs["approvedA4000"]
	if _, err := repo.Add(cur, addOpts(t, s.Folders["approvedA4000"], "")); err == nil || !strings.Contains(err.Error(), "already in the manifest") ||
		!strings.Contains(err.Error(), "--replaces "+id) {
		t.Fatalf("a second entry of the run without --replaces: %v", err)
	}
	m := mustAdd(t, repo, cur, s.Folders["approvedA4000"], id)
	if len(m.Entries) != len(cur.Entries)+1 {
		t.Fatalf("%d entries, want %d (the old one kept)", len(m.Entries), len(cur.Entries)+1)
	}
	old, oldAt := entryOf(m, id, cur.Entries[1].ResultsSHA256)
	added := m.Entries[len(m.Entries)-1]
	if oldAt != 1 {
		t.Fatalf("the old entry moved or was lost: at %d", oldAt)
	}
	if cur.Entries[1].ReplacedBy != nil {
		t.Error("Add marked the manifest it was given")
	}
	want := manifest.EntryRef{RunID: id, ResultsSHA256: added.ResultsSHA256}
	if old.ReplacedBy == nil || *old.ReplacedBy != want {
		t.Errorf("old entry's replaced_by %+v, want %+v", old.ReplacedBy, want)
	}
	if added.Replaces == nil || *added.Replaces != (manifest.EntryRef{RunID: id, ResultsSHA256: old.ResultsSHA256}) {
		t.Errorf("new entry's replaces %+v", added.Replaces)
	}
	if added.RunID != id || added.EvidenceCommit != s.Commits["c6"] || added.ResultsSHA256 == old.ResultsSHA256 {
		t.Errorf("new entry %+v", added)
	}
	// The old entry's fields are otherwise as reviewed.
	old.ReplacedBy = nil
	if old.EvidenceCommit != cur.Entries[1].EvidenceCommit || old.ReviewPR != cur.Entries[1].ReviewPR {
		t.Errorf("old entry changed: %+v", old)
	}
	verifies(t, repo, m, id)
	// Replacing the current entry with the report it already approves
	// changes nothing, and is refused.
	if _, err := repo.Add(m, addOpts(t, s.Folders["approvedA4000"], id)); err == nil || !strings.Contains(err.Error(), "already approves") {
		t.Errorf("replacing an entry with its own report: %v", err)
	}
}

// TestAddReplacesWithAnotherRun: a new run replaces an approved one; the
// new run's entry names it, the old one is kept and marked; a run with no
// current entry cannot be replaced.
func TestAddReplacesWithAnotherRun(t *testing.T) {
	t.Parallel()
	s, repo, cur := corrected(t)
	old := s.RunIDs["approved3060"]
	m := mustAdd(t, repo, cur, s.Folders["unreviewed"], old)
	added := m.Entries[len(m.Entries)-1]
	o, at := entryOf(m, old, cur.Entries[0].ResultsSHA256)
	if at != 0 || o.ReplacedBy == nil || *o.ReplacedBy != (manifest.EntryRef{RunID: s.RunIDs["unreviewed"], ResultsSHA256: added.ResultsSHA256}) {
		t.Errorf("old entry at %d: replaced_by %+v", at, o.ReplacedBy)
	}
	if added.Replaces == nil || added.Replaces.RunID != old {
		t.Errorf("new entry's replaces %+v", added.Replaces)
	}
	verifies(t, repo, m, old, s.RunIDs["unreviewed"])
	for _, gone := range []string{"20990101T000000Z-000000", old} {
		if _, err := repo.Add(m, addOpts(t, s.Folders["approvedA4000"], gone)); err == nil || !strings.Contains(err.Error(), "--replaces "+gone) {
			t.Errorf("--replaces %s (no current entry): %v", gone, err)
		}
	}
}

// TestReplacementChains: verify accepts a chain of replacements and
// rejects one that points nowhere, disagrees with the other end, or
// loops; two current entries of one run still fail.
func TestReplacementChains(t *testing.T) {
	t.Parallel()
	s, repo, cur := corrected(t)
	id := s.RunIDs["approvedA4000"]
	m := mustAdd(t, repo, cur, s.Folders["approvedA4000"], id)
	oldAt, newAt := 1, len(m.Entries)-1
	ref := func(i int) *manifest.EntryRef {
		return &manifest.EntryRef{RunID: m.Entries[i].RunID, ResultsSHA256: m.Entries[i].ResultsSHA256}
	}
	nowhere := &manifest.EntryRef{RunID: id, ResultsSHA256: strings.Repeat("a", 64)}
	for _, c := range []struct {
		name string
		edit func(es []manifest.Entry)
		at   int // the entry that fails
		says string
	}{
		{"replaced_by points nowhere", func(es []manifest.Entry) { es[oldAt].ReplacedBy = nowhere }, oldAt, "replaced_by names run " + id},
		{"replaces points nowhere", func(es []manifest.Entry) { es[newAt].Replaces = nowhere }, newAt, "replaces names run " + id},
		{"replaced_by without its replaces", func(es []manifest.Entry) { es[newAt].Replaces = nil }, oldAt, "does not name this entry"},
		{"replaces without its replaced_by", func(es []manifest.Entry) { es[oldAt].ReplacedBy = nil }, newAt, "does not name this entry"},
		{"replaced by itself", func(es []manifest.Entry) { es[newAt].ReplacedBy, es[newAt].Replaces = ref(newAt), ref(newAt) }, newAt, "loop"},
		{"a loop of two", func(es []manifest.Entry) { es[newAt].ReplacedBy, es[oldAt].Replaces = ref(oldAt), ref(newAt) }, oldAt, "loop"},
		{"two current entries of one run", func(es []manifest.Entry) { es[oldAt].ReplacedBy, es[newAt].Replaces = nil, nil }, newAt, "more than one current entry"},
		{"the same entry twice", func(es []manifest.Entry) { es[newAt] = es[oldAt] }, newAt, "appears more than once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := &manifest.Manifest{Format: m.Format, SchemaVersion: m.SchemaVersion, Entries: append([]manifest.Entry{}, m.Entries...)}
			c.edit(bad.Entries)
			checked := repo.Verify(bad, opts(t, protocol.StandInID))
			if got := checked[c.at]; got.OK() || !strings.Contains(strings.Join(got.Problems, "\n"), c.says) {
				t.Errorf("entry %d: %v, want a problem saying %q", c.at, got.Problems, c.says)
			}
		})
	}
	// A chain of two replacements verifies: A4000 → its correction → 4090.
	verifies(t, repo, mustAdd(t, repo, m, s.Folders["unreviewed"], id), id, s.RunIDs["unreviewed"])
}

// TestReplacementFieldsInTheFormat: the fields are optional, written only
// on the entries they mark, and read back strictly.
func TestReplacementFieldsInTheFormat(t *testing.T) {
	t.Parallel()
	s, repo, cur := corrected(t)
	plain, err := cur.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "replace") {
		t.Errorf("a manifest without replacements gained a field:\n%s", plain)
	}
	m := mustAdd(t, repo, cur, s.Folders["approvedA4000"], s.RunIDs["approvedA4000"])
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), `"replaced_by": {`) != 1 || strings.Count(string(data), `"replaces": {`) != 1 {
		t.Errorf("replacement fields:\n%s", data)
	}
	back, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Marshal()
	if string(again) != string(data) {
		t.Error("the manifest does not round-trip")
	}
	var doc map[string]any
	_ = json.Unmarshal(data, &doc)
	doc["entries"].([]any)[1].(map[string]any)["replaced_by"].(map[string]any)["why"] = "x"
	odd, _ := json.Marshal(doc)
	if _, err := manifest.Parse(odd); err == nil || !strings.Contains(err.Error(), "why") {
		t.Errorf("an unknown key in replaced_by: %v", err)
	}
}
