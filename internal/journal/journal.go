// Package journal keeps a run's record on disk while it goes, so a run is
// never lost: a runner killed by SIGKILL, an out-of-memory kill or a power
// loss leaves a journal that `strata bench recover` (internal/benchrun's
// Recover) turns into a valid partial result folder. It stores and reads
// records; what they mean is the rest of strata's.
//
// The journal is a JSON Lines file in the run's pending folder (a hidden
// folder beside where the result folder will go): a header with everything
// the writer needs that is known before the first request, then a "begin"
// line before each request is dispatched and a "done" line after it has
// finished, each synced to disk before the next request is sent. Request
// times are kept as offsets from the run's monotonic origin, so a recovered
// record has exactly the durations the live one had, and its outputs.jsonl
// lines are byte for byte what the run itself would have written.
//
// Every line's strings pass through the run's redactor, and the run hands
// the journal each request with the server's evidence already redacted as
// the result will hold it (internal/benchrun does), so the journal holds
// no more private data than the result folder will; the API key never
// reaches it. Beside it, the engine the runner started writes its own
// output (engine.log) as it goes, so a killed run keeps it; it is
// redacted, as every engine log is, when the result folder is written.
package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
)

// File and folder names.
const (
	Name = "journal.jsonl"
	// pendingSuffix marks a pending folder: .<result folder>.pending
	pendingSuffix = ".pending"
	Format        = "strata-run-journal"
	Version       = 3
)

// PendingDir is the pending folder of a result folder name under root.
func PendingDir(root, folder string) string {
	return filepath.Join(root, "."+folder+pendingSuffix)
}

// FolderOf is the result folder name a pending folder stands for.
func FolderOf(pending string) string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(pending), "."), pendingSuffix)
}

// Header is what the writer needs that is known before the first request.
type Header struct {
	Format    string          `json:"format"`
	Version   int             `json:"version"`
	RunID     string          `json:"run_id"`
	Folder    string          `json:"folder"`
	StartedAt time.Time       `json:"started_at"`
	Optional  bool            `json:"optional"`
	Identity  record.Identity `json:"identity"`
	Facts     record.Facts    `json:"facts"`
	Server    record.Server   `json:"server"`
	// BaseURL is the server's URL (loopback or not is a rule).
	BaseURL string `json:"base_url"`
	// EngineGroup is the process group of the engine the runner started (0:
	// it started none), so recover can say what to check is gone where the
	// OS has no parent-death signal.
	EngineGroup int `json:"engine_group,omitempty"`
}

// Begin is written before a request is dispatched.
type Begin struct {
	ID           string        `json:"id"`
	DispatchedAt time.Time     `json:"dispatched_at"`
	Offset       time.Duration `json:"offset_ns"`
}

// Done is written after a request finished (its settings checked).
type Done struct {
	ID           string                  `json:"id"`
	Body         json.RawMessage         `json:"body"`
	Outcome      *record.Outcome         `json:"outcome"`
	Start        time.Duration           `json:"start_ns"`
	End          time.Duration           `json:"end_ns"`
	DispatchedAt time.Time               `json:"dispatched_at"`
	Settings     *contract.SettingsCheck `json:"settings,omitempty"`
}

// line is one journal line: exactly one of its fields is set.
type line struct {
	Header *Header `json:"header,omitempty"`
	Begin  *Begin  `json:"begin,omitempty"`
	Done   *Done   `json:"done,omitempty"`
}

// Writer appends to a journal. It implements runner.Journal.
type Writer struct {
	dir  string
	f    *os.File
	red  *redact.Redactor
	mu   sync.Mutex
	err  error // the first write error
	lock func()
}

// Create makes the pending folder under root (which must exist), marks it
// as strata's own and writes the header. The folder is locked for as long
// as the writer is open, so recover never takes the journal of a run that
// is still going.
func Create(root string, h Header, red *redact.Redactor) (*Writer, error) {
	h.Format, h.Version = Format, Version
	dir := PendingDir(root, h.Folder)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the run's pending folder: %w", err)
	}
	if err := writeMarker(dir, h); err != nil {
		// Best effort: the marker's error is the one to report, and a
		// folder left behind without a marker is never taken by recover.
		_ = os.Remove(dir)
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, Name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create the run's journal: %w", err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		_ = f.Close() // nothing was written yet; the lock's error is the one to report
		return nil, fmt.Errorf("lock the run's journal: %w", err)
	}
	w := &Writer{dir: dir, f: f, red: red, lock: unlock}
	h.Facts.EngineLog = nil // the engine writes its own beside the journal
	h.Facts.Engine.Env = budgetEnv(h.Facts.Engine.Env)
	w.write(line{Header: &h})
	return w, w.err
}

// budgetEnv keeps of an engine's environment only what the run's checks
// read (the server-level reasoning budget): the rest may hold secrets.
func budgetEnv(env []string) []string {
	if env == nil {
		return nil
	}
	out := []string{}
	for _, kv := range env {
		if strings.HasPrefix(kv, "LLAMA_ARG_THINK_BUDGET=") {
			out = append(out, kv)
		}
	}
	return out
}

// Dir is the pending folder.
func (w *Writer) Dir() string { return w.dir }

// Err is the first write error (the run goes on without its journal).
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Begin implements runner.Journal.
func (w *Writer) Begin(rec *record.Run, e *record.Request) {
	w.write(line{Begin: &Begin{ID: e.Req.ID, DispatchedAt: e.DispatchedAt, Offset: e.Start.Sub(rec.Origin)}})
}

// Done implements runner.Journal. The request's evidence comes redacted
// (see the package's doc).
func (w *Writer) Done(rec *record.Run, e *record.Request) {
	if e.Outcome == nil {
		return
	}
	w.write(line{Done: &Done{ID: e.Req.ID, Body: e.Body, Outcome: e.Outcome, Start: e.Start.Sub(rec.Origin),
		End: e.End.Sub(rec.Origin), DispatchedAt: e.DispatchedAt, Settings: e.Settings}})
}

// write appends one line and syncs it to disk.
func (w *Writer) write(l line) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	data, err := json.Marshal(l)
	if err == nil {
		data, err = w.red.JSON(data, false, journalOwned)
	}
	if err == nil {
		_, err = w.f.Write(append(data, '\n'))
	}
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		w.err = fmt.Errorf("journal %s: %w", filepath.Join(w.dir, Name), err)
	}
}

// journalOwned are the journal's strings that become protocol-owned values
// of the result (hashes, commits, IDs, times, the request bodies and the
// trace): redacting them here, where the result writer would not, could
// make a recovered folder differ from the run's own.
func journalOwned(p []string) bool {
	if len(p) < 2 {
		return false
	}
	switch p[0] {
	case "header":
		switch p[1] {
		case "run_id", "folder", "started_at", "format":
			return true
		case "facts":
			return len(p) > 2 && (p[2] == "StrataCommit" || p[2] == "RunnerCommit" || p[2] == "BuildKind" ||
				p[2] == "ModelFiles" && len(p) > 4 && p[4] == "sha256")
		}
	case "begin", "done":
		switch p[1] {
		case "id", "body", "dispatched_at":
			return true
		case "outcome":
			return len(p) > 2 && (p[2] == "Events" || p[2] == "FirstDeltaKind" || p[2] == "FinishReason")
		}
	}
	return false
}

// Close closes the journal (and unlocks it); the pending folder stays.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lock()
	return w.f.Close()
}

// Remove closes the journal and removes the pending folder: the result
// folder it stood for has been written. Only what strata put there goes.
func (w *Writer) Remove() error {
	// Every line was synced to disk as it was written, so closing the
	// file loses nothing whatever Close says; the folder goes either way.
	_ = w.Close()
	return removePending(w.dir)
}
