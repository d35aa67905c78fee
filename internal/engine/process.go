package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/contract"
)

// Child is an engine the runner started.
type Child struct {
	cmd *exec.Cmd
	// log is the file the engine writes its output to (stdout and stderr
	// interleaved) itself: what it wrote before a kill of the runner is
	// there for the journal's recovery, and nothing of it passes through
	// the runner's memory.
	log    *os.File
	exited chan struct{}
	err    error // set before exited closes
	now    clock.Func
	// after is the engine's timer (nil: time.After): the load timeout and
	// the grace before SIGKILL wait on it.
	after func(time.Duration) <-chan time.Time
}

// tailBytes is how much of the log's end Tail reads for its lines.
const tailBytes = 64 << 10

// Tail returns the last n lines of the log.
func (p *Child) Tail(n int) string {
	st, err := p.log.Stat()
	if err != nil {
		return "(the engine's log cannot be read: " + err.Error() + ")"
	}
	from := max(st.Size()-tailBytes, 0)
	b := make([]byte, st.Size()-from)
	k, _ := p.log.ReadAt(b, from) // a short read shows what was read
	lines := strings.Split(strings.TrimRight(string(b[:k]), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Log returns the captured output: its head, at most
// contract.MaxEngineLogBytes.
func (p *Child) Log() ([]byte, error) { return readLog(p.log) }

// Group is the engine's process group (its own PID, as it leads it).
func (p *Child) Group() int { return p.cmd.Process.Pid }

// Start starts the profile's command in its own process group with its
// output going to log. Wait runs in a goroutine, so an engine that exits
// during load is noticed at once.
func Start(p *Profile, environ []string, now clock.Func, log *os.File) (*Child, error) {
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
	cmd.Stdout, cmd.Stderr = log, log
	proc := &Child{cmd: cmd, log: log, exited: make(chan struct{}), now: clock.Or(now)}
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

// timer fires once d has passed on the engine's timer.
func (p *Child) timer(d time.Duration) <-chan time.Time {
	if p.after == nil {
		return time.After(d)
	}
	return p.after(d)
}

// Exited reports whether the process has ended.
func (p *Child) Exited() bool {
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

// errCleanExit is an engine's exit with status 0, which exec reports as
// no error: during a load it is as much a failure as any other exit.
var errCleanExit = errors.New("exit status 0")

// ErrLoadTimeout is returned when the engine did not load in time.
var ErrLoadTimeout = errors.New("the engine did not finish loading in time")

// WaitReady polls health until it answers 200 (the model is loaded), the
// process exits, the timeout passes or ctx ends. status hears the state at
// every poll ("loading (/health answers 503)") with the time since the
// start, so a caller can count up against the timeout.
func (p *Child) WaitReady(ctx context.Context, health Health, timeout time.Duration, status func(state string, elapsed time.Duration)) error {
	deadline := p.timer(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	start := p.now()
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
			status(state, p.now().Sub(start))
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the engine exited during load (%w); last lines of its log:\n%s", cmp.Or(p.err, errCleanExit), p.Tail(20))
		case <-deadline:
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
func (p *Child) Stop(grace time.Duration, now <-chan struct{}) error {
	if p.Exited() {
		return nil
	}
	_ = signalGroup(p.cmd, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-p.timer(grace):
	case <-now:
	}
	_ = signalGroup(p.cmd, syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-p.timer(5 * time.Second):
		return fmt.Errorf("the engine (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// maxIgnored is how many ignored samples are named; the rest are counted.
const maxIgnored = 16

// Counter names of the engines' /metrics.
const (
	promptTokensTotal    = "llamacpp:prompt_tokens_total"
	tokensPredictedTotal = "llamacpp:tokens_predicted_total"
)

// CountServed reads an already-serving engine's /metrics (or /slots) for
// how many requests it answered. llama.cpp counts tokens, not requests, so
// the count is exact only when nothing was processed yet: a request is
// answered only after at least one prompt token is processed (a prompt
// found whole in the cache still evaluates its last token).
func CountServed(metrics []byte, metricsErr error, slots []byte) contract.ServedBefore {
	sb := contract.ServedBefore{Evidence: map[string]float64{}}
	if metricsErr == nil {
		sb.Evidence, sb.Ignored = readMetrics(metrics)
	}
	ev := sb.Evidence
	for _, k := range []string{"strata_simulator:requests_total", "requests_total"} {
		if v, ok := ev[k]; ok {
			if n, ok := asCount(v); ok {
				sb.Answered = &n
			} else {
				sb.Reason = fmt.Sprintf("the engine's /metrics %s (%g) is not a count (a nonnegative integer within int64), so how many requests it had answered is unknown", k, v)
			}
			return sb
		}
	}
	for _, k := range []string{promptTokensTotal, tokensPredictedTotal} {
		if v, ok := ev[k]; ok {
			if _, ok := asCount(v); !ok {
				sb.Reason = fmt.Sprintf("llama.cpp's /metrics %s (%g) is not a count (a nonnegative integer within int64), so whether it had answered a request is unknown", k, v)
				return sb
			}
		}
	}
	pt, okP := ev[promptTokensTotal]
	gt, okG := ev[tokensPredictedTotal]
	busySlot := bytes.Contains(slots, []byte(`"id_task"`))
	switch {
	case pt > 0 || gt > 0:
		var work []string
		if okP {
			work = append(work, fmt.Sprintf("processed %.0f prompt tokens", pt))
		}
		if okG {
			work = append(work, fmt.Sprintf("predicted %.0f tokens", gt))
		}
		sb.Reason = contract.NotFreshlyLoaded + ": llama.cpp's /metrics counts tokens, not requests: it had " + strings.Join(work, " and ") + " before this run, so it had answered at least one request; how many, it does not say"
	case busySlot:
		sb.Reason = contract.NotFreshlyLoaded + ": /slots shows a finished task, so the engine had answered at least one request; it does not say how many"
	case okP:
		zero := int64(0)
		sb.Answered = &zero
	case okG:
		sb.Reason = "llama.cpp's /metrics shows 0 predicted tokens but no " + promptTokensTotal + ", and a request can end before it predicts a token, so whether it had answered one is unknown"
	case metricsErr != nil:
		sb.Reason = "the engine's /metrics did not answer (" + metricsErr.Error() + ") and /slots shows no task"
	default:
		sb.Reason = "the engine's /metrics has no request or token counters"
	}
	return sb
}

// readMetrics reads the samples of a Prometheus text exposition ("name
// value", the name with its labels). A value that is not a finite number
// is left out with a reason: the evidence is written as JSON, which has no
// NaN or infinity, and it says nothing about past work.
func readMetrics(metrics []byte) (map[string]float64, []string) {
	ev := map[string]float64{}
	var ignored []string
	skipped := 0
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
		case math.IsNaN(v) || math.IsInf(v, 0):
			if len(ignored) < maxIgnored {
				ignored = append(ignored, fmt.Sprintf("%s %s: not a finite number", f[0], f[1]))
			} else {
				skipped++
			}
		default:
			ev[f[0]] = v
		}
	}
	if skipped > 0 {
		ignored = append(ignored, fmt.Sprintf("%d more samples that are not finite numbers", skipped))
	}
	return ev, ignored
}

// asCount is v as a count: a nonnegative integer that int64 holds.
func asCount(v float64) (int64, bool) {
	if v < 0 || v != math.Trunc(v) || v >= math.Exp2(63) {
		return 0, false
	}
	return int64(v), true
}
