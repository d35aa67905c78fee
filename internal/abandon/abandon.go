// Package abandon waits for work that cannot watch a context itself (a
// library's parser or regex match, a JSON decoder) and stops waiting when
// the context ends: the first SIGINT or SIGTERM ends a command at once,
// whatever it was doing. The work runs on in its goroutine until it
// returns, and its result is dropped; a command that stops waiting is
// about to end the process, and a long-lived caller bounds the work
// itself (chattemplate's render checks its context between loop turns).
package abandon

import "context"

// Do runs fn in a goroutine of its own and returns its result, or
// context.Cause(ctx) as soon as ctx ends first.
func Do[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, context.Cause(ctx)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // the goroutine never blocks on an abandoned send
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}
