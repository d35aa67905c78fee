package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/journal"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/validate"
)

// killed is one pending folder as a runner killed at sanity-R1 leaves it,
// made once for the tests that attack recover.
var killed struct {
	once sync.Once
	dir  string // a folder holding the pending folder
	name string // the pending folder's name
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if killed.dir != "" {
		_ = os.RemoveAll(killed.dir) // best effort: a folder under the system's temporary folder
	}
	os.Exit(code)
}

// killedCopy returns a fresh copy of the killed run's pending folder in
// its own results folder.
func killedCopy(t *testing.T) (pending string, b *fixtures.Bundle, red *redact.Redactor) {
	t.Helper()
	b, _ = prompts.Bundle()
	red = result.Redactor(redact.Machine{}, b)
	killed.once.Do(func() { killed.dir, killed.name, killed.err = makeKilled(b, red) })
	if killed.err != nil {
		t.Fatal(killed.err)
	}
	pending = filepath.Join(t.TempDir(), killed.name)
	if err := os.Mkdir(pending, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{journal.Name, journal.Marker} {
		data, err := os.ReadFile(filepath.Join(killed.dir, killed.name, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pending, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pending, b, red
}

func makeKilled(b *fixtures.Bundle, red *redact.Redactor) (string, string, error) {
	tmpl, _, _ := prompts.Template(b)
	sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 40, Accuracy: 0.85, Slots: 4,
		Template: string(tmpl), ContextTokens: 32768, ModelPath: "m.gguf", Bundle: b})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	defer func() { _ = sim.Close() }() // the snapshot is taken by then; the simulator's shutdown is not under test
	c := client.New(client.Options{BaseURL: url})
	srv := runner.ProbeServer(context.Background(), c)
	commit := strings.Repeat("ab", 20)
	kind := "source"
	facts := record.Facts{Protocol: b.Protocol, StrataCommit: &commit, RunnerCommit: &commit, BuildKind: &kind, Missing: map[string]string{
		"/hardware/gpus": "test", "/hardware/cpu": "test", "/hardware/ram_bytes": "test", "/hardware/storage": "test",
		"/software/os": "test", "/software/drivers": "test", "/software/runtime": "test"}}
	origin := time.Now() // one reading, monotonic part and all, as bench run takes it
	started := origin.UTC()
	runID := runner.NewID(started)
	root, err := os.MkdirTemp("", "strata-killed-")
	if err != nil {
		return "", "", err
	}
	w, err := journal.Create(root, journal.Header{RunID: runID, Folder: contract.FolderName(started, facts.Hardware, runID), StartedAt: started,
		Identity: record.Identity{Track: "custom", Command: "strata bench run"}, Facts: facts, Server: srv, BaseURL: url}, red)
	if err != nil {
		return "", "", err
	}
	snapDir, err := os.MkdirTemp("", "strata-killed-snap-")
	if err != nil {
		return "", "", err
	}
	snap := &snapshot{redacting: redacting{w, red}, at: "sanity-R1", to: filepath.Join(snapDir, filepath.Base(w.Dir()))}
	runner.Execute(context.Background(), runner.Config{Client: c, Bundle: b, Server: &srv, Journal: snap, ID: runID, StartedAt: origin})
	if err := errors.Join(snap.err, w.Remove(), os.RemoveAll(root)); err != nil {
		return "", "", err
	}
	return snapDir, filepath.Base(w.Dir()), nil
}

// testBundles opens the embedded bundle for the stand-in and nothing else.
func testBundles(b *fixtures.Bundle, red *redact.Redactor) Bundles {
	return Bundles{
		Open: func(id string) (*fixtures.Bundle, error) {
			if id != b.Protocol.ID {
				return nil, fmt.Errorf("no bundle for %q", id)
			}
			return b, nil
		},
		Redactor: func(*fixtures.Bundle) *redact.Redactor { return red },
	}
}

// editLines rewrites the journal of a pending folder line by line.
func editLines(t *testing.T, pending string, edit func(lines [][]byte) [][]byte) {
	t.Helper()
	path := filepath.Join(pending, journal.Name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if err := os.WriteFile(path, bytes.Join(edit(lines), nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hugeLine keeps the journal's header and writes after it one line of
// prefix, n bytes of "x" and suffix, streamed: the line is tens of MiB,
// which need never be held in memory (editLines would hold it twice).
func hugeLine(t *testing.T, pending, prefix string, n int, suffix string) {
	t.Helper()
	path := filepath.Join(pending, journal.Name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(data, []byte("\n"))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A bufio.Writer keeps its first error and returns it from Flush,
	// which is checked below.
	w := bufio.NewWriterSize(f, 1<<16)
	_, _ = w.Write(header)
	_, _ = w.WriteString("\n" + prefix)
	block := bytes.Repeat([]byte("x"), 1<<16)
	for ; n > 0; n -= len(block) {
		_, _ = w.Write(block[:min(n, len(block))])
	}
	_, _ = w.WriteString(suffix)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// editHeader changes the header's JSON object with edit.
func editHeader(t *testing.T, pending string, edit func(h map[string]any)) {
	t.Helper()
	editLines(t, pending, func(lines [][]byte) [][]byte {
		var l map[string]map[string]any
		if err := json.Unmarshal(lines[0], &l); err != nil {
			t.Fatal(err)
		}
		edit(l["header"])
		data, _ := json.Marshal(l)
		lines[0] = append(data, '\n')
		return lines
	})
}

// listing is every file under dir with the SHA-256 of its contents
// (streamed: a hostile journal is tens of MiB).
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeType == 0 {
			out[rel] = fileSum(t, p)
		} else {
			out[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fileSum is the SHA-256 of a file's contents.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sameListing(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRecoverRefusesWhatStrataDidNotWrite: a folder that is not a pending
// folder strata made, or whose journal is not one a run of strata wrote, is
// refused with the reason, and nothing anywhere is removed or written.
func TestRecoverRefusesWhatStrataDidNotWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		make func(t *testing.T) string // returns the folder given to recover
		want string
	}{
		{"a project folder holding a copied journal", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			project := filepath.Join(t.TempDir(), "project")
			data, err := os.ReadFile(filepath.Join(pending, journal.Name))
			if err := errors.Join(err, os.MkdirAll(filepath.Join(project, "src"), 0o755),
				os.WriteFile(filepath.Join(project, "src", "main.go"), []byte("package main\n"), 0o644),
				os.WriteFile(filepath.Join(project, "README.md"), []byte("# mine\n"), 0o644),
				os.WriteFile(filepath.Join(project, journal.Name), data, 0o644)); err != nil {
				t.Fatal(err)
			}
			return project
		}, "its name is not .<result folder>.pending"},
		{"a pending-named folder without strata's marker", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			if err := os.Remove(filepath.Join(pending, journal.Marker)); err != nil {
				t.Fatal(err)
			}
			return pending
		}, "marker"},
		{"a copy of a pending folder under another name", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			other := filepath.Join(filepath.Dir(pending), ".2026-01-01-standard-unknown-gpu-20260101T000000Z-abcdef.pending")
			if err := os.Rename(pending, other); err != nil {
				t.Fatal(err)
			}
			return other
		}, "a copied or renamed pending folder"},
		{"a journal linked to /dev/zero", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			if err := errors.Join(os.Remove(filepath.Join(pending, journal.Name)), os.Symlink("/dev/zero", filepath.Join(pending, journal.Name))); err != nil {
				t.Fatal(err)
			}
			return pending
		}, "symbolic link"},
		{"a FIFO journal", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			if err := errors.Join(os.Remove(filepath.Join(pending, journal.Name)), syscall.Mkfifo(filepath.Join(pending, journal.Name), 0o644)); err != nil {
				t.Fatal(err)
			}
			return pending
		}, "named pipe"},
		{"a line longer than any strata writes", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			hugeLine(t, pending, `{"begin":{"id":"`, journal.MaxLineBytes, "\"}}\n")
			return pending
		}, "a line longer than"},
		{"a duplicate name", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editLines(t, pending, func(lines [][]byte) [][]byte {
				return append(lines, []byte(`{"begin":{"id":"sanity-R2","id":"sanity-R3","dispatched_at":"2026-12-01T00:00:00Z","offset_ns":1}}`+"\n"))
			})
			return pending
		}, "duplicate object name"},
		{"invalid UTF-8", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editLines(t, pending, func(lines [][]byte) [][]byte {
				return append(lines, []byte("{\"begin\":{\"id\":\"sanity-\xff\",\"offset_ns\":1}}\n"))
			})
			return pending
		}, "invalid UTF-8"},
		{"a second header", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editLines(t, pending, func(lines [][]byte) [][]byte { return append(lines, lines[0]) })
			return pending
		}, "a second header"},
		{"an empty run_id", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editHeader(t, pending, func(h map[string]any) { h["run_id"] = "" })
			return pending
		}, "is not a run ID"},
		{"a run_id with escape sequences", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editHeader(t, pending, func(h map[string]any) { h["run_id"] = "\x1b]0;pwned\x07\x1b[2J" })
			return pending
		}, "is not a run ID"},
		{"a start in the year 9999", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editHeader(t, pending, func(h map[string]any) { h["started_at"] = "9999-01-01T00:00:00Z" })
			return pending
		}, "is not a time a run can have started"},
		{"a start in the year 0001", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editHeader(t, pending, func(h map[string]any) { h["started_at"] = "0001-01-01T00:00:00Z" })
			return pending
		}, "is not a time a run can have started"},
		{"a swapped dialect", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editHeader(t, pending, func(h map[string]any) {
				d := h["server"].(map[string]any)["Dialect"].(map[string]any)
				d["engine"] = "vllm"
			})
			return pending
		}, "not valid"},
		{"a negative offset", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editLines(t, pending, func(lines [][]byte) [][]byte {
				for i, l := range lines {
					lines[i] = bytes.Replace(l, []byte(`"offset_ns":`), []byte(`"offset_ns":-`), 1)
				}
				return lines
			})
			return pending
		}, "not inside the run"},
		{"a huge end", func(t *testing.T) string {
			pending, _, _ := killedCopy(t)
			editLines(t, pending, func(lines [][]byte) [][]byte {
				for i, l := range lines {
					var m map[string]map[string]json.RawMessage
					if json.Unmarshal(l, &m) == nil && m["done"] != nil {
						m["done"]["end_ns"] = json.RawMessage("1000000000000000000") // 31 years
						data, _ := json.Marshal(m)
						lines[i] = append(data, '\n')
						break
					}
				}
				return lines
			})
			return pending
		}, "not inside the run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := c.make(t)
			b, _ := prompts.Bundle()
			red := result.Redactor(redact.Machine{}, b)
			parent := filepath.Dir(dir)
			before := listing(t, parent)
			// A journal that never ends (/dev/zero, a FIFO) must be refused,
			// not read: were it read, Recover would not return and go
			// test's -timeout would name this test.
			out, err := Recover(context.Background(), dir, testBundles(b, red), folder.Finish, time.Now())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Recover: %q, %v; want an error with %q", out, err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("the error carries raw escape bytes: %q", err)
			}
			if !sameListing(before, listing(t, parent)) {
				t.Errorf("recover changed %s although it refused", parent)
			}
		})
	}
}

// TestRecoverRemovesOnlyItsOwn: a pending folder that also holds a file
// strata did not write is recovered, and that file and its folder stay.
func TestRecoverRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	pending, b, red := killedCopy(t)
	mine := filepath.Join(pending, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Recover(context.Background(), pending, testBundles(b, red), folder.Finish, time.Now())
	if err == nil || !strings.Contains(err.Error(), "did not write") {
		t.Errorf("Recover: %v; want a note that other files were left", err)
	}
	if out == "" {
		t.Fatal("the result was not written")
	}
	if data, err := os.ReadFile(mine); err != nil || string(data) != "mine" {
		t.Errorf("the user's file: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(pending, journal.Name)); !os.IsNotExist(err) {
		t.Errorf("the journal stayed: %v", err)
	}
}

// TestRecoverRefusesALinkedPendingFolder: a pending
// folder that is a symbolic link (to another run's pending folder) is
// refused, naming the link; the journal it points to is not read into a
// result here, nor removed, and the link stays.
func TestRecoverRefusesALinkedPendingFolder(t *testing.T) {
	t.Parallel()
	target, b, red := killedCopy(t)
	sum := fileSum(t, filepath.Join(target, journal.Name))
	results := t.TempDir()
	link := filepath.Join(results, filepath.Base(target))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	before := listing(t, results)
	for _, p := range journal.Pending(results) {
		if p != link {
			t.Fatalf("pending %s, want the link %s", p, link)
		}
	}
	out, err := Recover(context.Background(), link, testBundles(b, red), folder.Finish, time.Now())
	if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Recover: %q, %v; want a refusal naming the link", out, err)
	}
	if got := fileSum(t, filepath.Join(target, journal.Name)); got != sum {
		t.Errorf("the linked journal changed or went: %s", got)
	}
	if !sameListing(before, listing(t, results)) {
		t.Errorf("recover changed %s: %v", results, listing(t, results))
	}
}

// snapshot is a journal that copies the pending folder the moment a given
// request begins: exactly what a runner killed then would leave.
type snapshot struct {
	redacting
	at, to string
	once   sync.Once
	err    error // the copy's, read once the run is over
}

func (s *snapshot) Begin(rec *record.Run, e *record.Request) {
	s.redacting.Begin(rec, e)
	if e.Req.ID == s.at {
		s.once.Do(func() {
			s.err = os.MkdirAll(s.to, 0o755)
			for _, name := range []string{journal.Name, journal.Marker} {
				data, err := os.ReadFile(filepath.Join(s.Dir(), name))
				if err == nil {
					err = os.WriteFile(filepath.Join(s.to, name), data, 0o644)
				}
				s.err = errors.Join(s.err, err)
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
	defer func() { _ = f.Close() }() // read only
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var o contract.Output
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out[o.RequestID] = sc.Text()
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", dir, err)
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
			defer func() {
				if err := sim.Close(); err != nil {
					t.Error(err)
				}
			}()
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
			w, err := journal.Create(root, journal.Header{RunID: runID, Folder: contract.FolderName(started, facts.Hardware, runID), StartedAt: started,
				Optional: true, Identity: id, Facts: facts, Server: srv, BaseURL: url}, red)
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshot{redacting: redacting{w, red}, at: at, to: filepath.Join(t.TempDir(), filepath.Base(w.Dir()))}
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
			if err := errors.Join(snap.err, w.Remove()); err != nil {
				t.Fatal(err)
			}
			got, err := Recover(context.Background(), snap.to, testBundles(b, red), folder.Finish, time.Now())
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
				if err := json.Unmarshal([]byte(have[q.ID]), &o); err != nil {
					t.Fatalf("%s: the recovered line %q: %v", q.ID, have[q.ID], err)
				}
				switch {
				case o.Error != nil && o.Error.Kind == derive.RunnerStoppedKind:
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
