//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/simengine"
)

// tmuxServer is one tmux server (its own socket) for the terminal tests of
// a test: each subtest runs in a session of its own on it.
type tmuxServer struct {
	bin, sock string
}

// newTmux starts the server; it is killed when the test and its subtests
// are done.
func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; .ci/run installs it (apt-get install tmux)")
		}
		t.Skip("tmux is not installed")
	}
	s := &tmuxServer{bin: bin, sock: fmt.Sprintf("strata-test-%d", os.Getpid())}
	// A first session keeps the server up; the history limit applies to
	// the sessions made after it.
	s.tm(t, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep 600")
	// Best effort: a server that already ended has nothing to kill.
	t.Cleanup(func() { _ = exec.Command(bin, "-L", s.sock, "kill-server").Run() })
	s.tm(t, "set-option", "-g", "history-limit", "5000")
	return s
}

func (s *tmuxServer) tm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(s.bin, append([]string{"-L", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs this test binary as strata (`bench run --simulate`, the
// simulator speed times real time) in a detached session of the given width
// and TERM, and returns the session's name once the program has started.
// The script waits for a line on its terminal first, so that raw, when
// set, names the file that gets every byte the program writes (tmux
// pipe-pane) from its first.
func (s *tmuxServer) start(t *testing.T, width int, term string, speed int, raw string) string {
	t.Helper()
	exe, _ := os.Executable()
	work := t.TempDir()
	name := fmt.Sprintf("w%d-%s", width, term)
	script := filepath.Join(work, "run.sh")
	mustWrite(t, script, fmt.Sprintf("#!/bin/sh\nread go\ncd %q\nexport STRATA_TEST_AS_CLI=1 STRATA_TEST_SPEED=%d XDG_CACHE_HOME=%q TERM=%s\n%q bench run --simulate\necho EXIT=$?\nsleep 600\n",
		work, speed, t.TempDir(), term, exe))
	s.tm(t, "new-session", "-d", "-s", name, "-x", fmt.Sprint(width), "-y", "80", "sh "+script)
	// Best effort: a session that already ended has nothing to kill.
	t.Cleanup(func() { _ = exec.Command(s.bin, "-L", s.sock, "kill-session", "-t", name).Run() })
	if raw != "" {
		s.tm(t, "pipe-pane", "-o", "-t", name, "cat >> "+raw)
	}
	s.tm(t, "send-keys", "-t", name, "Enter")
	return name
}

// watch captures the session's whole screen (history included) until the
// run has printed EXIT=; each capture taken while the run's own lines
// were still coming is handed to during, and the last one is returned.
func (s *tmuxServer) watch(t *testing.T, name string, during func(screen string)) (last string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		screen := s.tm(t, "capture-pane", "-p", "-t", name, "-S", "-", "-E", "-")
		if strings.Contains(screen, "EXIT=") {
			return screen
		}
		// The run's own lines, up to its end: the result's path after it is
		// data, and may wrap. (A wrapped row fills the width, which the
		// callers check row by row on this one capture.)
		if !strings.Contains(screen, "run finished") && during != nil {
			during(screen)
		}
		time.Sleep(100 * time.Millisecond) // a real terminal, polled
	}
	t.Fatalf("%s: the run did not finish; screen:\n%s", name, s.tm(t, "capture-pane", "-p", "-t", name))
	return ""
}

// liveStatus is the status line: position (a range while a round is in
// flight), stage, then the time left: "~" the expected time, the worst
// case beside it when there is room; shortened when narrow.
var liveStatus = regexp.MustCompile(`(?m)^\d+(–\d+)?/22 \w+ · (~[0-9hm s]+?( left)?(, up to [0-9hm s]+?)?|(time left: )?measuring) ·`)

// TestLiveLineInTmux: at 50 columns, and at 80 after the terminal is
// widened mid-run (strata reads the width at every line it draws), the
// status line never wraps and shows the overall position and the time
// left; none is left behind at the end. With TERM=dumb the run writes
// plain lines only: not one byte of cursor movement or erasing reaches
// the terminal.
func TestLiveLineInTmux(t *testing.T) {
	t.Parallel()
	tmux := newTmux(t)
	t.Run("50 then 80", func(t *testing.T) {
		t.Parallel()
		// The simulator runs 10× real time: slow enough for the captures to
		// see the status line many times before the run ends.
		name := tmux.start(t, 50, "xterm-256color", 10, "")
		width := 50
		screens, seen, withLeft := map[int]int{}, map[int]int{}, map[int]int{}
		last := tmux.watch(t, name, func(screen string) {
			screens[width]++
			for _, row := range strings.Split(screen, "\n") {
				if len([]rune(row)) >= width {
					t.Errorf("width %d: a row fills the width (wrapped or about to): %q", width, row)
				}
			}
			if m := liveStatus.FindString(screen); m != "" {
				seen[width]++
				if strings.Contains(m, "~") {
					withLeft[width]++
				}
			}
			// Four screens at 50 columns with the time left, the rest of
			// the run's at 80.
			if width == 50 && withLeft[50] == 4 {
				tmux.tm(t, "resize-window", "-t", name, "-x", "80")
				width = 80
			}
		})
		if !strings.Contains(last, "EXIT=0") {
			t.Fatalf("the run failed:\n%s", last)
		}
		for _, w := range []int{50, 80} {
			t.Logf("width %d: %d screens captured during the run, %d with the status line, %d of them with the time left", w, screens[w], seen[w], withLeft[w])
			if seen[w] == 0 || withLeft[w] == 0 {
				t.Errorf("width %d: no status line with position and time left in %d screens", w, screens[w])
			}
		}
		if n := len(liveStatus.FindAllString(last, -1)); n > 1 {
			t.Errorf("%d stale status lines left on screen:\n%s", n, last)
		}
	})
	t.Run("dumb", func(t *testing.T) {
		t.Parallel()
		// Every byte is kept, so the run needs no time for captures to see
		// it: the tests' usual speed.
		raw := filepath.Join(t.TempDir(), "raw")
		last := tmux.watch(t, tmux.start(t, 80, "dumb", testSpeed, raw), nil)
		// The pipe's reader may still be writing what the screen shows.
		var out []byte
		for deadline := time.Now().Add(10 * time.Second); !bytes.Contains(out, []byte("EXIT=")); {
			if time.Now().After(deadline) {
				t.Fatalf("the raw output has no EXIT= line:\n%q", out)
			}
			time.Sleep(10 * time.Millisecond)
			out, _ = os.ReadFile(raw)
		}
		// The terminal turns each newline into CR LF; any other CR or an
		// escape sequence would be drawing.
		if text := strings.ReplaceAll(string(out), "\r\n", "\n"); strings.ContainsAny(text, "\r\x1b") || liveStatus.MatchString(text) {
			t.Errorf("TERM=dumb: the run drew on the terminal:\n%q", text)
		}
		if !strings.Contains(last, "[22/22] sanity-T4: completed") || !strings.Contains(string(out), "[22/22] sanity-T4: completed") {
			t.Errorf("TERM=dumb: no plain per-request lines:\n%s", last)
		}
	})
}

// TestPlainLinesInAPipe: without a terminal, one plain line per request
// and no escape sequence.
func TestPlainLinesInAPipe(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), "", "bench", "run", "--simulate")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if bytes.ContainsAny([]byte(r.stderr), "\r\x1b") {
		t.Errorf("escape sequences in piped output:\n%q", r.stderr)
	}
	for i := 1; i <= 22; i++ {
		if !strings.Contains(r.stderr, fmt.Sprintf("  [%d/22] ", i)) {
			t.Errorf("no line for request %d/22:\n%s", i, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, " left)") {
		t.Errorf("no time left in the plain lines:\n%s", r.stderr)
	}
}

// TestRemoteWarningFirst: a server off loopback is named before anything
// is sent (0.0.0.0 is not loopback, and connecting to it stays on this
// machine).
func TestRemoteWarningFirst(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), "", "bench", "run", "--url", "http://0.0.0.0:1")
	w := strings.Index(r.stderr, "warning: the run will be nonconforming: the server (0.0.0.0) is not on loopback")
	if r.code == 0 || w < 0 || w > strings.Index(r.stderr, "does not answer") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestWarningsWhenTheyHappen: a request whose user payload came from the
// cache, and one whose settings the server resolved otherwise, are named
// on stderr as they end, before the run's end.
func TestWarningsWhenTheyHappen(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	cached, temp := 900, json.RawMessage(`0.5`)
	cfg := simengine.DefaultConfig()
	cfg.PromptTPS, cfg.DecodeTPS, cfg.ReasoningTokens, cfg.Bundle = 5e6, 2e5, 20, b
	cfg.Scenario = &simengine.Scenario{Requests: map[string]simengine.Behaviour{
		"performance-prompt-4k-r2": {CachedTokens: &cached},
		"sanity-I1":                {SlotParams: map[string]json.RawMessage{"temperature": temp}},
	}}
	tmpl, _, err := prompts.Template(b)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Template = string(tmpl)
	sim := simengine.New(cfg)
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sim.Close() }() // the run is over; what it saw is checked below
	r := runIn(t, t.TempDir(), "", "bench", "run", "--url", url)
	reuse := strings.Index(r.stderr, "warning: the run will be nonconforming: performance-prompt-4k-r2: unexpected cache reuse")
	setting := strings.Index(r.stderr, "warning: the run will be nonconforming: the server resolved temperature")
	next := strings.Index(r.stderr, "[12/22] sanity-I2")
	if reuse < 0 || setting < 0 || next < 0 || reuse > strings.Index(r.stderr, "[7/22]") || setting > next {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
