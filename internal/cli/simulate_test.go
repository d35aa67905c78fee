package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestSimulateAPIKeyEnv: engine simulate --api-key-env reads Strata's key
// from the environment (never the command line), refuses an unset one and
// a dialect with no key, and the Strata dialect then answers 401 without it.
func TestSimulateAPIKeyEnv(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dialect", "strata", "--api-key-env", "SIM_KEY"}, "--api-key-env SIM_KEY: the environment variable is unset or empty"},
		{[]string{"--dialect", "llama.cpp", "--api-key-env", "HAS_KEY"}, "--api-key-env: only the strata dialect asks for a key"},
	} {
		var out, errb strings.Builder
		env := testEnv(t, t.TempDir(), strings.NewReader(""), &out, &errb)
		env.Getenv = func(k string) string { return map[string]string{"HAS_KEY": "k"}[k] }
		code := Run(context.Background(), append([]string{"engine", "simulate", "--port", "0"}, c.args...), env)
		if code != exitcode.Usage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errb.String())
		}
	}

	pr, pw := io.Pipe()
	var errb strings.Builder
	env := testEnv(t, t.TempDir(), strings.NewReader(""), pw, &errb)
	env.Getenv = func(k string) string { return map[string]string{"SIM_KEY": " s3cret-key \n"}[k] }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		code := Run(ctx, []string{"engine", "simulate", "--port", "0", "--dialect", "strata-server", "--api-key-env", "SIM_KEY", "--load-time", "0s"}, env)
		_ = pw.Close() // always nil; the reader sees the end even when the command ends at once
		done <- code
	}()
	t.Cleanup(func() { cancel(); <-done })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (%s)", err, errb.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // the rest is drained, not read
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if url == "" || strings.Contains(line, "s3cret") {
		t.Fatalf("start line %q", line)
	}
	for _, c := range []struct {
		header string
		status int
	}{{"", 401}, {"Bearer wrong", 401}, {"Bearer s3cret-key", 200}} {
		req, _ := http.NewRequest("GET", url+"/props", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close() // only the status is checked
		if resp.StatusCode != c.status {
			t.Errorf("/props with %q: %d, want %d", c.header, resp.StatusCode, c.status)
		}
	}
}
