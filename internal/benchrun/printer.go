package benchrun

import (
	"fmt"
	"io"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/liveline"
)

// Printer is how a run speaks to the operator while it goes: permanent
// lines, the reasons the run will be nonconforming in the words the result
// will use, notes, and the one status line. Nothing in this package prints
// any other way.
type Printer interface {
	// Line writes a permanent line.
	Line(format string, a ...any)
	// Warn says, before it is too late to stop, why the run will be
	// nonconforming.
	Warn(r contract.StatusReason)
	// Note writes a line of what the operator may want to know.
	Note(format string, a ...any)
	// Status replaces the status line; Clear removes it.
	Status(text string)
	Clear()
}

// screenPrinter prints on the terminal's screen (or plainly into a pipe).
type screenPrinter struct{ scr *liveline.Screen }

func (s screenPrinter) Line(format string, a ...any) { s.scr.Printf(format, a...) }

func (s screenPrinter) Warn(r contract.StatusReason) {
	s.scr.Printf("warning: the run will be nonconforming: %s", escape.Line(r.Text))
}

func (s screenPrinter) Note(format string, a ...any) {
	s.scr.Println("note: " + fmt.Sprintf(format, a...))
}

func (s screenPrinter) Status(text string) { s.scr.Status(text) }

func (s screenPrinter) Clear() { s.scr.Clear() }

// lineOut is a printer of plain lines on w (a command's stdout: `bench
// check` prints its report there).
func lineOut(w io.Writer) Printer {
	if scr, ok := liveline.Of(w); ok {
		return screenPrinter{scr}
	}
	return screenPrinter{liveline.New(w, false, nil, nil)}
}
