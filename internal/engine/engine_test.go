package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/sharedpath"
)

// TestMain lets the test binary play an engine, chosen by STRATA_FAKE_ENGINE.
func TestMain(m *testing.M) {
	switch os.Getenv("STRATA_FAKE_ENGINE") {
	case "":
		os.Exit(m.Run())
	case "serve": // serves /health on the given port: loading until asked once
		fmt.Println("fake engine: loading model /home/alice/models/q.gguf")
		var asked atomic.Bool
		http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
			if !asked.Swap(true) {
				w.WriteHeader(503)
				return
			}
			_, _ = w.Write([]byte(`{"status":"ok"}`)) // a failed write shows as the client's error
		})
		ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		fmt.Println(http.Serve(ln, nil))
		os.Exit(3)
	case "crash":
		fmt.Println("fake engine: loading")
		fmt.Fprintln(os.Stderr, "error: failed to allocate 24 GiB of VRAM")
		os.Exit(1)
	case "quit":
		fmt.Println("fake engine: nothing to serve")
		os.Exit(0)
	case "never-loads":
		hang()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("fake engine: ignoring SIGTERM")
		hang()
	}
}

// hang blocks until the process is killed. Not select {}: in a binary
// without cgo's threads nothing else is alive, and the runtime ends it as
// a deadlock (exit 2) instead of letting it hang.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

func fakeProfile(t *testing.T, mode string, port int) *Profile {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Profile{Name: "fake-" + mode, URL: fmt.Sprintf("http://127.0.0.1:%d", port), Command: []string{exe},
		Env: map[string]string{"STRATA_FAKE_ENGINE": mode, "PORT": fmt.Sprint(port)}}
}

// logFile is a file for an engine's output, closed at the test's end.
func logFile(t *testing.T) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "engine-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRead(f) })
	return f
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // only its port number was wanted
	return ln.Addr().(*net.TCPAddr).Port
}

func healthOf(port int) Health {
	return func(ctx context.Context) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://127.0.0.1:%d/health", port), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close() // only the status is read
		return resp.StatusCode, nil
	}
}

// stillLoading is the health of an engine that never serves: the crashing
// and the SIGTERM-ignoring fakes listen on no port, and a real probe of
// their free port could reach a server another test (or package) opened
// on it since, and hear 200.
func stillLoading(context.Context) (int, error) { return http.StatusServiceUnavailable, nil }

func TestStartWaitStop(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	p, err := Start(fakeProfile(t, "serve", port), os.Environ(), nil, logFile(t))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	if err := p.WaitReady(context.Background(), healthOf(port), 10*time.Second, func(s string, _ time.Duration) { states = append(states, s) }); err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Error("no progress shown while loading")
	}
	if err := p.Stop(5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Fatal("still running after Stop")
	}
	if _, err := healthOf(port)(context.Background()); err == nil {
		t.Error("the engine still answers after Stop")
	}
	if log, err := p.Log(); err != nil || !strings.Contains(string(log), "fake engine: loading model") {
		t.Errorf("log %q, %v", log, err)
	}
}

// TestCrashDuringLoad: an engine that exits while loading is noticed at
// once, not at the timeout: the load timeout never passes here.
func TestCrashDuringLoad(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	p, err := Start(fakeProfile(t, "crash", port), os.Environ(), nil, logFile(t))
	if err != nil {
		t.Fatal(err)
	}
	p.after = func(time.Duration) <-chan time.Time { return nil }
	err = p.WaitReady(context.Background(), stillLoading, 30*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "exited during load") || !strings.Contains(err.Error(), "failed to allocate 24 GiB") {
		t.Fatalf("err %v", err)
	}
}

// TestCleanExitDuringLoad: an engine that exits with status 0 while
// loading is reported with that status, as any other exit is.
func TestCleanExitDuringLoad(t *testing.T) {
	t.Parallel()
	p, err := Start(fakeProfile(t, "quit", freePort(t)), os.Environ(), nil, logFile(t))
	if err != nil {
		t.Fatal(err)
	}
	p.after = func(time.Duration) <-chan time.Time { return nil }
	err = p.WaitReady(context.Background(), stillLoading, 30*time.Second, nil)
	if want := "the engine exited during load (exit status 0)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err %v; want it to start %q", err, want)
	}
}

// timerAsk is one wait on the engine's timer, for the test to fire.
type timerAsk struct {
	d    time.Duration
	fire chan time.Time
}

// testTimers makes p's timer hand each wait to the test on the returned
// channel.
func testTimers(p *Child) <-chan timerAsk {
	asks := make(chan timerAsk)
	p.after = func(d time.Duration) <-chan time.Time {
		a := timerAsk{d, make(chan time.Time, 1)}
		asks <- a
		return a.fire
	}
	return asks
}

// TestLoadTimeoutAndSIGKILL: an engine still loading when the load timeout
// passes is reported with the last lines of its log; one that ignores
// SIGTERM gets SIGKILL once the grace period has passed on the engine's
// timer, not before, and is gone when Stop returns.
func TestLoadTimeoutAndSIGKILL(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	p, err := Start(fakeProfile(t, "ignore-term", port), os.Environ(), nil, logFile(t))
	if err != nil {
		t.Fatal(err)
	}
	asks := testTimers(p)
	said := make(chan struct{})
	var once sync.Once
	health := Health(func(context.Context) (int, error) {
		if log, _ := p.Log(); strings.Contains(string(log), "ignoring SIGTERM") {
			once.Do(func() { close(said) })
		}
		return http.StatusServiceUnavailable, nil
	})
	waited := make(chan error, 1)
	go func() { waited <- p.WaitReady(context.Background(), health, time.Minute, nil) }()
	load := <-asks
	<-said // the timeout passes once the engine has said it ignores SIGTERM
	load.fire <- time.Time{}
	if err := <-waited; !errors.Is(err, ErrLoadTimeout) || !strings.Contains(err.Error(), "ignoring SIGTERM") || load.d != time.Minute {
		t.Fatalf("err %v after a timeout of %s", err, load.d)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop(300*time.Millisecond, nil) }()
	var grace timerAsk
	select {
	case grace = <-asks:
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) without waiting for the grace period", err)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) before the grace period passed", err)
	default:
	}
	if grace.d != 300*time.Millisecond || p.Exited() {
		t.Fatalf("grace period %s, exited %v; want 300ms and the engine still running after SIGTERM", grace.d, p.Exited())
	}
	grace.fire <- time.Time{}
	select {
	case <-asks: // the wait for SIGKILL to take effect, which it does first
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) without SIGKILL after the grace period", err)
	}
	if err := <-stopped; err != nil || !p.Exited() {
		t.Fatalf("Stop: %v, exited %v", err, p.Exited())
	}
}

func TestStartMissingCommand(t *testing.T) {
	t.Parallel()
	_, err := Start(&Profile{Name: "x", Command: []string{"/nonexistent/llama-server"}}, nil, nil, logFile(t))
	if err == nil || !strings.Contains(err.Error(), "llama-server") {
		t.Fatalf("err %v", err)
	}
}

func writeProfile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profiles", name+".toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeProfile(t, dir, "good", `
url = "http://127.0.0.1:8080"
command = ["sh", "-c", "exit 0"]
load_timeout = "2m"
api_key_env = "LLAMA_KEY"
model_files = ["*.gguf"]
[env]
CUDA_VISIBLE_DEVICES = "0"
HF_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz"
[identity]
track = "default"
quantization = "IQ3_XXS"
build_options = ["GGML_CUDA=ON"]
`)
	writeProfile(t, dir, "typo", "url = \"http://127.0.0.1:8080\"\ncomand = [\"llama-server\"]\n[identity]\nquantisation = \"Q4\"\n")
	writeProfile(t, dir, "broken", "url = \"http://127.0.0.1:8080\ncommand = [")
	writeProfile(t, dir, "bad", `url = "http://10.0.0.5:8080"
command = ["no-such-engine-binary"]
load_timeout = "soon"
api_key_env = "sk-123 key"
[identity]
track = "fastest"
`)
	p, err := Load("good", dir)
	if err != nil || len(p.Check()) != 0 {
		t.Fatalf("good: %v %v", err, p.Check())
	}
	if d, _ := p.Timeout(); d != 2*time.Minute || *p.Identity.Quantization != "IQ3_XXS" || p.Identity.BuildOptions[0] != "GGML_CUDA=ON" {
		t.Errorf("good: %+v", p)
	}
	if s := fmt.Sprint(p.Sanitized()); strings.Contains(s, "hf_abc") || !strings.Contains(s, "LLAMA_KEY") {
		t.Errorf("sanitized profile %s", s)
	}
	if _, err := Load("typo", dir); err == nil || !strings.Contains(err.Error(), "comand") || !strings.Contains(err.Error(), "identity.quantisation") {
		t.Errorf("unknown keys: %v", err)
	}
	if _, err := Load("broken", dir); err == nil || !strings.Contains(err.Error(), "broken.toml") {
		t.Errorf("syntax error: %v", err)
	}
	bad, err := Load("bad", dir)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprint(bad.Check())
	for _, want := range []string{"not on loopback", "no-such-engine-binary", "load_timeout", "api_key_env", "fastest"} {
		if !strings.Contains(all, want) {
			t.Errorf("check lacks %q: %s", want, all)
		}
	}
	// The command's --port is where strata waits: a URL naming another port
	// would only time out. Where they agree, or the command names none, it
	// is not a problem.
	for _, c := range []struct {
		url     string
		command string
		wrong   bool
	}{
		{"http://127.0.0.1:18705", `["sh", "-c", "exit 0", "--port", "18706"]`, true},
		{"http://127.0.0.1:18705", `["sh", "-c", "exit 0", "--port=18706"]`, true},
		{"http://127.0.0.1", `["sh", "-c", "exit 0", "--port", "8080"]`, true},
		{"http://127.0.0.1:18705", `["sh", "-c", "exit 0", "--port", "18705"]`, false},
		{"http://127.0.0.1:80", `["sh", "-c", "exit 0", "--port=80"]`, false},
		{"http://127.0.0.1:18705", `["sh", "-c", "exit 0", "--port"]`, false},
		{"http://127.0.0.1:18705", `["sh", "-c", "exit 0"]`, false},
	} {
		writeProfile(t, dir, "ports", fmt.Sprintf("url = %q\ncommand = %s\n", c.url, c.command))
		p, err := Load("ports", dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(fmt.Sprint(p.Check()), "strata would wait at a port the engine never opens"); got != c.wrong {
			t.Errorf("url %s, command %s: port problem %v, want %v (%v)", c.url, c.command, got, c.wrong, p.Check())
		}
	}
	if _, err := Load("nope", dir); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Load("../etc", dir); err == nil {
		t.Error("a path is not a profile name")
	}
	names := map[string]bool{}
	for _, l := range List(dir) {
		names[l.Name] = l.Err == nil
	}
	if !names["simulator"] || !names["good"] || names["broken"] {
		t.Errorf("list %v", names)
	}
}

func TestCountServed(t *testing.T) {
	t.Parallel()
	dir := sharedpath.Path(t, "wire", "llama-server", "captures")
	fresh, _ := os.ReadFile(filepath.Join(dir, "get-metrics.resp.body"))
	after, _ := os.ReadFile(filepath.Join(dir, "get-metrics-after.resp.body"))
	idle, _ := os.ReadFile(filepath.Join(dir, "get-slots.resp.body"))
	busy, _ := os.ReadFile(filepath.Join(dir, "disconnect-then-slots.resp.body"))
	if s := CountServed(fresh, nil, idle); s.Answered == nil || *s.Answered != 0 {
		t.Errorf("a fresh llama-server answered none: %+v", s)
	}
	if s := CountServed(after, nil, busy); s.Answered != nil || !strings.Contains(s.Reason, "counts tokens, not requests") {
		t.Errorf("after requests: %+v", s)
	}
	if s := CountServed([]byte("strata_simulator:requests_total 7\n"), nil, nil); s.Answered == nil || *s.Answered != 7 {
		t.Errorf("a request counter: %+v", s)
	}
	if s := CountServed(nil, errors.New("404"), busy); s.Answered != nil || !strings.Contains(s.Reason, "/slots") {
		t.Errorf("slots only: %+v", s)
	}
	// In results.json: snake_case keys, and an unknown count null beside
	// its reason.
	for _, c := range []struct {
		s    contract.ServedBefore
		want string
	}{
		{CountServed(after, nil, busy), `"reason":"not freshly loaded: llama.cpp's /metrics counts tokens`},
		{CountServed(fresh, nil, idle), `"requests_answered":0,"metrics":{`},
	} {
		b, _ := json.Marshal(c.s)
		// A count the engine does not give is null (its reason is in missing
		// too); nothing else is.
		rest := strings.Replace(string(b), `"requests_answered":null`, "", 1)
		if !strings.Contains(string(b), c.want) || strings.Contains(rest, "null") || strings.ContainsAny(string(b[:3]), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Errorf("JSON %s, want %s", b, c.want)
		}
	}
	// Work shown without a count is said as it is: not freshly loaded.
	if got := derive.Served(CountServed(after, nil, busy)); !strings.HasPrefix(got, "not freshly loaded: ") || !strings.Contains(got, "at least one request") {
		t.Errorf("summary %q", got)
	}
	if got := derive.Served(CountServed([]byte("llamacpp:prompt_tokens_total 0\n"), nil, []byte(`[{"id":0,"id_task":7}]`))); !strings.HasPrefix(got, "not freshly loaded: /slots shows a finished task") {
		t.Errorf("summary of a finished task %q", got)
	}
	if got := derive.Served(CountServed(fresh, nil, idle)); got != "it had answered no request before this run" {
		t.Errorf("summary %q", got)
	}
}

// TestCountServedNumbers: /metrics values JSON cannot hold are left out
// with a reason (they once ended every run before the warm-up, when the
// journal could not encode them); a request counter that is not a count
// gives no count; zero work is no request answered, never "at least one".
func TestCountServedNumbers(t *testing.T) {
	t.Parallel()
	const zero = "llamacpp:prompt_tokens_total 0\nllamacpp:tokens_predicted_total 0\n"
	var nans strings.Builder
	for i := range 20 {
		fmt.Fprintf(&nans, "x_seconds{quantile=\"0.%d\"} NaN\n", i)
	}
	cases := []struct {
		name, metrics string
		answered      *int64
		says, ignored string // parts of the reason (or summary) and of the ignored list
	}{
		{"an empty summary's NaN quantile", "# TYPE x_seconds summary\nx_seconds{quantile=\"0.5\"} NaN\n" + zero, n64(0), "answered no request", `x_seconds{quantile="0.5"} NaN: not a finite number`},
		{"infinities", "a +Inf\nb -Inf\nc Inf\nd 1e999\n" + zero, n64(0), "answered no request", "b -Inf: not a finite number"},
		{"many NaNs are counted past the first 16", nans.String() + zero, n64(0), "answered no request", "4 more samples that are not finite numbers"},
		{"a NaN request counter", "requests_total NaN\n", nil, "no request or token counters", "requests_total NaN"},
		{"a request counter past int64", "requests_total 1e30\n", nil, "requests_total (1e+30) is not a count", ""},
		{"a negative request counter", "requests_total -5\n", nil, "requests_total (-5) is not a count", ""},
		{"a fractional request counter", "requests_total 2.5\n", nil, "requests_total (2.5) is not a count", ""},
		{"a request counter", "requests_total 3\n", n64(3), "answered 3 requests", ""},
		{"a negative token counter", "llamacpp:prompt_tokens_total -3\nllamacpp:tokens_predicted_total 0\n", nil, "llamacpp:prompt_tokens_total (-3) is not a count", ""},
		{"only the prompt counter, at 0", "llamacpp:prompt_tokens_total 0\n", n64(0), "it had answered no request before this run", ""},
		{"only the predicted counter, at 0", "llamacpp:tokens_predicted_total 0\n", nil, "whether it had answered one is unknown", ""},
		{"only the prompt counter, with work", "llamacpp:prompt_tokens_total 12\n", nil, "it had processed 12 prompt tokens before this run, so it had answered at least one request", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := CountServed([]byte(c.metrics), nil, nil)
			if (s.Answered == nil) != (c.answered == nil) || s.Answered != nil && *s.Answered != *c.answered {
				t.Errorf("answered %v, want %v", s.Answered, c.answered)
			}
			if !strings.Contains(derive.Served(s), c.says) {
				t.Errorf("summary %q, want %q", derive.Served(s), c.says)
			}
			if c.answered == nil && s.Reason == "" {
				t.Error("an unknown count without a reason")
			}
			if s.Answered != nil && *s.Answered == 0 && strings.Contains(derive.Served(s), "at least one") {
				t.Errorf("zero work is no answered request: %q", derive.Served(s))
			}
			if c.ignored != "" && !strings.Contains(strings.Join(s.Ignored, "\n"), c.ignored) {
				t.Errorf("ignored %q, want %q", s.Ignored, c.ignored)
			}
			if len(s.Ignored) > maxIgnored+1 {
				t.Errorf("%d ignored entries", len(s.Ignored))
			}
			// The journal and results.json hold it as JSON.
			b, err := json.Marshal(s)
			if err != nil || strings.Contains(string(b), "NaN") && c.ignored == "" {
				t.Errorf("JSON %s: %v", b, err)
			}
		})
	}
	// Zero counters with a finished task in /slots: the slot says it worked.
	if s := CountServed([]byte(zero), nil, []byte(`[{"id":0,"id_task":7}]`)); s.Answered != nil || !strings.Contains(s.Reason, "/slots shows a finished task") {
		t.Errorf("zero counters and a finished task: %+v", s)
	}
}

func n64(v int64) *int64 { return &v }

// TestProfileIdentityIsOneLine: a profile's revision, quantization,
// background or build option with a newline, a terminal escape or a
// bidirectional override is a problem of the profile, named by its key;
// track notes and a custom pack's description may span lines.
func TestProfileIdentityIsOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeProfile(t, dir, "lines", `url = "http://127.0.0.1:8080"
[identity]
model_revision = "abc\ndef"
quantization = "IQ3_XXS\r"
background = ["a browser", "\u001b[2J"]
build_options = ["GGML_CUDA=ON", "x\u202ey"]
track_notes = "line one\nline two"
custom_pack = "step one\nstep two"
`)
	p, err := Load("lines", dir)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprint(p.Check())
	for _, want := range []string{`identity.model_revision "abc\ndef" has the control or bidirectional character U+000A at byte 3`,
		`identity.quantization "IQ3_XXS\r"`, `identity.background "\x1b[2J"`, `identity.build_options "x\u202ey"`} {
		if !strings.Contains(all, want) {
			t.Errorf("check lacks %q: %s", want, all)
		}
	}
	if strings.Contains(all, "track_notes") || strings.Contains(all, "custom_pack") || strings.Contains(all, "a browser") {
		t.Errorf("prose or a one-line value was refused: %s", all)
	}
}

// TestProfileRulesSayTheResultsWords: a profile off loopback, or with a
// track that is not one of the protocol's, is refused with the sentence
// of the protocol's rule, the one a result or the run's flags say.
func TestProfileRulesSayTheResultsWords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeProfile(t, dir, "remote", "url = \"http://10.0.0.5:8080\"\n[identity]\ntrack = \"fastest\"\n")
	p, err := Load("remote", dir)
	if err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprint(p.Check())
	for _, want := range []string{
		`url "http://10.0.0.5:8080": the server (10.0.0.5) is not on loopback; standard latency is a loopback measurement`,
		`identity.track "fastest": expected "default" or "custom"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("check lacks %q: %s", want, all)
		}
	}
}
