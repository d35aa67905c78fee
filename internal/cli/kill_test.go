//go:build linux

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-bench/strata/internal/exitcode"
)

// strataProcess starts this test binary as strata (`bench run --simulate`)
// in work and returns it once the first performance request has finished,
// with the simulator's port.
func strataProcess(t *testing.T, work string) (*exec.Cmd, int, <-chan struct{}) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "bench", "run", "--simulate")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "STRATA_TEST_AS_CLI=1", "XDG_CACHE_HOME="+t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The process may have ended, and been waited for, by then.
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	portRE := regexp.MustCompile(`engine simulate --port (\d+)`)
	port := 0
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			if m := portRE.FindStringSubmatch(sc.Text()); m != nil {
				port, _ = strconv.Atoi(m[1]) // digits, as matched
			}
			if !signalled && strings.Contains(sc.Text(), "performance-short-r1:") {
				signalled = true
				close(ready)
			}
		}
		// Drained so that the process never blocks on a full pipe; how
		// it ends is the test's to check.
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not reach its first performance request")
	}
	return cmd, port, done
}

// engineOf is the simulator serving port (found by its command line),
// held by a pidfd, so that its exit can be waited for whoever its parent
// is by then.
func engineOf(t *testing.T, port int) int {
	t.Helper()
	needle := fmt.Sprintf("engine\x00simulate\x00--port\x00%d\x00", port)
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), needle) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				t.Fatalf("pidfd of the simulator (pid %d): %v", pid, err)
			}
			t.Cleanup(func() {
				if err := unix.Close(fd); err != nil {
					t.Error(err)
				}
			})
			return fd
		}
	}
	t.Fatalf("no process runs the simulator on port %d", port)
	return -1
}

// engineGone waits for the engine held by pidfd to exit (its pidfd turns
// readable), then checks that nothing serves its port. The minute is a
// guard against a hang, not an expected time: the engine ends when its
// runner does.
func engineGone(t *testing.T, pidfd, port int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(time.Minute.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("the simulator still runs a minute after its runner ended")
		}
		break
	}
	if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		_ = c.Close() // the answer was the finding
		t.Error("the simulator's port still answers after it exited")
	}
}

// TestSIGKILLThenRecover: a runner killed with SIGKILL mid-run takes its
// engine with it (the parent-death signal), and `bench recover` in the same
// folder writes a partial result that report accepts, with the log the
// engine wrote into the pending folder up to the kill.
func TestSIGKILLThenRecover(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	cmd, port, _ := strataProcess(t, work)
	engine := engineOf(t, port)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // "signal: killed", as sent
	engineGone(t, engine, port)
	pending, _ := filepath.Glob(filepath.Join(work, "bench-results", ".*.pending"))
	if len(pending) != 1 {
		t.Fatalf("pending folders %v", pending)
	}
	if log, err := os.ReadFile(filepath.Join(pending[0], "engine.log")); err != nil || !strings.Contains(string(log), "simulated engine listening on") {
		t.Errorf("the pending folder's engine log: %v\n%s", err, log)
	}
	// A new run says there is something to recover.
	r := runIn(t, work, "", "bench", "run", "--url", "http://127.0.0.1:9")
	if !strings.Contains(r.stderr, "holds the journal of a run that did not finish") {
		t.Errorf("bench run did not mention the journal: %s", r.stderr)
	}
	r = runIn(t, work, "", "bench", "recover")
	if r.code != 0 || !strings.Contains(r.stdout, "recovered: ") {
		t.Fatalf("recover: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res, dir := readResults(t, work)
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Fatalf("report of the recovered folder: %s", rep.stdout)
	}
	log, err := os.ReadFile(filepath.Join(dir, "engine.log"))
	if e := res.Extensions.Engine; err != nil || !strings.Contains(string(log), "simulated engine listening on") || e == nil || e.Log == nil ||
		!strings.Contains(res.Extensions.Recovered.Note, "what the engine wrote into the pending folder up to the kill") {
		t.Errorf("the recovered engine log: %v, extensions.engine %+v, recovered %+v\n%s", err, res.Extensions.Engine, res.Extensions.Recovered, log)
	}
	left, _ := filepath.Glob(filepath.Join(work, "bench-results", ".*"))
	if stray, _ := filepath.Glob(filepath.Join(work, ".strata-engine-*")); len(left)+len(stray) > 0 {
		left = append(left, stray...)
		t.Errorf("left in the result location after recover: %v", left)
	}
	failed, skipped, done := 0, 0, 0
	for _, q := range res.Requests {
		switch q.Status {
		case "failed":
			failed++
		case "skipped":
			skipped++
		default:
			done++
		}
	}
	if done < 1 || skipped == 0 || failed > 1 {
		t.Errorf("%d finished, %d failed, %d skipped", done, failed, skipped)
	}
	if r := runIn(t, work, "", "bench", "recover"); r.code != 0 || !strings.Contains(r.stdout, "nothing to recover") {
		t.Errorf("second recover: %s", r.stdout)
	}
}

// TestSIGHUPWritesTheResult: a dropped SSH session (SIGHUP) ends the run
// the way Ctrl-C does: a partial folder that report accepts, the engine
// stopped, the interrupted exit code.
func TestSIGHUPWritesTheResult(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	cmd, port, done := strataProcess(t, work)
	engine := engineOf(t, port)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-done
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitcode.Interrupted {
		t.Fatalf("exit: %v", err)
	}
	engineGone(t, engine, port)
	_, dir := readResults(t, work)
	rep := runIn(t, work, "", "bench", "report", dir)
	if rep.code != 0 || !strings.Contains(rep.stdout, "SIGHUP") {
		t.Fatalf("report: exit %d\n%s", rep.code, rep.stdout)
	}
}
