// Package inputfile reads the files strata is given by name (a tokenizer,
// a chat template, a scenario, a profile, a journal, a bundle): each must be
// a regular file, and one read into memory must be within a stated size.
// A device, a FIFO, a socket or a folder is refused before anything is read
// from it, so `--tokenizer /dev/zero` or a profile linked to a named pipe
// fails at once with the reason instead of filling memory or waiting
// forever. Symbolic links are followed: a user may link a real tokenizer
// into place.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrTooLarge is returned for a file beyond its size limit.
var ErrTooLarge = errors.New("larger than strata reads")

// Read returns the contents of the regular file at path, at most limit
// bytes.
func Read(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	// Only read: closing it loses nothing.
	defer func() { _ = f.Close() }()
	if size > limit {
		return nil, fmt.Errorf("%s is %d bytes, %w (at most %d)", path, size, ErrTooLarge, limit)
	}
	// Read into a buffer of the size the file had (plus one byte, to see
	// growth): io.ReadAll grows its buffer step by step, copying what it
	// has read of a file of megabytes again at each step.
	r := io.LimitReader(f, limit+1)
	data := make([]byte, 0, size+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past %d bytes while it was read: %w", path, limit, ErrTooLarge)
	}
	return data, nil
}

// Open opens the regular file at path for reading and returns its size
// (no size limit: a model file may be tens of gigabytes and is streamed).
func Open(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := regular(path, st); err != nil {
		return nil, 0, err
	}
	// Opened without blocking, so a FIFO swapped in after the check above
	// cannot hold the open; the check is repeated on what was opened.
	f, err := openNonblocking(path)
	if err != nil {
		return nil, 0, err
	}
	st, err = f.Stat()
	if err == nil {
		err = regular(path, st)
	}
	if err != nil {
		_ = f.Close() // only opened, and refused: the refusal is the error
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Check reports whether path names a regular file, without opening it.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, st)
}

func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file", path, kind(m))
}

// kind names what a file that is not regular is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}
