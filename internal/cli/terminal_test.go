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

// tmux runs this test binary as strata in a detached tmux session of the
// given width (its own server socket), and returns every screen captured
// while the run was going and the last one.
func tmuxRun(t *testing.T, width int, term string) (during []string, last string) {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed; .ci/run installs it (apt-get install tmux)")
		}
		t.Skip("tmux is not installed")
	}
	exe, _ := os.Executable()
	work := t.TempDir()
	sock := fmt.Sprintf("strata-test-%d-%d-%s", os.Getpid(), width, term)
	script := filepath.Join(work, "run.sh")
	// The simulator runs 4× real time: long enough to see the status line.
	mustWrite(t, script, fmt.Sprintf("#!/bin/sh\ncd %q\nexport STRATA_TEST_AS_CLI=1 STRATA_TEST_SPEED=4 XDG_CACHE_HOME=%q TERM=%s\n%q bench run --simulate\necho EXIT=$?\nsleep 600\n",
		work, t.TempDir(), term, exe))
	tm := func(args ...string) string {
		out, err := exec.Command(bin, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(width), "-y", "80", "sh "+script)
	t.Cleanup(func() { exec.Command(bin, "-L", sock, "kill-server").Run() })
	tm("set-option", "-g", "history-limit", "5000")
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		screen := tm("capture-pane", "-p", "-S", "-", "-E", "-")
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
	t.Fatalf("width %d: the run did not finish; screen:\n%s", width, tm("capture-pane", "-p"))
	return nil, ""
}

// TestLiveLineInTmux: at 80 and 50 columns the status line never wraps
// and shows the overall position and the time left.
func TestLiveLineInTmux(t *testing.T) {
	t.Parallel()
	// Position (a range while a round is in flight), stage, then the time
	// left: "~" an estimate, "≤" a bound from caps; shortened when narrow.
	status := regexp.MustCompile(`(?m)^\d+(–\d+)?/22 \w+ · ((~|≤ )[0-9hm s]+?( left)?|(time left: )?measuring) ·`)
	for _, width := range []int{80, 50} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			during, last := tmuxRun(t, width, "xterm-256color")
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
		during, last := tmuxRun(t, 80, "dumb")
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
