package journal

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/validate"
)

// snapshot is a journal that copies the pending folder the moment a given
// request begins: exactly what a runner killed then would leave.
type snapshot struct {
	*Writer
	at, to string
	once   sync.Once
}

func (s *snapshot) Begin(rec *record.Run, e *record.Request) {
	s.Writer.Begin(rec, e)
	if e.Req.ID == s.at {
		s.once.Do(func() {
			os.MkdirAll(s.to, 0o755)
			for _, name := range []string{Name, markerName} {
				data, _ := os.ReadFile(filepath.Join(s.Writer.Dir(), name))
				os.WriteFile(filepath.Join(s.to, name), data, 0o644)
			}
		})
	}
}

func lines(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var o contract.Output
		json.Unmarshal(sc.Bytes(), &o)
		out[o.RequestID] = sc.Text()
	}
	return out
}

// TestRecoverMatchesTheRun: a run whose journal is taken as a kill would
// leave it (at the dispatch of sanity-R1, and in the optional stage)
// recovers into a folder report accepts, in which every request finished
// before the kill is byte for byte the line the run itself wrote, the one
// in flight failed, and the rest skipped.
func TestRecoverMatchesTheRun(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"sanity-R1", "concurrency-r2-c1"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			b, _ := prompts.Bundle()
			tmpl, _, _ := prompts.Template(b)
			sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 40, Accuracy: 0.85, Slots: 4,
				Template: string(tmpl), ContextTokens: 32768, ModelPath: "m.gguf", Bundle: b})
			url, err := sim.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			c := client.New(client.Options{BaseURL: url})
			srv := runner.ProbeServer(context.Background(), c)
			red := result.Redactor(redact.Machine{Users: []string{"alice"}}, b)
			commit := strings.Repeat("ab", 20)
			kind := "source"
			facts := record.Facts{Protocol: b.Protocol, StrataCommit: &commit, RunnerCommit: &commit, BuildKind: &kind, Missing: map[string]string{
				"/hardware/gpus": "test", "/hardware/cpu": "test", "/hardware/ram_bytes": "test", "/hardware/storage": "test",
				"/software/os": "test", "/software/drivers": "test", "/software/runtime": "test"}}
			id := record.Identity{Track: "custom", Command: "strata bench run"}
			origin := time.Now() // one reading, monotonic part and all, as bench run takes it
			started := origin.UTC()
			runID := runner.NewID(started)
			root := t.TempDir()
			w, err := Create(root, Header{RunID: runID, Folder: contract.FolderName(started, facts.Hardware, runID), StartedAt: started,
				Optional: true, Identity: id, Facts: facts, Server: srv, BaseURL: url}, red)
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshot{Writer: w, at: at, to: filepath.Join(t.TempDir(), filepath.Base(w.Dir()))}
			rec := runner.Execute(context.Background(), runner.Config{Client: c, Bundle: b, Optional: true, Server: &srv, Journal: snap, ID: runID, StartedAt: origin})
			// The run starts at the one reading it was given, and every
			// dispatch's wall time is taken from it: none before started_at.
			if rec.Origin != origin || !rec.StartedAt.Equal(started) {
				t.Errorf("origin %v, started %v; given %v", rec.Origin, rec.StartedAt, origin)
			}
			for _, e := range rec.Requests {
				if e.Outcome != nil && (e.DispatchedAt != rec.Wall(e.Start) || e.DispatchedAt.Before(rec.StartedAt)) {
					t.Errorf("%s dispatched at %v: its wall time on the run's clock is %v, the run started %v", e.Req.ID, e.DispatchedAt, rec.Wall(e.Start), rec.StartedAt)
				}
			}
			maxShared := b.MaxShared()
			a, err := result.Assemble(rec, id, facts, maxShared, red)
			if err != nil {
				t.Fatal(err)
			}
			ran, err := folder.Write(filepath.Join(root, "ran"), a, red, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.Remove()
			got, err := Recover(context.Background(), snap.to, testBundles(b, red), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if v, err := validate.Dir(got, b); err != nil || len(v.Violations) != 0 {
				t.Fatalf("the recovered folder: %v %v", err, v.Violations)
			}
			want, have := lines(t, ran), lines(t, got)
			finished, inFlight := 0, 0
			for _, q := range a.Results.Requests {
				var o contract.Output
				json.Unmarshal([]byte(have[q.ID]), &o)
				switch {
				case o.Error != nil && o.Error.Kind == StoppedKind:
					inFlight++ // begun, not finished (a round's four begin together)
					if o.Status != contract.Failed {
						t.Errorf("%s (in flight): %s", q.ID, have[q.ID])
					}
				case q.ID == at:
					t.Errorf("%s was in flight at the kill: %s", q.ID, have[q.ID])
				case have[q.ID] == want[q.ID]:
					finished++
				case o.Status != contract.Skipped:
					t.Errorf("%s differs:\n run       %.300s\n recovered %.300s", q.ID, want[q.ID], have[q.ID])
				}
			}
			if finished == 0 || inFlight == 0 {
				t.Errorf("%d finished lines identical, %d in flight", finished, inFlight)
			}
			if _, err := os.Stat(snap.to); !os.IsNotExist(err) {
				t.Error("the pending folder stayed after recovery")
			}
		})
	}
}

// TestLockedJournalIsLeftAlone: the journal of a run that is still going
// is not recovered.
func TestLockedJournalIsLeftAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w, err := Create(root, Header{RunID: "x", Folder: "f"}, redact.New(redact.Machine{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove()
	// Another process (flock locks belong to the open file): a child opens
	// and tries to lock the journal.
	if os.Getenv("STRATA_JOURNAL_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLockChild$")
		cmd.Env = append(os.Environ(), "STRATA_JOURNAL_CHILD="+w.Dir())
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "locked: true") {
			t.Errorf("child: %s", out)
		}
	}
}

func TestLockChild(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("STRATA_JOURNAL_CHILD")
	if dir == "" {
		t.Skip("run by TestLockedJournalIsLeftAlone")
	}
	_, err := Read(context.Background(), dir, time.Now())
	t.Logf("locked: %v", IsLocked(err))
	os.Stdout.WriteString("locked: " + map[bool]string{true: "true", false: "false"}[IsLocked(err)] + "\n")
}
