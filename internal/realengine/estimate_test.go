//go:build linux

package realengine

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/cli"
)

// stamped keeps each write to a stream with the time it was made: the
// status line is drawn in one write, and every permanent line in one.
type stamped struct {
	mu     sync.Mutex
	now    func() time.Time
	writes []stampedWrite
	all    bytes.Buffer
}

type stampedWrite struct {
	at   time.Time
	text string
}

func (w *stamped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, stampedWrite{w.now(), string(p)})
	w.all.Write(p)
	return len(p), nil
}

var (
	// leftFigure is the time left a line shows ("~1m30s left"; the bound
	// an earlier strata showed, "≤ 2h44m left", is read alike).
	leftFigure = regexp.MustCompile(`(?:~|≤ )(\d+ s|\d+m\d\ds|\d+h\d\dm) left`)
	// position is the request a line is about: a status line's "5/22" (or
	// a round's "23–26/34") or a finished request's "[5/22]".
	position = regexp.MustCompile(`^\r\x1b\[K(?:\d+–)?(\d+)/\d+ |^  \[(\d+)/\d+\] `)
)

// clockSeconds reads the figure's forms ("42 s", "3m05s", "1h02m").
func clockSeconds(s string) float64 {
	if n, ok := strings.CutSuffix(s, " s"); ok {
		v, _ := strconv.Atoi(n)
		return float64(v)
	}
	var a, b int
	if strings.HasSuffix(s, "s") {
		_, _ = fmt.Sscanf(s, "%dm%ds", &a, &b)
		return float64(a*60 + b)
	}
	_, _ = fmt.Sscanf(s, "%dh%dm", &a, &b)
	return float64(a*3600 + b*60)
}

// TestEstimateHolds: a run against the thinker, on a terminal (the status
// line, redrawn as the run goes, with the optional stage) and into a pipe
// (a line per finished request): from the fifth request on, every time
// left it shows, E, and the time the run really had left then, R (to its
// "run finished" line, on the run's clock), satisfy
// R/2 − 15 s ≤ E ≤ 2R + 15 s.
//
// The runs go one after the other and beside no other test of the package
// (the test is not parallel): an estimate follows the engine's pace, and
// engines started beside it on the same cores would change that pace
// mid-run, from outside, as no estimate can foresee.
func TestEstimateHolds(t *testing.T) {
	for _, c := range []struct {
		name string
		tty  bool
		args []string
	}{
		{"terminal", true, []string{"--optional-concurrency"}},
		{"pipe", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := Start(t, Options{Model: Thinker})
			env := cliEnv(t, repoRoot(), nil)
			env.Now = time.Now
			env.TTY, env.Width = c.tty, func() int { return 200 }
			errw := &stamped{now: env.Now}
			var out bytes.Buffer
			env.Stdout, env.Stderr = &out, errw
			args := append([]string{"bench", "run", "--url", srv.URL, "--results-dir", t.TempDir()}, c.args...)
			if code := cli.Run(context.Background(), args, env); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errw.all.String())
			}
			checkEstimates(t, errw.writes)
		})
	}
}

// checkEstimates holds every estimate shown from the fifth request on to
// the band, and logs the extremes of E/R.
func checkEstimates(t *testing.T, writes []stampedWrite) {
	t.Helper()
	var end time.Time
	for _, w := range writes {
		if strings.Contains(w.text, "run finished in") {
			end = w.at
		}
	}
	if end.IsZero() {
		t.Fatal(`no "run finished" line`)
	}
	checked, lo, hi := 0, 0.0, 0.0
	for _, w := range writes {
		pos, fig := position.FindStringSubmatch(w.text), leftFigure.FindStringSubmatch(w.text)
		if pos == nil || fig == nil {
			continue
		}
		n, _ := strconv.Atoi(pos[1] + pos[2])
		if n < 5 {
			continue
		}
		checked++
		e, r := clockSeconds(fig[1]), end.Sub(w.at).Seconds()
		if e < r/2-15 || e > 2*r+15 {
			t.Errorf("%.1f s before the end the estimate was %s: %q", r, fig[0], w.text)
		}
		if r >= 5 { // below, a ratio of whole seconds says little
			if lo == 0 || e/r < lo {
				lo = e / r
			}
			hi = max(hi, e/r)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d estimates from the fifth request on", checked)
	}
	t.Logf("%d estimates from the fifth request on; E/R from %.2f to %.2f where R ≥ 5 s", checked, lo, hi)
}
