package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestOpenAIBaseURLRefused: --url written as an OpenAI client takes it
// (…/v1, …/v1/, …/v1/chat/completions, …/v1/models) is refused by bench run
// and bench check before anything is sent (exit 2), with the server's root
// to use instead, and no folder is written.
func TestOpenAIBaseURLRefused(t *testing.T) {
	t.Parallel()
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/v1", "/v1/", "/v1/chat/completions", "/v1/models"} {
		for _, cmd := range [][]string{{"bench", "run"}, {"bench", "check"}} {
			work := t.TempDir()
			r := runIn(t, work, "", append(cmd, "--url", srv.URL+path)...)
			want := "--url \"" + srv.URL + path + "\": ends in " + path + ", an API path; use " + srv.URL + " "
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, want) {
				t.Errorf("%v --url …%s: exit %d, stderr %q; want exit %d with %q", cmd, path, r.code, r.stderr, exitcode.Usage, want)
			}
			if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
				t.Errorf("%v --url …%s: a result location was made", cmd, path)
			}
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the server was asked %d times; want none", n)
	}
}

// TestProfileOpenAIBaseURLRefused: a profile whose url is the OpenAI base
// is not usable: bench run refuses it before anything is sent (exit 2),
// naming the root to use instead.
func TestProfileOpenAIBaseURLRefused(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	mustWrite(t, filepath.Join(work, "profiles", "openai.toml"), "url = \"http://127.0.0.1:18090/v1/\"\ncommand = [\"sh\", \"-c\", \"exit 0\"]\n")
	r := runIn(t, work, "", "bench", "run", "--profile", "openai")
	want := `url "http://127.0.0.1:18090/v1/": ends in /v1/, an API path; use http://127.0.0.1:18090 `
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d with %q", r.code, r.stderr, exitcode.Usage, want)
	}
}
