// Package exitcode holds strata's exit codes and the errors that choose
// them, in one place: every command returns an error, and Of maps it.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes.
const (
	OK          = 0
	Failed      = 1   // a check failed, or the work could not be done
	Usage       = 2   // bad flags, arguments or input named on the command line
	Interrupted = 130 // a signal ended the work early (what was done is written)
)

// UsageError marks bad usage: a flag, an argument, a file named on the
// command line that is not what was expected.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a message.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// CheckFailed marks a completed check that found problems, whose details
// the command has already printed.
type CheckFailed struct{ Msg string }

func (e CheckFailed) Error() string { return e.Msg }

// InterruptedError marks work a signal ended early whose result was still
// written.
type InterruptedError struct{ Msg string }

func (e InterruptedError) Error() string { return e.Msg }

// Signalled is the cause of a context a signal ended; Name says which.
type Signalled struct{ Name string }

func (s Signalled) Error() string { return s.Name }

// Of is the exit code for a command's error, given the context it ran in
// (a signal that ended it makes any error an interruption).
func Of(ctx context.Context, err error) int {
	if err == nil {
		return OK
	}
	var ie InterruptedError
	var sig Signalled
	if errors.As(err, &ie) || errors.As(context.Cause(ctx), &sig) {
		return Interrupted
	}
	var ue UsageError
	if errors.As(err, &ue) {
		return Usage
	}
	return Failed
}
