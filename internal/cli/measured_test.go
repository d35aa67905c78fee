package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestRunThatMeasuredNothingFails: a run that measured nothing (its
// warm-up failed, so every measured request was skipped; or every measured
// request failed) still writes its folder, which bench report passes, and
// exits 1 saying why and where the result is.
func TestRunThatMeasuredNothingFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		scenario simengine.Scenario
		says     string
	}{
		{"the warm-up failed", simengine.Scenario{Requests: map[string]simengine.Behaviour{"warmup": {HTTPStatus: 500}}},
			"the run measured nothing: the warm-up failed, so every request after it is skipped (the result in "},
		{"every measured request failed", simengine.Scenario{Requests: failing(protocol.Schedule(false)[1:])},
			"the run measured nothing: every required request failed (the result in "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sc := c.scenario
			url, _ := engineServer(t, func(cfg *simengine.Config) { cfg.Scenario = &sc })
			work := t.TempDir()
			r := runIn(t, work, "", "bench", "run", "--url", url)
			if r.code != exitcode.Failed || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d with %q", r.code, r.stderr, exitcode.Failed, c.says)
			}
			res, dir := readResults(t, work)
			if !strings.Contains(r.stdout, "result: "+dir) || !strings.Contains(r.stdout, "status: "+string(res.Run.Status)) {
				t.Errorf("stdout %q does not name the folder and its status", r.stdout)
			}
			if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
				t.Errorf("report: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
			}
		})
	}
}

// failing scripts HTTP 500 for each of reqs.
func failing(reqs []protocol.Request) map[string]simengine.Behaviour {
	out := map[string]simengine.Behaviour{}
	for _, q := range reqs {
		out[q.ID] = simengine.Behaviour{HTTPStatus: 500}
	}
	return out
}

// TestPartialRunThatMeasuredExits0: a run the engine left after it had
// measured a request (it stops answering, /health included) skips the rest,
// is written, and exits 0 as before: what it measured is a result, and the
// folder says what was skipped.
func TestPartialRunThatMeasuredExits0(t *testing.T) {
	t.Parallel()
	sim := simHandler(t, func(*simengine.Config) {})
	var gone atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.URL.Path == "/v1/chat/completions" && bytes.Contains(body, []byte("[case performance-prompt-4k-r1]")) {
			gone.Store(true)
		}
		if gone.Load() {
			// The engine is gone: the connection closes without an answer.
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close() // closing is the answer; its error tells nothing more
			}
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", srv.URL)
	if r.code != exitcode.OK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	res, _ := readResults(t, work)
	if c := res.RequestCounts.Performance; c.Completed != 1 || c.Skipped == 0 {
		t.Errorf("performance counts %+v: want one completed and the rest skipped", c)
	}
	if !strings.Contains(res.Extensions.Aborted, "did not answer /health") {
		t.Errorf("aborted %q: want the server's silence", res.Extensions.Aborted)
	}
}
