// Package clock is where the runtime's clock is read, and nowhere else
// (the linter holds it): everything that measures or stamps time takes a
// Func, so tests can pass their own, and the request latencies are the
// monotonic readings of the clock a run was given.
package clock

import "time"

// Func reads a clock: the wall time with the runtime's monotonic reading.
type Func func() time.Time

// System is the runtime's clock.
func System() time.Time { return time.Now() }

// Or is f, or System when f is nil.
func Or(f Func) Func {
	if f == nil {
		return System
	}
	return f
}
