package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/inputfile"
)

// readLog is an engine's output as the engine log artifact keeps it: its
// head, at most contract.MaxEngineLogBytes (the configuration the engine
// prints at start is there), and contract.EngineLogCut where the rest was
// left out.
func readLog(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the engine's log: %w", err)
	}
	return readPart(f, 0, st.Size(), contract.MaxEngineLogBytes)
}

// notesRoom is what strata's own lines take in a log file it keeps: the
// line where the run began and a cut line after each part. The part
// before the run gives that room up, so the artifact stays within
// contract.MaxArtifactBytes, which every reader of a folder holds it to.
const notesRoom = len(contract.EngineLogRunStart) + 1 + 2*(len(contract.EngineLogCut)+2)

// readPart is the bytes [from, to) of r, at most limit of them, then
// contract.EngineLogCut on a line of its own when there were more.
func readPart(r io.ReaderAt, from, to, limit int64) ([]byte, error) {
	n := min(to-from, limit)
	b := make([]byte, n)
	if _, err := r.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the engine's log: %w", err)
	}
	if to-from > n {
		b = append(b, "\n"+contract.EngineLogCut+"\n"...)
	}
	return b, nil
}

// ReadLog reads the engine log the engine the runner started wrote to
// path (a killed run's, from its pending folder), as Child.Log does.
func ReadLog(path string) ([]byte, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer closeRead(f)
	return readLog(f)
}

// closeRead closes a file opened only to read it: everything wanted was
// read, so a failed close loses nothing.
func closeRead(f *os.File) { _ = f.Close() }

// LogFile is the log file an engine already serving writes (llama-server
// --log-file), named with bench run --engine-log: the run marks where it
// began in it, and reads it after the run.
type LogFile struct {
	path string
	// from is the file's size when the run began.
	from int64
}

// OpenLogFile checks, before any work, that path is a regular file strata
// can read and of at most contract.MaxEngineLogBytes.
func OpenLogFile(path string) (*LogFile, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	closeRead(f)
	if size > contract.MaxEngineLogBytes {
		return nil, fmt.Errorf("%s is %d bytes, %w (at most %d): start the server with a new log file", path, size, inputfile.ErrTooLarge, contract.MaxEngineLogBytes)
	}
	return &LogFile{path: path}, nil
}

// Mark remembers where the file ends now, as the run begins: what the
// engine writes after it is the run's.
func (l *LogFile) Mark() error {
	st, err := os.Stat(l.path)
	if err != nil {
		return fmt.Errorf("--engine-log %s: %w", l.path, err)
	}
	l.from = st.Size()
	return nil
}

// Read is the file as the engine log artifact keeps it: what was in it
// before the run (its head, at most contract.MaxEngineLogBytes less
// notesRoom), the line
// contract.EngineLogRunStart, and what the engine wrote while the run went
// (as much again). The run's part begins at the start of the line the
// file ended in when the run began. A file that is shorter than it was
// then was begun again, and all of it is the run's.
func (l *LogFile) Read() ([]byte, error) {
	f, size, err := inputfile.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("--engine-log: %w", err)
	}
	defer closeRead(f)
	var out []byte
	from := l.from
	switch {
	case size < from:
		out = fmt.Appendf(nil, "[strata: the log file was %d bytes when the run began and is %d bytes after it: it was begun again, and all of it is held against the run]\n", from, size)
		from = 0
	case from > 0:
		limit := int64(contract.MaxEngineLogBytes - notesRoom)
		before, err := readPart(f, 0, from, limit)
		if err != nil {
			return nil, err
		}
		if from <= limit {
			// A line the engine was writing as the run began is the run's.
			cut := bytes.LastIndexByte(before, '\n') + 1
			before, from = before[:cut], int64(cut)
		}
		out = before
	}
	run, err := readPart(f, from, size, contract.MaxEngineLogBytes)
	if err != nil {
		return nil, err
	}
	out = append(out, contract.EngineLogRunStart+"\n"...)
	return append(out, run...), nil
}
