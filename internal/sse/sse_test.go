package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLineBoundIsExact: the limit counts a line's bytes without its
// terminator; a line of exactly the limit passes under every terminator
// (and none, at the end), one byte more fails. Both the short path (a line
// inside the 64 KiB buffer) and the long one (a line spilling over it) are
// tried.
func TestLineBoundIsExact(t *testing.T) {
	t.Parallel()
	for _, max := range []int{8, MaxLine} {
		for _, eol := range []string{"\n", "\r\n", ""} {
			for _, n := range []int{max, max + 1} {
				line := "data:" + strings.Repeat("x", n-5)
				r := NewReader(strings.NewReader(line+eol+eol), max)
				ev, err := r.Next()
				if eol == "" && n == max {
					// A last line without a terminator is a line; its event
					// is then unterminated, not too long.
					if !errors.Is(err, ErrUnterminated) {
						t.Errorf("max %d, no terminator, %d bytes: %v", max, n, err)
					}
					continue
				}
				if n == max {
					if err != nil || ev.Kind != Data || len(ev.Data) != n-5 {
						t.Errorf("max %d, eol %q: a line of %d bytes: %v (%d data bytes)", max, eol, n, err, len(ev.Data))
					}
					continue
				}
				if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 1:") {
					t.Errorf("max %d, eol %q: a line of %d bytes gave %v, want %v", max, eol, n, err, ErrLineTooLong)
				}
			}
		}
	}
}

// TestEventBoundIsExact: the data of one event, its lines joined by LF, may
// be MaxEvent bytes; one more fails.
func TestEventBoundIsExact(t *testing.T) {
	t.Parallel()
	half := MaxEvent / 2
	for _, extra := range []int{0, 1} {
		// Two data lines: half-1 bytes, the joining LF, half+extra bytes.
		body := "data:" + strings.Repeat("a", half-1) + "\ndata:" + strings.Repeat("b", half+extra) + "\n\n"
		ev, err := NewReader(strings.NewReader(body), 0).Next()
		if extra == 0 && (err != nil || len(ev.Data) != MaxEvent) {
			t.Errorf("an event of exactly %d bytes: %v (%d bytes)", MaxEvent, err, len(ev.Data))
		}
		if extra == 1 && !errors.Is(err, ErrEventTooLarge) {
			t.Errorf("an event of %d bytes gave %v", MaxEvent+1, err)
		}
	}
	if _, err := NewReader(strings.NewReader(""), 0).Next(); !errors.Is(err, io.EOF) {
		t.Errorf("an empty stream: %v", err)
	}
}
