package manifest

import "fmt"

// EntryRef names one entry of the manifest: a run's ID and the SHA-256 of
// the results.json that was reviewed. A run has two entries when its
// results changed after review and were reviewed again, so its ID alone
// does not name an entry.
type EntryRef struct {
	RunID         string `json:"run_id"`
	ResultsSHA256 string `json:"results_sha256"`
}

// String names the entry for people.
func (r EntryRef) String() string {
	sum := r.ResultsSHA256
	if len(sum) > 12 {
		sum = sum[:12] + "…"
	}
	return fmt.Sprintf("run %s (results %s)", r.RunID, sum)
}

// Ref is the reference that names the entry.
func (e Entry) Ref() EntryRef { return EntryRef{RunID: e.RunID, ResultsSHA256: e.ResultsSHA256} }

// Current reports whether no later review replaced the entry.
func (e Entry) Current() bool { return e.ReplacedBy == nil }

// replacementProblems checks how the entries mark their replacements, the
// spec's "preserve old records or mark their replacement explicitly": each
// entry appears once; every replaced_by and replaces names an entry of the
// manifest whose own mark names this one back; no chain of replaced_by
// loops; and a run has at most one current (not replaced) entry. It
// returns each entry's problems, by index.
func replacementProblems(es []Entry) [][]string {
	out := make([][]string, len(es))
	at := map[EntryRef]int{}
	for i, e := range es {
		if _, dup := at[e.Ref()]; dup {
			out[i] = append(out[i], fmt.Sprintf("the entry of %s appears more than once", e.Ref()))
			continue
		}
		at[e.Ref()] = i
	}
	current := map[string]bool{}
	for i, e := range es {
		if e.Current() {
			if current[e.RunID] {
				out[i] = append(out[i], "the run ID appears in more than one current entry: a new review of a run replaces its entry (manifest add --replaces), which keeps the old one marked replaced_by")
			}
			current[e.RunID] = true
		}
		out[i] = append(out[i], markProblems(es, at, i, "replaced_by", e.ReplacedBy, "replaces", func(x Entry) *EntryRef { return x.Replaces })...)
		out[i] = append(out[i], markProblems(es, at, i, "replaces", e.Replaces, "replaced_by", func(x Entry) *EntryRef { return x.ReplacedBy })...)
		if loops(es, at, i) {
			out[i] = append(out[i], "its replaced_by chain loops back to it: a chain of replacements ends at a current entry")
		}
	}
	return out
}

// markProblems says why entry i's mark field (replaced_by or replaces),
// naming ref, is not one end of a replacement whose other end's back
// field names entry i.
func markProblems(es []Entry, at map[EntryRef]int, i int, field string, ref *EntryRef, backField string, back func(Entry) *EntryRef) []string {
	if ref == nil {
		return nil
	}
	j, ok := at[*ref]
	if !ok {
		return []string{fmt.Sprintf("%s names %s, which is no entry of the manifest", field, *ref)}
	}
	if b := back(es[j]); b == nil || *b != es[i].Ref() {
		return []string{fmt.Sprintf("%s names %s, whose %s does not name this entry", field, *ref, backField)}
	}
	return nil
}

// loops reports whether following replaced_by from entry i comes back to
// it.
func loops(es []Entry, at map[EntryRef]int, i int) bool {
	seen := map[int]bool{i: true}
	for j := i; es[j].ReplacedBy != nil; {
		k, ok := at[*es[j].ReplacedBy]
		switch {
		case !ok:
			return false
		case k == i:
			return true
		case seen[k]: // a loop further on, which its own entries report
			return false
		}
		seen[k] = true
		j = k
	}
	return false
}

// replace marks the current entry of run id in m as replaced by e, and e
// as replacing it; e must be a new review (another run, or other results
// of that run). It refuses a run with no current entry, and a report that
// entry already approves.
func replace(m *Manifest, id string, e *Entry) error {
	for i := range m.Entries {
		old := &m.Entries[i]
		if old.RunID != id || !old.Current() {
			continue
		}
		if old.Ref() == e.Ref() {
			return fmt.Errorf("--replaces %s: its current entry already approves this report (results %s): nothing changed to review again", id, e.ResultsSHA256)
		}
		oldRef, newRef := old.Ref(), e.Ref()
		old.ReplacedBy, e.Replaces = &newRef, &oldRef
		return nil
	}
	return fmt.Errorf("--replaces %s: the manifest has no current entry of that run to replace", id)
}
