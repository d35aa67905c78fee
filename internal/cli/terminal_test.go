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
	t.Cleanup(func() { exec.Command(bin, "-L", s.sock, "kill-server").Run() })
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

// run runs this test binary as strata in a detached session of the given
// width and TERM, and returns every screen captured while the run was
// going and the last one.
func (s *tmuxServer) run(t *testing.T, width int, term string) (during []string, last string) {
	t.Helper()
	exe, _ := os.Executable()
	work := t.TempDir()
	name := fmt.Sprintf("w%d-%s", width, term)
	script := filepath.Join(work, "run.sh")
	// The simulator runs 10× real time: the run takes about 2 s, some 20
	// captures, three in four of them with the status line.
	mustWrite(t, script, fmt.Sprintf("#!/bin/sh\ncd %q\nexport STRATA_TEST_AS_CLI=1 STRATA_TEST_SPEED=10 XDG_CACHE_HOME=%q TERM=%s\n%q bench run --simulate\necho EXIT=$?\nsleep 600\n",
		work, t.TempDir(), term, exe))
	s.tm(t, "new-session", "-d", "-s", name, "-x", fmt.Sprint(width), "-y", "80", "sh "+script)
	t.Cleanup(func() { exec.Command(s.bin, "-L", s.sock, "kill-session", "-t", name).Run() })
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		screen := s.tm(t, "capture-pane", "-p", "-t", name, "-S", "-", "-E", "-")
		if strings.Contains(screen, "EXIT=") {
			return during, screen
		}
		// The run's own lines, up to its end: the result's path after it is
		// data, and may wrap. (A wrapped row fills the width, which the
		// callers check row by row on this one capture.)
		if !strings.Contains(screen, "run finished") {
			during = append(during, screen)
		}
		time.Sleep(100 * time.Millisecond) // a real terminal, polled
	}
	t.Fatalf("width %d: the run did not finish; screen:\n%s", width, s.tm(t, "capture-pane", "-p", "-t", name))
	return nil, ""
}

// TestLiveLineInTmux: at 80 and 50 columns the status line never wraps
// and shows the overall position and the time left.
func TestLiveLineInTmux(t *testing.T) {
	t.Parallel()
	// Position (a range while a round is in flight), stage, then the time
	// left: "~" an estimate, "≤" a bound from caps; shortened when narrow.
	status := regexp.MustCompile(`(?m)^\d+(–\d+)?/22 \w+ · ((~|≤ )[0-9hm s]+?( left)?|(time left: )?measuring) ·`)
	tmux := newTmux(t)
	for _, width := range []int{80, 50} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			during, last := tmux.run(t, width, "xterm-256color")
			if !strings.Contains(last, "EXIT=0") {
				t.Fatalf("the run failed:\n%s", last)
			}
			seen, withLeft := 0, 0
			for _, s := range during {
				for _, row := range strings.Split(s, "\n") {
					if len([]rune(row)) >= width {
						t.Errorf("width %d: a row fills the width (wrapped or about to): %q", width, row)
					}
				}
				if m := status.FindString(s); m != "" {
					seen++
					if strings.ContainsAny(m, "~≤") {
						withLeft++
					}
				}
			}
			t.Logf("width %d: %d screens captured during the run, %d with the status line, %d of them with the time left", width, len(during), seen, withLeft)
			if seen == 0 || withLeft == 0 {
				t.Errorf("width %d: no status line with position and time left in %d screens; last during:\n%s", width, len(during), during[len(during)-1])
			}
			if n := len(status.FindAllString(last, -1)); n > 1 {
				t.Errorf("width %d: %d stale status lines left on screen:\n%s", width, n, last)
			}
		})
	}
	t.Run("dumb", func(t *testing.T) {
		t.Parallel()
		during, last := tmux.run(t, 80, "dumb")
		for _, s := range append(during, last) {
			if status.MatchString(s) {
				t.Fatalf("TERM=dumb got a status line:\n%s", s)
			}
		}
		if !strings.Contains(last, "[22/22] sanity-T4: completed") {
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
	defer sim.Close()
	r := runIn(t, t.TempDir(), "", "bench", "run", "--url", url)
	reuse := strings.Index(r.stderr, "warning: the run will be nonconforming: performance-prompt-4k-r2: unexpected cache reuse")
	setting := strings.Index(r.stderr, "warning: the run will be nonconforming: the server resolved temperature")
	next := strings.Index(r.stderr, "[12/22] sanity-I2")
	if reuse < 0 || setting < 0 || next < 0 || reuse > strings.Index(r.stderr, "[7/22]") || setting > next {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
