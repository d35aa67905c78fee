// Package strictjson reads JSON strata did not just write (a result
// folder, the approved manifest, the bundle) strictly: one complete value,
// no duplicate object names (a reader that keeps the first value would see
// another document than one that keeps the last), valid UTF-8 (never
// silently U+FFFD), and a size limit checked before anything is read.
// Errors name the JSON Pointer where the document breaks the rules.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is a document that breaks the rules, with where.
type Error struct {
	Pointer string // JSON Pointer of the value ("" for the whole document)
	Offset  int64
	Reason  string
}

func (e *Error) Error() string {
	at := e.Pointer
	if at == "" {
		at = "the document"
	}
	return fmt.Sprintf("%s (byte %d): %s", at, e.Offset, e.Reason)
}

// Check reports whether data is exactly one strict JSON value.
func Check(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if _, err := dec.ReadValue(); err != nil {
		return describe(err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return &Error{Offset: dec.InputOffset(), Reason: "data after the JSON value"}
	}
	return nil
}

func describe(err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		reason := se.Err.Error()
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			reason = "a duplicate object name (readers would disagree on its value)"
		case bytes.Contains([]byte(reason), []byte("UTF-8")):
			reason = "invalid UTF-8"
		}
		return &Error{Pointer: string(se.JSONPointer), Offset: se.ByteOffset, Reason: reason}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Reason: "the document ends before its JSON value does"}
	}
	return &Error{Reason: err.Error()}
}

// ErrTooLarge is returned for a file beyond its size limit.
var ErrTooLarge = errors.New("larger than strata reads")

// ReadFile reads a regular file (never a symlink) of at most limit bytes
// from fsys.
func ReadFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	st, err := fs.Lstat(fsys, name)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: a result folder holds its own files", name)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, %w (the limit is %d)", name, st.Size(), ErrTooLarge, limit)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	// Only read: closing it loses nothing.
	defer func() { _ = f.Close() }()
	// Sized by the Lstat (plus room to see that it grew): io.ReadAll's
	// doubling cleared and copied a folder's outputs.jsonl several times,
	// a fifth of a validation's time.
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past %d bytes while read: %w", name, limit, ErrTooLarge)
	}
	return data, nil
}

// OpenList reads the start of a value that is a JSON array or null (a
// token list, a trace): true when dec is then inside the array, false for
// null; any other value is an error naming its kind.
func OpenList(dec *jsontext.Decoder) (bool, error) {
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return false, err
	case tok.Kind() == 'n':
		return false, nil
	case tok.Kind() != '[':
		return false, fmt.Errorf("a JSON %v, not a list", tok.Kind())
	}
	return true, nil
}
