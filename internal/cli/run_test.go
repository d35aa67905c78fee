package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
)

// TestRunSimulateAndReport is the README's main command in process: a full
// run against the simulated engine writes a folder that report validates.
func TestRunSimulateAndReport(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a full simulated run takes about 16 s")
	}
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "bench", "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, work, "", "bench", "run", "--simulate", "--track-notes", "simulated demo", "--background", "none")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "bench", "results", "*-standard-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders: %v (bench/results is used when the folder has one)", dirs)
	}
	for _, f := range []string{"results.json", "outputs.jsonl", "README.md", "config.json", "chat_template.jinja"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// The main command again, then compare the two: the simulator's model
	// files are byte-identical, so no quantization is needed.
	if r2 := runIn(t, work, "", "bench", "run", "--simulate"); r2.code != 0 {
		t.Fatalf("second run: exit %d\n%s", r2.code, r2.stderr)
	}
	both, _ := filepath.Glob(filepath.Join(work, "bench", "results", "*-standard-*"))
	if len(both) != 2 {
		t.Fatalf("result folders after two runs: %v", both)
	}
	cmp := runIn(t, work, "", "bench", "compare", both[0], both[1])
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "byte-identical") || !strings.Contains(cmp.stdout, "candidate is") {
		t.Errorf("compare of two main-job runs: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	rep := runIn(t, work, "", "bench", "report", dirs[0])
	if rep.code != 0 || !strings.Contains(rep.stdout, "valid: ") || !strings.Contains(rep.stdout, "# Strata standard benchmark result") {
		t.Fatalf("report: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	if !strings.Contains(rep.stdout, "simulated engine") || !strings.Contains(r.stdout, "status: nonconforming") {
		t.Error("a simulated result must say it came from the simulator")
	}
	// Tamper with a byte of the evidence: report fails with exit 1.
	p := filepath.Join(dirs[0], "outputs.jsonl")
	b, _ := os.ReadFile(p)
	mustWrite(t, p, string(b)+" ")
	rep = runIn(t, work, "", "bench", "report", "-q", dirs[0])
	if rep.code != exitcode.Failed || !strings.Contains(rep.stdout, "changed after the run") {
		t.Fatalf("tampered: exit %d\n%s", rep.code, rep.stdout)
	}
}

func TestRunRefusesWorkloadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--concurrency", "2"}, {"--repeat", "5"}, {"--request-timeout", "60"},
	} {
		r := runIn(t, t.TempDir(), "", append([]string{"bench", "run", "--simulate"}, args...)...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, "would change the workload") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "exactly one of --url"},
		{[]string{"--url", "http://127.0.0.1:1", "--simulate"}, "exactly one of --url"},
		{[]string{"--url", "ftp://x"}, "--url"},
		{[]string{"--simulate", "--track", "fast"}, "--track"},
		{[]string{"--url", "http://127.0.0.1:9", "--api-key-env", "STRATA_NO_SUCH_VAR"}, "STRATA_NO_SUCH_VAR"},
	} {
		r := runIn(t, t.TempDir(), "", append([]string{"bench", "run"}, c.args...)...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
}

func TestRunServerDoesNotAnswer(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", "http://127.0.0.1:9")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "does not answer") {
		t.Fatalf("exit %d: %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
		t.Error("no result folder is written when nothing was run")
	}
}

func TestReportBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := runIn(t, dir, "", "bench", "report", "nope"); r.code != exitcode.Failed || !strings.Contains(r.stderr, "nope") {
		t.Errorf("missing folder: exit %d %q", r.code, r.stderr)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, dir, "", "bench", "report", "empty"); r.code != exitcode.Failed || !strings.Contains(r.stdout, "results.json: cannot be read") {
		t.Errorf("empty folder: exit %d %q", r.code, r.stdout)
	}
	mustWrite(t, filepath.Join(dir, "legacy", "results.json"), `{"schema": 1, "runs": []}`)
	if r := runIn(t, dir, "", "bench", "report", "legacy"); r.code != exitcode.Failed || !strings.Contains(r.stdout, "unknown format") {
		t.Errorf("legacy format: exit %d %q", r.code, r.stdout)
	}
	mustWrite(t, filepath.Join(dir, "html", "results.json"), `<html>`)
	if r := runIn(t, dir, "", "bench", "report", "html"); r.code != exitcode.Failed || !strings.Contains(r.stdout, "results.json: is not strict JSON") {
		t.Errorf("not JSON: exit %d %q", r.code, r.stdout)
	}
	if r := runIn(t, dir, "", "bench", "report"); r.code != exitcode.Usage {
		t.Errorf("no argument: exit %d", r.code)
	}
}

// trigger is a stderr that sends a signal once a line containing after is
// written (the run is then between two requests, deterministically).
type trigger struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	after string
	sigs  chan os.Signal
	sent  []os.Signal
	fired bool
}

func (w *trigger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.fired && strings.Contains(w.buf.String(), w.after) {
		w.fired = true
		for _, s := range w.sent {
			w.sigs <- s
		}
	}
	return len(p), nil
}

func (w *trigger) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunInterrupted: SIGINT, SIGTERM and SIGHUP (an SSH drop) end a run the
// same way: the request in flight fails, the rest are skipped, the partial
// result is written and valid, it names the signal, and the exit code says
// the run was interrupted. Two signals end it at once, still writing.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sigs []os.Signal
		says string
	}{
		{"SIGINT", []os.Signal{os.Interrupt}, "SIGINT"},
		{"SIGTERM", []os.Signal{syscall.SIGTERM}, "SIGTERM"},
		{"SIGHUP", []os.Signal{syscall.SIGHUP}, "SIGHUP"},
		{"SIGHUP twice", []os.Signal{syscall.SIGHUP, syscall.SIGHUP}, "SIGHUP"},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := freeTestPort(t)
			work := simProfile(t, port, "--decode-tps", "20000")
			sigs := make(chan os.Signal, 4)
			errb := &trigger{after: "performance-short-r1:", sigs: sigs, sent: c.sigs}
			var out bytes.Buffer
			env := testEnv(t, work, strings.NewReader(""), &out, errb)
			env.Signals = sigs
			code := Run(context.Background(), []string{"bench", "run", "--profile", "fake"}, env)
			if code != exitcode.Interrupted || !strings.Contains(errb.String(), "interrupted ("+c.says) {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
				t.Error("the engine the runner started outlived the run")
			}
			res, dir := readResults(t, work)
			partial := contract.Texts(res.Extensions.StatusReasons.Partial)
			// The simulator makes it nonconforming, which takes precedence;
			// the interruption is still said.
			if res.Run.Status != "nonconforming" || !strings.Contains(strings.Join(partial, " "), "interrupted: "+c.says) {
				t.Errorf("status %s, reasons %v", res.Run.Status, partial)
			}
			rep := runIn(t, work, "", "bench", "report", dir)
			if rep.code != 0 || !strings.Contains(rep.stdout, "skipped: the run was interrupted ("+c.says) {
				t.Fatalf("report: exit %d %s", rep.code, rep.stdout)
			}
			if pend, _ := filepath.Glob(filepath.Join(work, "bench-results", ".*.pending")); len(pend) != 0 {
				t.Errorf("the pending folder stayed: %v", pend)
			}
		})
	}
}

// TestShortAPIKeyIsRefusedBeforeAnythingIsSent: a key too short to redact
// safely (7 characters) is a usage error naming the flag (or the
// profile's field), the variable and the minimum, for run and check, and
// the server hears nothing; a key of 8 characters is used.
func TestShortAPIKeyIsRefusedBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	run := func(work, key string, args ...string) cliResult {
		var out, errb bytes.Buffer
		env := testEnv(t, work, strings.NewReader(""), &out, &errb)
		env.Getenv = func(k string) string { return map[string]string{"STRATA_TEST_KEY": key}[k] }
		code := Run(t.Context(), args, env)
		return cliResult{code, out.String(), errb.String()}
	}
	for _, cmd := range [][]string{{"bench", "run"}, {"bench", "check"}} {
		r := run(t.TempDir(), "k3y-s7x", append(cmd, "--url", srv.URL, "--api-key-env", "STRATA_TEST_KEY")...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--api-key-env STRATA_TEST_KEY: the API key has 7 characters; strata needs at least 8") {
			t.Errorf("%v with a 7-character key: exit %d %q", cmd, r.code, r.stderr)
		}
	}
	mu.Lock()
	if hits != 0 {
		t.Errorf("the server heard %d requests before the short key was refused", hits)
	}
	mu.Unlock()
	// A profile's api_key_env is named as the profile's field; its engine
	// is never started.
	work := simProfile(t, freeTestPort(t))
	p := filepath.Join(work, "profiles", "fake.toml")
	b, _ := os.ReadFile(p)
	mustWrite(t, p, strings.Replace(string(b), "[env]\n", "api_key_env = \"STRATA_TEST_KEY\"\n[env]\n", 1))
	if r := run(work, "abc", "bench", "run", "--profile", "fake"); r.code != exitcode.Usage || !strings.Contains(r.stderr, "profile fake api_key_env STRATA_TEST_KEY: the API key has 3 characters") {
		t.Errorf("profile with a 3-character key: exit %d %q", r.code, r.stderr)
	}
	if r := run(t.TempDir(), "k3y-s8xz", "bench", "check", "--url", srv.URL, "--api-key-env", "STRATA_TEST_KEY"); strings.Contains(r.stderr, "at least 8") {
		t.Errorf("an 8-character key is refused: %q", r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits == 0 {
		t.Error("with an 8-character key nothing was sent")
	}
}

// TestResultsDirChecksComeFirst: a --results-dir that is a file, or under
// a folder strata cannot write, fails before anything reaches the server
// (whose log stays empty), usage errors with exit 2.
func TestResultsDirChecksComeFirst(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer srv.Close()
	work := t.TempDir()
	mustWrite(t, filepath.Join(work, "afile"), "not a folder")
	r := runIn(t, work, "", "bench", "run", "--url", srv.URL, "--results-dir", "afile")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--results-dir") || !strings.Contains(r.stderr, "is a file") {
		t.Errorf("a file: exit %d %q", r.code, r.stderr)
	}
	r = runIn(t, work, "", "bench", "run", "--url", srv.URL, "--results-dir", "afile/below")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "is a file") {
		t.Errorf("under a file: exit %d %q", r.code, r.stderr)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(work, "ro")
		if err := os.MkdirAll(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		r = runIn(t, work, "", "bench", "run", "--url", srv.URL, "--results-dir", "ro/results")
		if r.code != exitcode.Failed || !strings.Contains(r.stderr, "is not writable") {
			t.Errorf("read-only: exit %d %q", r.code, r.stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 0 {
		t.Errorf("the server received %v", hits)
	}
}

// TestInterruptedWhileTheEngineLoads: a signal while the profile's engine
// loads stops the engine and says so (exit 130); no request was sent, so
// no result folder is written.
func TestInterruptedWhileTheEngineLoads(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port, "--load-time", "20s")
	sigs := make(chan os.Signal, 1)
	errb := &trigger{after: "starting the fake engine", sigs: sigs, sent: []os.Signal{os.Interrupt}}
	var out bytes.Buffer
	env := testEnv(t, work, strings.NewReader(""), &out, errb)
	env.Signals = sigs
	code := Run(context.Background(), []string{"bench", "run", "--profile", "fake"}, env)
	if code != exitcode.Interrupted || !strings.Contains(errb.String(), "interrupted (SIGINT) while profile fake's engine loaded") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		t.Error("the engine outlived the interrupted load")
	}
	if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
		t.Errorf("a result folder for a run that sent nothing: %v", err)
	}
}

// TestCommandLineIsOneLine: a flag value with a newline, a terminal escape,
// a bidirectional override or invalid UTF-8 is recorded in the command
// line as a shell word that gives it back, on one line of plain text (the
// validator refuses a hidden character in run.command).
func TestCommandLineIsOneLine(t *testing.T) {
	t.Parallel()
	cmd := newRun(testEnv(t, t.TempDir(), strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}))
	if err := cmd.ParseFlags([]string{"--track-notes", "line one\nline two", "--background", "x\x1b[2J\u202e\xff", "--quantization", "IQ3_XXS"}); err != nil {
		t.Fatal(err)
	}
	got := commandLine(cmd)
	want := `run --background=$'x\u001b[2J\u202e\xff' --quantization=IQ3_XXS --track-notes=$'line one\nline two'`
	if got != want {
		t.Errorf("command line\n%s\nwant\n%s", got, want)
	}
}

// TestOneLineIdentityFlagsAreRefused: a revision, a quantization, a
// background workload or a build option names one thing on one line; a
// newline, a terminal escape, a bidirectional override or a byte that is
// not UTF-8 in one is refused before anything runs, naming the flag. Track
// notes and a custom pack's description are prose and may span lines (the
// e2e TestNothingStrataWritesFailsItsValidator holds what they write).
func TestOneLineIdentityFlagsAreRefused(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"model-revision", "source-revision", "tokenizer-revision", "quantization", "background", "build-options"} {
		for _, v := range []string{"IQ3\nXXS", "IQ3\rXXS", "\x1b[2JIQ3", "IQ3\u202eXXS", "IQ3\xffXXS"} {
			work := t.TempDir()
			r := runIn(t, work, "", "bench", "run", "--simulate", "--"+flag, v)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--"+flag) || !strings.Contains(r.stderr, "one line") {
				t.Errorf("--%s %q: exit %d, stderr %q", flag, v, r.code, r.stderr)
			}
			if entries, _ := os.ReadDir(filepath.Join(work, "bench-results")); len(entries) != 0 {
				t.Errorf("--%s %q: a result folder was written", flag, v)
			}
		}
	}
}
