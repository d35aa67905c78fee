package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestPreflightNotCheckedInOneWording: a vLLM-shaped server
// whose render route answers HTTP 400 to every request leaves every
// fixture not checked: the screen's fixture lines, its tally, bench
// check's exit message and the folder's README say so in the same words,
// and none of them calls a fixture that was never checked one that
// differs.
func TestPreflightNotCheckedInOneWording(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := prompts.Template(b)
	sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 20, Accuracy: 1, Slots: 1, ContextTokens: 32768,
		ModelPath: "m.gguf", Bundle: b, Template: string(tmpl), Dialect: simengine.DialectVLLM}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions/render" {
			http.Error(w, `{"error":{"message":"reasoning_effort: Input should be 'low', 'medium' or 'high'","code":400}}`, http.StatusBadRequest)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	check := runIn(t, t.TempDir(), "", "bench", "check", "--url", srv.URL)
	if check.code != exitcode.Failed || strings.Count(check.stdout, " not checked: POST /v1/chat/completions/render answered HTTP 400") != 34 ||
		!strings.Contains(check.stdout, "34 fixtures: 0 agree, 0 differ, 34 not checked") || !strings.Contains(check.stderr, "34 not checked") ||
		strings.Contains(check.stdout+check.stderr, "34 differ") {
		t.Errorf("bench check: exit %d\n%s%s", check.code, check.stdout, check.stderr)
	}
	work := t.TempDir()
	run := runIn(t, work, "", "bench", "run", "--url", srv.URL)
	if !strings.Contains(run.stderr, "34 fixtures: 0 agree, 0 differ, 34 not checked") || strings.Contains(run.stderr, "34 differ") {
		t.Errorf("bench run's screen: exit %d\n%s", run.code, run.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders %v\n%s", dirs, run.stderr)
	}
	readme, _ := os.ReadFile(filepath.Join(dirs[0], "README.md"))
	if !strings.Contains(string(readme), "**34 of 34 fixtures not checked**") || strings.Contains(string(readme), "fixtures differ") {
		t.Errorf("README's preflight line:\n%s", preflightLine(string(readme)))
	}
}

// preflightLine is a README's preflight line.
func preflightLine(readme string) string {
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "- Preflight") {
			return l
		}
	}
	return "(none)"
}
