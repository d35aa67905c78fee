package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
)

// Marker is the file that marks a pending folder as strata's own: it names
// the run the folder's journal belongs to. recover touches nothing that it
// does not find marked.
const Marker = ".strata-pending"

// Bounds of what recover reads. A journal becomes a result folder whose
// outputs.jsonl the validator bounds, so a larger journal cannot be a run
// strata wrote; one line holds one request's record (at most 4 MiB of
// text, JSON-escaped, and 65,536 trace events) or the header.
const (
	MaxBytes     = contract.MaxOutputsBytes + 64<<20
	MaxLineBytes = 64 << 20
	maxMarker    = 4 << 10
)

// marker is the marker file's content.
type marker struct {
	Format string `json:"format"`
	RunID  string `json:"run_id"`
	Folder string `json:"folder"`
}

func writeMarker(dir string, h Header) error {
	data, err := json.Marshal(marker{Format: Format, RunID: h.RunID, Folder: h.Folder})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, Marker), append(data, '\n'), 0o644)
	}
	if err != nil {
		return fmt.Errorf("mark the run's pending folder: %w", err)
	}
	return nil
}

// removePending removes a pending folder's own files (the journal, the
// marker and the output of the engine the runner started) and then the
// folder, which goes only when nothing else is left in it.
func removePending(dir string) error {
	for _, name := range []string{Name, Marker, contract.EngineLog} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Remove(dir); err != nil {
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			return fmt.Errorf("%s holds files strata did not write there; they were left in place", dir)
		}
		return err
	}
	return nil
}

// Journal is a read journal.
type Journal struct {
	Dir    string
	Header Header
	Begins map[string]Begin
	Dones  map[string]Done
	// Torn is set when the last line was cut (the runner died writing it).
	Torn bool
}

// Remove removes the pending folder's own files, then the folder if
// nothing else is left in it: the result folder it stood for has been
// written.
func (j *Journal) Remove() error { return removePending(j.Dir) }

// Pending lists the pending folders with a journal under root.
func Pending(root string) []string {
	matches, _ := filepath.Glob(filepath.Join(root, "."+"*"+pendingSuffix, Name))
	var out []string
	for _, m := range matches {
		out = append(out, filepath.Dir(m))
	}
	return out
}

// ErrLocked means a running strata still writes the journal.
var ErrLocked = errors.New("the journal is in use by a running strata")

// ErrNotPending means a folder is not a pending folder strata made.
var ErrNotPending = errors.New("not a pending folder of a strata run")

// IsLocked reports whether err says a running strata holds the journal.
func IsLocked(err error) bool { return errors.Is(err, ErrLocked) }

// Read reads the journal of a pending folder strictly: the folder must be
// one strata made (its name, its marker; not a symbolic link), the journal a regular file within
// MaxBytes whose lines are strict JSON (no duplicate names, valid UTF-8)
// within MaxLineBytes, one header first, and every request's lines of the
// protocol's schedule, once each, with times inside the run. A last line
// cut while being written is ignored (it is said in Torn). now is the wall
// clock: a journal cannot start in the future. ctx ends the read early.
func Read(ctx context.Context, dir string, now time.Time) (*Journal, error) {
	folder, err := pendingFolder(dir)
	if err != nil {
		return nil, err
	}
	// A link is not followed: recover would remove the journal it points
	// to, another run's or another place's, once the result is written.
	if st, err := os.Lstat(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	} else if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link; a pending folder is a folder strata made, and recover does not follow a link: %w", dir, ErrNotPending)
	}
	mk, err := readMarker(dir, folder)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, Name)
	if st, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	} else if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link; a journal is a file strata wrote: %w", path, ErrNotPending)
	}
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrNotPending)
	}
	defer func() { _ = f.Close() }() // read only: its content was read or refused
	if size > MaxBytes {
		return nil, fmt.Errorf("%s is %d bytes, larger than a run's journal can be (%d)", path, size, MaxBytes)
	}
	unlock, err := tryLock(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	defer unlock()
	j := &Journal{Dir: dir, Begins: map[string]Begin{}, Dones: map[string]Done{}}
	if err := j.read(ctx, io.LimitReader(f, MaxBytes+1)); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := j.check(folder, mk, now); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return j, nil
}

// pendingFolder returns the result folder name a pending folder's name
// stands for, or ErrNotPending.
func pendingFolder(dir string) (string, error) {
	base := filepath.Base(dir)
	folder := FolderOf(dir)
	if !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, pendingSuffix) || folder == "" {
		return "", fmt.Errorf("%s: its name is not .<result folder>%s: %w", dir, pendingSuffix, ErrNotPending)
	}
	return folder, nil
}

func readMarker(dir, folder string) (marker, error) {
	var mk marker
	path := filepath.Join(dir, Marker)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return mk, fmt.Errorf("%s has no %s marker file (strata marks every pending folder it makes): %w", dir, Marker, ErrNotPending)
	}
	data, err := inputfile.Read(path, maxMarker)
	if err == nil {
		err = strictjson.Check(data)
	}
	if err == nil {
		err = decodeStrict(data, &mk)
	}
	if err != nil {
		return mk, fmt.Errorf("%s: %w: %w", path, err, ErrNotPending)
	}
	if mk.Format != Format || mk.Folder != folder {
		return mk, fmt.Errorf("%s names the folder %q, not %q (a copied or renamed pending folder is not recovered): %w", path, mk.Folder, folder, ErrNotPending)
	}
	return mk, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// read reads the lines.
func (j *Journal) read(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	schedule := map[string]bool{}
	for _, req := range protocol.Schedule(true) {
		schedule[req.ID] = true
	}
	var total int64
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped (%w)", context.Cause(ctx))
		}
		raw, err := readLine(br, MaxLineBytes)
		total += int64(len(raw))
		if total > MaxBytes {
			return fmt.Errorf("larger than a run's journal can be (%d bytes)", MaxBytes)
		}
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(raw)) > 0 {
				j.Torn = true
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err := j.add(n, raw, schedule); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
}

// readLine reads one line (with its newline) of at most limit bytes; at
// the end of the input it returns what is left with io.EOF. A line longer
// than the reader's buffer is kept as the reader's chunks and joined once
// it ends: a hostile line of tens of MiB is copied once, not again at every
// doubling of a growing slice.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var chunks [][]byte
	size := 0
	for {
		chunk, err := r.ReadSlice('\n')
		size += len(chunk)
		if size > limit {
			return nil, fmt.Errorf("a line longer than %d bytes; no journal line strata writes is", limit)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			chunks = append(chunks, bytes.Clone(chunk))
			continue
		}
		line := make([]byte, 0, size)
		for _, c := range chunks {
			line = append(line, c...)
		}
		return append(line, chunk...), err
	}
}

// add takes one line.
func (j *Journal) add(n int, raw []byte, schedule map[string]bool) error {
	if err := strictjson.Check(raw); err != nil {
		return err
	}
	var l line
	if err := decodeStrict(raw, &l); err != nil {
		return err
	}
	set := 0
	for _, p := range []bool{l.Header != nil, l.Begin != nil, l.Done != nil} {
		if p {
			set++
		}
	}
	switch {
	case set != 1:
		return errors.New("a journal line holds exactly one of header, begin and done")
	case n == 1 && l.Header == nil:
		return errors.New("the journal does not start with its header")
	case n > 1 && l.Header != nil:
		return errors.New("a second header")
	case l.Header != nil:
		j.Header = *l.Header
		return nil
	case l.Begin != nil:
		id := l.Begin.ID
		if !schedule[id] {
			return fmt.Errorf("%q is not a request of the protocol", id)
		}
		if _, dup := j.Begins[id]; dup {
			return fmt.Errorf("%s begins twice", id)
		}
		j.Begins[id] = *l.Begin
	default:
		id := l.Done.ID
		if _, begun := j.Begins[id]; !begun {
			return fmt.Errorf("%s is done but never began", id)
		}
		if _, dup := j.Dones[id]; dup {
			return fmt.Errorf("%s is done twice", id)
		}
		j.Dones[id] = *l.Done
	}
	return nil
}

// maxRun bounds a run's span: every request of the schedule at its full
// timeout, plus an hour for everything between them.
var maxRun = time.Duration(len(protocol.Schedule(true)))*protocol.RequestTimeout + time.Hour

// check holds the header and the times to what a run of strata writes.
func (j *Journal) check(folder string, mk marker, now time.Time) error {
	h := j.Header
	switch {
	case h.Format != Format || h.Version != Version:
		return fmt.Errorf("not a strata run journal of version %d", Version)
	case h.Facts.Protocol.ID == "":
		return fmt.Errorf("header: the run names no protocol")
	case !contract.ValidRunID(h.RunID):
		return fmt.Errorf("header: run_id %q is not a run ID of the form <UTC start>-<6 hex digits>", h.RunID)
	case h.StartedAt.Before(earliest) || h.StartedAt.After(now.Add(24*time.Hour)):
		return fmt.Errorf("header: started_at %s is not a time a run can have started", h.StartedAt.UTC().Format(time.RFC3339))
	case h.Folder != folder || mk.RunID != h.RunID || !contract.ValidFolderName(h.Folder, h.StartedAt, h.RunID):
		return fmt.Errorf("header: the run %s, folder %q, started %s, is not the run of this pending folder (%s)", h.RunID, h.Folder,
			h.StartedAt.UTC().Format(time.RFC3339), folder)
	}
	inside := func(d time.Duration) bool { return d >= 0 && d <= maxRun }
	for id, b := range j.Begins {
		if !inside(b.Offset) || b.DispatchedAt.Before(h.StartedAt) {
			return fmt.Errorf("%s: its dispatch (offset %v, %s) is not inside the run", id, b.Offset, b.DispatchedAt.UTC().Format(time.RFC3339Nano))
		}
	}
	for id, d := range j.Dones {
		if !inside(d.Start) || !inside(d.End) || d.End < d.Start || d.DispatchedAt.Before(h.StartedAt) {
			return fmt.Errorf("%s: its times (start %v, end %v) are not inside the run", id, d.Start, d.End)
		}
	}
	return nil
}

// earliest is before any run of strata.
var earliest = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
