// Package liveline keeps one status line at the bottom of a terminal and
// writes the run's permanent lines above it. On a terminal every line is
// fitted to the width: the status line is truncated (a line that wrapped
// would leave a stale copy on the screen at every redraw) and a permanent
// line is word-wrapped with an indent. Elsewhere (a pipe, a file, TERM=dumb)
// there is no status line and the permanent lines are written as they are.
//
// It is a single line redrawn with "\r" and "erase line", so it needs no
// terminal library; go-runewidth measures the cells a string takes (the
// lines carry "–", "×" and names from the server).
package liveline

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mattn/go-runewidth"
)

// Screen is the status line and the lines above it. It is safe for use
// from several goroutines.
type Screen struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	width func() int
	shown string // the status line as drawn, "" when none
	part  []byte // Write's unfinished line
	clean func(string) string
}

// New returns a screen on w. live says w is a terminal that takes "\r" and
// "\033[K"; width returns its width in cells (nil or a value below 20: 80).
// clean, when set, is applied to every line before it is shown (the
// command layer escapes what came from outside and removes secrets there,
// one place for everything a command prints); the screen's own control
// sequences are written after it.
func New(w io.Writer, live bool, width func() int, clean func(string) string) *Screen {
	return &Screen{w: w, live: live, width: width, clean: clean}
}

// Of returns w as a screen when it is one (a command's stderr), so a run
// draws its status line on the screen the command already prints through.
func Of(w io.Writer) (*Screen, bool) {
	s, ok := w.(*Screen)
	return s, ok
}

func (s *Screen) cleaned(text string) string {
	if s.clean == nil {
		return text
	}
	return s.clean(text)
}

// put writes to the screen. The screen is what the user watches (a
// command's stderr): when it cannot be written there is no one left to
// tell, and the run goes on to write its result folder regardless.
func (s *Screen) put(text string) { _, _ = io.WriteString(s.w, text) }

// Live reports whether the screen keeps a status line.
func (s *Screen) Live() bool { return s.live }

// Width is the terminal's width in cells.
func (s *Screen) Width() int {
	if s.width != nil {
		if n := s.width(); n >= 20 {
			return n
		}
	}
	return 80
}

// Status replaces the status line (nothing happens when not live).
func (s *Screen) Status(text string) {
	if !s.live {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	line := Fit(s.cleaned(text), s.Width()-1)
	if line == s.shown {
		return
	}
	s.shown = line
	s.put("\r\033[K" + line)
}

// Clear removes the status line.
func (s *Screen) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
}

func (s *Screen) clear() {
	if s.live && s.shown != "" {
		s.put("\r\033[K")
		s.shown = ""
	}
}

// Println writes a permanent line above the status line, which is drawn
// again below it.
func (s *Screen) Println(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.println(text)
}

func (s *Screen) println(text string) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = s.cleaned(l)
	}
	if !s.live {
		s.put(strings.Join(lines, "\n") + "\n")
		return
	}
	shown := s.shown
	s.clear()
	for _, l := range lines {
		for _, w := range Wrap(l, s.Width()-1) {
			s.put(w + "\n")
		}
	}
	if shown != "" {
		s.shown = shown
		s.put(shown)
	}
}

// Printf is Println with a format.
func (s *Screen) Printf(format string, args ...any) {
	s.Println(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n"))
}

// Write makes the screen an io.Writer: each complete line is written as
// Println writes it, so code that prints to stderr keeps the status line
// intact.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = append(s.part, p...)
	for {
		i := strings.IndexByte(string(s.part), '\n')
		if i < 0 {
			break
		}
		s.println(string(s.part[:i]))
		s.part = s.part[i+1:]
	}
	return len(p), nil
}

// Flush writes a last line that Write received without its newline.
func (s *Screen) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.part) > 0 {
		s.println(string(s.part))
		s.part = nil
	}
}

// Fit truncates text to width cells, ending it with "…" when cut.
func Fit(text string, width int) string {
	if runewidth.StringWidth(text) <= width {
		return text
	}
	return runewidth.Truncate(text, max(width, 1), "…")
}

// Wrap breaks text at spaces into lines of at most width cells; the lines
// after the first are indented by four spaces more than the first, and a
// word longer than a line is cut.
func Wrap(text string, width int) []string {
	lead := len(text) - len(strings.TrimLeft(text, " "))
	return WrapIndent(text, width, min(lead+4, width/2))
}

// WrapIndent is Wrap with the lines after the first indented by indent
// spaces.
func WrapIndent(text string, width, indent int) []string {
	if runewidth.StringWidth(text) <= width {
		return []string{text}
	}
	lead := len(text) - len(strings.TrimLeft(text, " "))
	pad := strings.Repeat(" ", indent)
	var out []string
	cur, curW, empty := text[:lead], lead, true
	next := func() { cur, curW, empty = pad, len(pad), true }
	for _, word := range strings.Fields(text) {
		ww := runewidth.StringWidth(word)
		if !empty && curW+1+ww > width {
			out = append(out, cur)
			next()
		}
		for curW+ww > width { // longer than a whole line
			cut := runewidth.Truncate(word, width-curW, "")
			if cut == "" {
				break
			}
			out = append(out, cur+cut)
			word = word[len(cut):]
			ww = runewidth.StringWidth(word)
			next()
		}
		if word == "" {
			continue
		}
		if !empty {
			cur += " "
			curW++
		}
		cur, curW, empty = cur+word, curW+ww, false
	}
	if !empty {
		out = append(out, cur)
	}
	return out
}
