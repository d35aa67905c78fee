package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-bench/strata/internal/quantity"
)

// Process is an engine the runner started.
type Process struct {
	cmd    *exec.Cmd
	log    *logBuffer
	exited chan struct{}
	err    error // set before exited closes
}

// logBuffer keeps the engine's output (stdout and stderr interleaved) in
// memory, bounded, for the engine log artifact and for the tail shown when
// loading fails.
type logBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len()+len(p) > l.limit {
		// Keep the head (startup: configuration) and drop the middle.
		l.cut = true
		return len(p), nil
	}
	return l.buf.Write(p)
}

func (l *logBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := append([]byte(nil), l.buf.Bytes()...)
	if l.cut {
		b = append(b, []byte("\n[strata: the engine log was cut at 32 MiB]\n")...)
	}
	return b
}

// Tail returns the last n lines of the log.
func (p *Process) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(string(p.log.bytes()), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Log returns the captured output.
func (p *Process) Log() []byte { return p.log.bytes() }

// Group is the engine's process group (its own PID, as it leads it).
func (p *Process) Group() int { return p.cmd.Process.Pid }

// Start starts the profile's command in its own process group with its
// output captured. Wait runs in a goroutine, so an engine that exits during
// load is noticed at once.
func Start(p *Profile, environ []string) (*Process, error) {
	if len(p.Command) == 0 {
		return nil, fmt.Errorf("profile %s has no command to start an engine with", p.Name)
	}
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Dir = p.Workdir
	cmd.Env = environ
	for k, v := range p.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = sysProcAttr()
	log := &logBuffer{limit: 32 << 20}
	cmd.Stdout, cmd.Stderr = log, log
	proc := &Process{cmd: cmd, log: log, exited: make(chan struct{})}
	// On Linux the engine gets SIGKILL when the thread that started it
	// exits (the parent-death signal), so it never outlives a runner that
	// is killed. That thread must live as long as the engine: this
	// goroutine locks it, starts the engine and waits on it there.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		proc.err = cmd.Wait()
		close(proc.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start the engine (%s): %w", p.Command[0], err)
	}
	return proc, nil
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Health is what WaitReady polls: the status of GET /health, or an error
// when nothing answered.
type Health func(ctx context.Context) (int, error)

// ErrLoadTimeout is returned when the engine did not load in time.
var ErrLoadTimeout = errors.New("the engine did not finish loading in time")

// WaitReady polls health until it answers 200 (the model is loaded), the
// process exits, the timeout passes or ctx ends. status hears the state at
// every poll ("loading (/health answers 503)") with the time since the
// start, so a caller can count up against the timeout.
func (p *Process) WaitReady(ctx context.Context, health Health, timeout time.Duration, status func(state string, elapsed time.Duration)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for {
		code, err := health(ctx)
		if err == nil && code == 200 {
			return nil
		}
		state := "waiting for the server to answer"
		if err == nil {
			state = fmt.Sprintf("loading (/health answers %d)", code)
		}
		if status != nil {
			status(state, time.Since(start))
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the engine exited during load (%v); last lines of its log:\n%s", p.err, p.Tail(20))
		case <-deadline.C:
			return fmt.Errorf("%w (%s); last lines of its log:\n%s", ErrLoadTimeout, timeout, p.Tail(20))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop ends the engine: SIGTERM to its process group, then SIGKILL after
// grace, or at once when now is closed (a second signal: the user wants
// out). It waits for the process to exit.
func (p *Process) Stop(grace time.Duration, now <-chan struct{}) error {
	if p.Exited() {
		return nil
	}
	_ = signalGroup(p.cmd, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	case <-now:
	}
	_ = signalGroup(p.cmd, syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("the engine (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// ServedBefore is what an already-serving engine says of its past work.
type ServedBefore struct {
	// Answered is the number of requests answered before the run, or nil
	// when the engine does not say (Reason says why).
	Answered *int64             `json:"requests_answered,omitempty"`
	Reason   string             `json:"reason,omitempty"`
	Evidence map[string]float64 `json:"metrics"`
}

// Summary says in a few words what the engine had done before the run.
func (s ServedBefore) Summary() string {
	switch {
	case s.Answered != nil && *s.Answered == 0:
		return "it had answered no request before this run"
	case s.Answered != nil:
		return fmt.Sprintf("not freshly loaded: it had answered %s before this run", quantity.Count(int(*s.Answered), "request", "requests"))
	}
	return s.Reason
}

// CountServed reads an already-serving engine's /metrics (or /slots) for
// how many requests it answered. llama.cpp counts tokens, not requests, so
// the count is exact only when nothing was processed yet.
func CountServed(metrics []byte, metricsErr error, slots []byte) ServedBefore {
	ev := map[string]float64{}
	if metricsErr == nil {
		sc := bufio.NewScanner(bytes.NewReader(metrics))
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "#") {
				continue
			}
			var name string
			var v float64
			if _, err := fmt.Sscanf(line, "%s %g", &name, &v); err == nil {
				ev[name] = v
			}
		}
	}
	for _, k := range []string{"strata_simulator:requests_total", "requests_total"} {
		if v, ok := ev[k]; ok {
			n := int64(v)
			return ServedBefore{Answered: &n, Evidence: ev}
		}
	}
	pt, okP := ev["llamacpp:prompt_tokens_total"]
	gt, okG := ev["llamacpp:tokens_predicted_total"]
	busySlot := bytes.Contains(slots, []byte(`"id_task"`))
	switch {
	case okP && okG && pt == 0 && gt == 0 && !busySlot:
		zero := int64(0)
		return ServedBefore{Answered: &zero, Evidence: ev}
	case okP || okG:
		return ServedBefore{Reason: fmt.Sprintf("llama.cpp's /metrics counts tokens, not requests: it had processed %.0f prompt tokens and predicted %.0f tokens before this run, so it had answered at least one request", pt, gt), Evidence: ev}
	case busySlot:
		return ServedBefore{Reason: "/slots shows a finished task, so the engine had answered at least one request; it does not say how many", Evidence: ev}
	case metricsErr != nil:
		return ServedBefore{Reason: "the engine's /metrics did not answer (" + metricsErr.Error() + ") and /slots shows no task", Evidence: ev}
	}
	return ServedBefore{Reason: "the engine's /metrics has no request or token counters", Evidence: ev}
}
