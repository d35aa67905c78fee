package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/strata-bench/strata/internal/exitcode"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/simengine"
)

// loggingServer is the simulator without its markers (so it reads as
// llama.cpp), behind a front that appends to logPath, as llama-server
// --log-file does, each chat request's timer lines when it ends; extra is
// appended once, after the first, as if another client's request had
// ended then.
func loggingServer(t *testing.T, logPath, extra string) string {
	t.Helper()
	return loggingServerWith(t, logPath, extra, nil)
}

// loggingServerWith is loggingServer whose timer lines pass through alter
// (nil: as the simulator timed the request) before they are appended.
func loggingServerWith(t *testing.T, logPath, extra string, alter func(string) string) string {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _, err := prompts.Template(b)
	if err != nil {
		t.Fatal(err)
	}
	sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 40, Accuracy: 1, Slots: 1, Template: string(tmpl),
		ContextTokens: 32768, ModelPath: "Qwen3-8B-Q4_K_M.gguf", Bundle: b,
		Scenario: &simengine.Scenario{Props: map[string]json.RawMessage{"build_info": json.RawMessage(`"b9928-81ff7ab"`)}}})
	target, _ := url.Parse(resulttest.Unmarked(t, sim))
	proxy := httputil.NewSingleHostReverseProxy(target)
	timings := regexp.MustCompile(`"timings":(\{[^}]*\})`)
	var mu sync.Mutex
	task := 0
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/v1/chat/completions" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return err
		}
		all := timings.FindAllSubmatch(body, -1)
		if len(all) == 0 {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		lines := resulttest.LlamaTimerLines(task, all[len(all)-1][1])
		if alter != nil {
			lines = alter(lines)
		}
		if task == 0 {
			lines += extra
		}
		task++
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(lines)
		return errors.Join(err, f.Close())
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: time.Minute}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Serve ends with http.ErrServerClosed when the test closes it, and
	// Close's error is the listener's, which the test no longer uses.
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// before is what the server's log file holds when the run begins: its
// start, with an address the redactor replaces, and a request it answered
// earlier.
const before = "0.00.003.331 I srv    load_model: loading model 'Qwen3-8B-Q4_K_M.gguf' for alice@example.com\n" +
	"0.01.000.000 I slot print_timing: id  0 | task 900 | prompt eval time =      55.00 ms /   777 tokens\n" +
	"0.01.000.001 I slot print_timing: id  0 | task 900 |        eval time =      66.00 ms /    12 tokens\n"

// urlRun is a --url run against a loggingServer whose log file held
// content when the run began (given to the run with --engine-log when
// named): the working folder, the result and its folder.
func urlRun(t *testing.T, content, extra string, named bool) (string, *contract.Results, string) {
	t.Helper()
	work := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "llama.log")
	mustWrite(t, logPath, content)
	args := []string{"bench", "run", "--url", loggingServer(t, logPath, extra)}
	if named {
		args = append(args, "--engine-log", logPath)
	}
	if r := runIn(t, work, "", args...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res, dir := readResults(t, work)
	return work, res, dir
}

// TestURLRunKeepsTheEngineLog: a --url run given the server's log file
// keeps it, redacted, as the engine log: what was there before the run,
// then strata's line where the run began, then the run's own timer lines,
// which the validator holds against the records; bench submit takes it.
func TestURLRunKeepsTheEngineLog(t *testing.T) {
	t.Parallel()
	work, res, dir := urlRun(t, before, "", true)
	log, err := os.ReadFile(filepath.Join(dir, contract.EngineLog))
	if err != nil {
		t.Fatal(err)
	}
	pre, run, found := strings.Cut(string(log), contract.EngineLogRunStart+"\n")
	if !found || !strings.Contains(pre, "for <email>\n") || strings.Contains(string(log), "alice@example.com") || !strings.Contains(pre, "task 900") {
		t.Errorf("the log before the run began:\n%s", pre)
	}
	if n := strings.Count(run, "prompt eval time"); n != len(res.Requests) {
		t.Errorf("%d timer lines after the run began, want %d (one a request)", n, len(res.Requests))
	}
	if e := res.Extensions.Engine; e == nil || e.Log == nil || *e.Log != contract.EngineLog {
		t.Errorf("extensions.engine %+v", res.Extensions.Engine)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	if !strings.Contains(string(readme), "| Engine log | `engine.log` |") {
		t.Errorf("README:\n%s", readme)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stdout)
	}
	if sub := runIn(t, work, "", "bench", "submit", dir); sub.code != 0 {
		t.Errorf("submit: exit %d\n%s%s", sub.code, sub.stdout, sub.stderr)
	}
}

// TestURLRunWithoutTheEngineLog: without --engine-log the folder says in
// its README's first section that it has no engine log and why, and bench
// submit refuses it naming the flag.
func TestURLRunWithoutTheEngineLog(t *testing.T) {
	t.Parallel()
	work, _, dir := urlRun(t, "", "", false)
	readme, _ := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	first := string(readme)[:strings.Index(string(readme), "## ")]
	if !strings.Contains(first, "| Engine log | **none**: the engine at --url was already serving when the run began, not started by strata") ||
		!strings.Contains(first, "with --engine-log FILE") {
		t.Errorf("the README's first section:\n%s", first)
	}
	sub := runIn(t, work, "", "bench", "submit", dir)
	if sub.code != exitcode.Failed || !strings.Contains(sub.stdout, "incomplete: no engine log") || !strings.Contains(sub.stderr, "no engine log (--engine-log)") || strings.Contains(sub.stdout, "Title:") {
		t.Errorf("submit: exit %d\n%s%s", sub.code, sub.stdout, sub.stderr)
	}
}

// TestEngineLogHoldsARequestStrataDidNotSend: a request another client
// sent while the run went shows in the log, and the folder says so: it is
// nonconforming for it, and the validator takes it.
func TestEngineLogHoldsARequestStrataDidNotSend(t *testing.T) {
	t.Parallel()
	other := "0.05.000.000 I slot print_timing: id  0 | task 77 | prompt eval time =      55.00 ms /   777 tokens\n" +
		"0.05.000.001 I slot print_timing: id  0 | task 77 |        eval time =      66.00 ms /    12 tokens\n"
	work, res, dir := urlRun(t, "", other, true)
	var why []contract.StatusReason
	for _, r := range res.Extensions.StatusReasons.Nonconforming {
		if r.Kind == contract.ForeignRequests {
			why = append(why, r)
		}
	}
	if res.Run.Status != contract.StatusNonconforming || len(why) != 1 ||
		!strings.HasPrefix(why[0].Text, "the engine answered 1 request strata did not send while the run went") || !strings.Contains(why[0].Text, "task 77, prompt 777 tokens") {
		t.Errorf("status %s, nonconforming for %+v: want once for the one request strata did not send, task 77", res.Run.Status, res.Extensions.StatusReasons.Nonconforming)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stdout)
	}
}

// TestEngineLogThatDisagreesWithTheRecords: a log file whose timer lines
// pair with none of the records (another server's, or one rewritten) makes
// a folder bench report rejects: bench run keeps it, and says so with a
// failed exit instead of "result:" alone.
func TestEngineLogThatDisagreesWithTheRecords(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "llama.log")
	mustWrite(t, logPath, "")
	more := regexp.MustCompile(`/ +(\d+) tokens`)
	alter := func(lines string) string { return more.ReplaceAllString(lines, "/ 9${1} tokens") }
	r := runIn(t, work, "", "bench", "run", "--url", loggingServerWith(t, logPath, "", alter), "--engine-log", logPath)
	_, dir := readResults(t, work)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "does not pass bench report") || !strings.Contains(r.stderr, "the log and the records disagree") {
		t.Errorf("exit %d, want %d saying the folder does not pass bench report:\n%s", r.code, exitcode.Failed, r.stderr)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != exitcode.Failed {
		t.Errorf("report: exit %d, want %d", rep.code, exitcode.Failed)
	}
}

// TestEngineLogFlagRefusedBeforeWork: a file --engine-log cannot name is
// bad usage, said before anything is sent, naming the flag (the size bound
// is engine's TestLogFileBounds).
func TestEngineLogFlagRefusedBeforeWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freeTestPort(t)
	work := simProfile(t, port)
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"no such file", []string{"--url", "http://127.0.0.1:9", "--engine-log", filepath.Join(dir, "nope.log")}, "no such file"},
		{"a folder", []string{"--url", "http://127.0.0.1:9", "--engine-log", dir}, "is a folder, not a regular file"},
		{"a FIFO", []string{"--url", "http://127.0.0.1:9", "--engine-log", fifo}, "is a named pipe (FIFO), not a regular file"},
		{"the simulator", []string{"--simulate", "--engine-log", fifo}, "--simulate starts strata's own engine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runIn(t, work, "", append([]string{"bench", "run"}, c.args...)...)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--engine-log") || !strings.Contains(r.stderr, c.says) || strings.Contains(r.stderr, "starting the") {
				t.Errorf("exit %d, want %d naming --engine-log and %q:\n%s", r.code, exitcode.Usage, c.says, r.stderr)
			}
		})
	}
	ok := filepath.Join(dir, "ok.log")
	mustWrite(t, ok, "")
	r := runIn(t, work, "", "bench", "run", "--profile", "fake", "--engine-log", ok)
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--engine-log names the log file of an engine already serving, but nothing serves at") || strings.Contains(r.stderr, "starting the") {
		t.Errorf("a profile whose engine strata would start: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
		t.Error("a result location was made for runs that never started")
	}
}
