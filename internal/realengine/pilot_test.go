//go:build linux

package realengine

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/pilot"
)

// TestRealEngineRuns runs the three whole runs against the real engine (one
// slot with -c 2048, the engine killed mid-run, four slots) side by side,
// then holds strata bench pilot over their folders to what they show: the
// template verified on each (the preflight agrees on every fixture, the
// tool cases included), insufficient context and queueing behind one slot
// by the small-context run only, and every other item open. The engine is
// killed between two requests, so no request failed after a first delta:
// that item stays open too. bench view shows the three folders.
func TestRealEngineRuns(t *testing.T) {
	t.Parallel()
	// The folders live in the parent's temporary folders: a subtest's are
	// removed when it ends, before the pilot reads them.
	small, killed, four := t.TempDir(), t.TempDir(), t.TempDir()
	t.Run("runs", func(t *testing.T) {
		t.Run("URLRunSmallContext", func(t *testing.T) { t.Parallel(); urlRunSmallContext(t, small) })
		t.Run("EngineKilledMidRun", func(t *testing.T) { t.Parallel(); engineKilledMidRun(t, killed) })
		t.Run("ProfileRun", func(t *testing.T) { t.Parallel(); profileRun(t, four) })
	})
	// A run's own assertions failing does not stop the pilot's: it reads
	// whatever folders were written (readFolder fails without one).
	var dirs []string
	for _, root := range []string{small, killed, four} {
		dirs = append(dirs, readFolder(t, root).dir)
	}
	r := strata(t, t.TempDir(), nil, append([]string{"bench", "pilot", "--json"}, dirs...)...)
	if r.code != 0 {
		t.Fatalf("bench pilot: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep pilot.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench pilot --json: %v\n%s", err, r.stdout)
	}
	if len(rep.Checklists) != 1 || len(rep.Folders) != 3 {
		t.Fatalf("%d checklists over %d folders", len(rep.Checklists), len(rep.Folders))
	}
	for _, f := range rep.Folders {
		if !f.Valid || !f.Evidence.Engine.Real {
			t.Errorf("%s: valid %v, error %q, engine %+v", f.Label, f.Valid, f.Error, f.Evidence)
		}
	}
	want := map[string][]string{
		pilot.ItemTemplate:      {"#1", "#2", "#3"},
		pilot.ItemRevisions:     nil,
		pilot.ItemContext:       {"#1"},
		pilot.ItemErrorAfter:    nil,
		pilot.ItemQueueing:      {"#1"},
		pilot.ItemHardware:      nil,
		pilot.ItemSanityRescore: nil,
		pilot.ItemWebsite:       nil,
	}
	items := rep.Checklists[0].Items
	if len(items) != len(want) {
		t.Errorf("%d items, want %d", len(items), len(want))
	}
	for _, it := range items {
		var by []string
		for _, s := range it.By {
			by = append(by, s.Folder)
		}
		w, known := want[it.ID]
		switch {
		case !known:
			t.Errorf("unexpected item %s", it.ID)
		case !slices.Equal(by, w) || it.Shown != (len(w) > 0) || (it.Shown == (it.Open != "")):
			t.Errorf("%s: shown %v by %v (want %v), open %q; evidence %+v", it.ID, it.Shown, by, w, it.Open, it.By)
		}
	}
	// The evidence names what it rests on.
	ctx := items[slices.IndexFunc(items, func(i pilot.Item) bool { return i.ID == pilot.ItemContext })].By[0].Evidence
	if !strings.Contains(ctx, "per-slot context 2,048 tokens") || !strings.Contains(ctx, "http_status") {
		t.Errorf("insufficient context evidence %q", ctx)
	}
	viewRealEngine(t, dirs)
	md := strata(t, t.TempDir(), nil, append([]string{"bench", "pilot"}, dirs...)...)
	if md.code != 0 || !strings.Contains(md.stdout, "| Test the case the mock server cannot show: insufficient context | **shown** | #1: per-slot context 2,048 tokens") ||
		!strings.Contains(md.stdout, "### #3 `"+filepath.ToSlash(dirs[2])+"`") {
		t.Errorf("bench pilot: exit %d\n%s%s", md.code, md.stdout, md.stderr)
	}
}
