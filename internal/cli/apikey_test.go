package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestWordAPIKeysAreRefused: a key that is a word of
// the evidence (a word strata writes, the engine's name, a state) cannot
// be redacted without destroying that evidence, so run and check refuse
// it before anything is sent, naming where it came from and never showing
// it; a key that is the engine's own build string is refused once the
// server said so, before the warm-up, and no result folder is written.
func TestWordAPIKeysAreRefused(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var heard []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/health" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status": "ok"}`)) // a failed write is the command's to report
			return
		}
		if r.URL.Path == "/props" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"build_info": "b9928-81ff7ab", "chat_template": "x"}`)) // as above
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for _, key := range []string{"reasoning", "performance", "llama.cpp", "completed", "assistant", "Completed", "b10470-Build"} {
		for _, cmd := range [][]string{{"bench", "run"}, {"bench", "check"}} {
			work := t.TempDir()
			r := runWithKey(t, work, key, append(cmd, "--url", srv.URL, "--api-key-env", "STRATA_TEST_KEY")...)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--api-key-env STRATA_TEST_KEY: the API key ") || !strings.Contains(r.stderr, "openssl rand") {
				t.Errorf("%v with the key %q: exit %d %q", cmd, key, r.code, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, key) {
				t.Errorf("%v with the key %q: the key is shown: %q", cmd, key, r.stderr)
			}
		}
	}
	mu.Lock()
	if len(heard) != 0 {
		t.Errorf("the server heard %v before a word key was refused", heard)
	}
	mu.Unlock()

	work := t.TempDir()
	r := runWithKey(t, work, "b9928-81ff7ab", "bench", "run", "--url", srv.URL, "--api-key-env", "STRATA_TEST_KEY")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--api-key-env STRATA_TEST_KEY: the API key is part of what the server says about itself (how it was identified)") {
		t.Errorf("the build string as the key: exit %d %q", r.code, r.stderr)
	}
	if dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*")); len(dirs) != 0 {
		t.Errorf("a refused run left %v", dirs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range heard {
		if strings.HasPrefix(h, "POST") {
			t.Errorf("the server heard %s before the key was refused", h)
		}
	}
}

// TestAPIKeyInATypedPathBeforeTheKeyIsRead: a refusal printed before the
// run reads the key (--bundle is refused before any work) still hides the
// API key --api-key-env names inside a path the user typed, as every
// later line does, and shows the rest of the path.
func TestAPIKeyInATypedPathBeforeTheKeyIsRead(t *testing.T) {
	t.Parallel()
	const key = "sk-rt2-Zq8Lm3Np7Rt5Vx1Bc9"
	work := t.TempDir()
	for _, flag := range [][]string{{"--api-key-env", "STRATA_TEST_KEY"}, {"--api-key-env=STRATA_TEST_KEY"}} {
		args := append([]string{"bench", "run", "--url", "http://127.0.0.1:9", "--bundle", "/tmp/" + key + "/x"}, flag...)
		r := runWithKey(t, work, key, args...)
		if strings.Contains(r.stdout+r.stderr, key) || !strings.Contains(r.stderr, "--bundle /tmp/<secret>/x") {
			t.Errorf("%v: exit %d, the key shown or the path not:\n%s", flag, r.code, r.stderr)
		}
	}
}
