// Package sse reads a Server-Sent Events stream line by line: data fields,
// comments (keep-alives) and the blank lines that end an event. It knows
// nothing about JSON; the client interprets each event's data.
//
// Event boundaries do not line up with HTTP chunk boundaries (llama.cpp's
// server often puts two events in one chunk and splits none), so the reader
// parses by lines, as the SSE specification says.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line accepted by default: 1 MiB, not counting the
// line's terminator. A longer line is an error, never a silent truncation.
const MaxLine = 1 << 20

// MaxEvent is the most data one event may gather over its lines (a chunk of
// a chat stream is a few hundred bytes): data lines without a blank line
// between them never grow a buffer without bound.
const MaxEvent = 1 << 20

// ErrLineTooLong reports a line over the reader's limit.
var ErrLineTooLong = errors.New("SSE line longer than the limit")

// ErrEventTooLarge reports an event whose data lines together exceed
// MaxEvent.
var ErrEventTooLarge = errors.New("SSE event larger than the limit")

// ErrUnterminated reports a stream that ended inside an event (data lines
// with no blank line after them).
var ErrUnterminated = errors.New("stream ended inside an event")

// Kind is what an Event is.
type Kind int

const (
	// Data is a dispatched event: one or more data lines, joined by LF.
	Data Kind = iota
	// Comment is a line starting with ':' (llama.cpp's keep-alive is ":").
	Comment
)

// Event is one SSE event or comment. Data aliases the reader's buffer and is
// valid only until the next call to Next.
type Event struct {
	Kind Kind
	Data []byte
	// Name is the event's "event:" field, if any.
	Name string
}

// Reader reads events from a stream.
type Reader struct {
	br      *bufio.Reader
	max     int
	line    []byte // spill buffer for lines longer than br's buffer
	data    []byte
	hasData bool
	name    string
	lines   int
}

// NewReader returns a reader with a 64 KiB buffer and the given line limit
// (MaxLine when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = MaxLine
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// readLine returns the next line without its terminator (LF, CRLF or CR),
// or io.EOF at the end of input. A final line without a terminator is
// returned as a line. The limit counts the line's bytes without its
// terminator, exactly: a line of max bytes passes, one of max+1 does not.
func (r *Reader) readLine() ([]byte, error) {
	frag, err := r.br.ReadSlice('\n')
	switch {
	case err == nil:
	case errors.Is(err, bufio.ErrBufferFull):
		r.line = append(r.line[:0], frag...)
		for {
			// No LF yet: one byte past the limit may still be the CR of a
			// CRLF, two cannot.
			if len(r.line) > r.max+1 {
				return nil, r.tooLong()
			}
			frag, err = r.br.ReadSlice('\n')
			r.line = append(r.line, frag...)
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				if errors.Is(err, io.EOF) && len(r.line) > 0 {
					break
				}
				return nil, err
			}
		}
		frag = r.line
	case errors.Is(err, io.EOF) && len(frag) > 0:
	default:
		return nil, err
	}
	line := trimEOL(frag)
	if len(line) > r.max {
		return nil, r.tooLong()
	}
	r.lines++
	return line, nil
}

func (r *Reader) tooLong() error {
	return fmt.Errorf("line %d: %w (%d bytes)", r.lines+1, ErrLineTooLong, r.max)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Next returns the next event or comment. At the end of the stream it
// returns io.EOF, or ErrUnterminated when data lines were not followed by a
// blank line.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if errors.Is(err, io.EOF) {
			if r.hasData {
				r.hasData = false
				return Event{}, ErrUnterminated
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !r.hasData {
				r.name = ""
				continue
			}
			ev := Event{Kind: Data, Data: r.data, Name: r.name}
			r.hasData, r.name = false, ""
			return ev, nil
		}
		if line[0] == ':' {
			return Event{Kind: Comment, Data: line[1:]}, nil
		}
		if err := r.field(line); err != nil {
			return Event{}, err
		}
	}
}

// field takes one field line of the event being gathered: a data line adds
// to its data, an event line names it.
func (r *Reader) field(line []byte) error {
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if !r.hasData {
			r.data = append(r.data[:0], value...)
			r.hasData = true
			return nil
		}
		if len(r.data)+1+len(value) > MaxEvent {
			r.hasData = false
			return fmt.Errorf("line %d: %w (%d bytes)", r.lines, ErrEventTooLarge, MaxEvent)
		}
		r.data = append(r.data, '\n')
		r.data = append(r.data, value...)
	case "event":
		r.name = string(value)
	}
	// id and retry carry nothing for a chat stream; unknown fields are
	// ignored, as the SSE specification requires.
	return nil
}
