package abandon

import (
	"context"
	"errors"
	"testing"
)

// TestDo: the work's result when it ends first; the context's cause at
// once when the context ends first, with the work still blocked.
func TestDo(t *testing.T) {
	t.Parallel()
	got, err := Do(context.Background(), func() (int, error) { return 7, nil })
	if got != 7 || err != nil {
		t.Fatalf("got %d, %v; want 7, nil", got, err)
	}
	stop := errors.New("SIGTERM")
	ctx, cancel := context.WithCancelCause(context.Background())
	block := make(chan struct{})
	defer close(block)
	started := make(chan struct{})
	go func() { <-started; cancel(stop) }()
	_, err = Do(ctx, func() (int, error) { close(started); <-block; return 1, nil })
	if !errors.Is(err, stop) {
		t.Fatalf("got %v, want the context's cause", err)
	}
	ran := false
	if _, err := Do(ctx, func() (int, error) { ran = true; return 0, nil }); !errors.Is(err, stop) || ran {
		t.Fatalf("an ended context: got %v, ran %v; want its cause without running", err, ran)
	}
}
