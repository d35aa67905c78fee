package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/exitcode"
)

// TestSpecialFilesFailAtOnce: every file input is a regular file with a
// size bound, so a device or a FIFO named as one (or a file linked to
// one) is refused at once with the file named, never read until memory
// runs out and never waited on.
func TestSpecialFilesFailAtOnce(t *testing.T) {
	t.Parallel()
	tok, tmpl := qwenPaths(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, name string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeroTOML := mustLink("/dev/zero", "zero.toml")
	fifoTOML := mustLink(fifo, "fifo.toml")
	msgs := filepath.Join(dir, "messages.json")
	mustWrite(t, msgs, `[{"role":"user","content":"hi"}]`)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"tokens --tokenizer /dev/zero", []string{"tokens", "--tokenizer", "/dev/zero"}, "/dev/zero is a character device"},
		{"tokens --template /dev/zero", []string{"tokens", "--tokenizer", tok, "--template", "/dev/zero", "--messages", msgs}, "/dev/zero is a character device"},
		{"tokens --messages FIFO", []string{"tokens", "--tokenizer", tok, "--template", tmpl, "--messages", fifo}, "named pipe"},
		{"simulate --scenario /dev/zero", []string{"engine", "simulate", "--port", "0", "--scenario", "/dev/zero"}, "/dev/zero is a character device"},
		{"profile check on a link to /dev/zero", []string{"bench", "profile", "check", zeroTOML}, "zero.toml is a character device"},
		{"profile check on a link to a FIFO", []string{"bench", "profile", "check", fifoTOML}, "fifo.toml is a named pipe"},
		{"corpus build --tokenizer /dev/zero", []string{"bench", "corpus", "build", "--tokenizer", "/dev/zero", "--template", tmpl, "--out", filepath.Join(dir, "b1")}, "/dev/zero is a character device"},
		{"corpus build --template FIFO", []string{"bench", "corpus", "build", "--tokenizer", tok, "--template", fifo, "--out", filepath.Join(dir, "b2")}, "named pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan cliResult, 1)
			go func() { done <- runIn(t, dir, "", c.args...) }()
			var r cliResult
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the command did not stop: it read or waited on a special file")
			}
			if r.code == exitcode.OK || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "not a regular file") {
				t.Errorf("exit %d, stderr %q; want a failure naming %q", r.code, r.stderr, c.want)
			}
		})
	}
}

// TestEngineStringsAreEscaped: an engine that names itself with terminal
// escapes (a title change, a clipboard write, a right-to-left override)
// and echoes the API key in an error has them printed visibly escaped and
// the key removed, on every stream, as the command runs.
func TestEngineStringsAreEscaped(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdefXYZ"
	evil := "0.11\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\u202eevil\x1b[2J"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A failed write is the command's to report: the test reads what
		// it says.
		switch r.URL.Path {
		case "/health":
			_, _ = w.Write([]byte(`{}`))
		case "/version":
			_ = json.NewEncoder(w).Encode(map[string]string{"version": evil})
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":32768}]}`))
		default:
			http.Error(w, "bad key "+key+" \x1b]0;pwned\x07", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	env := testEnv(t, t.TempDir(), strings.NewReader(""), &out, &errb)
	env.Getenv = func(k string) string {
		if k == "MY_KEY" {
			return key
		}
		return ""
	}
	Run(context.Background(), []string{"bench", "check", "--url", srv.URL, "--api-key-env", "MY_KEY"}, env)
	all := out.String() + errb.String()
	if strings.ContainsAny(all, "\x1b\x07\u202e") {
		t.Errorf("raw control characters reached the terminal:\n%q", all)
	}
	if !strings.Contains(all, `\u001b]0;pwned\u0007`) {
		t.Errorf("the engine's version is not shown escaped:\n%s", all)
	}
	if strings.Contains(all, key) {
		t.Errorf("the API key was printed:\n%s", all)
	}
}
