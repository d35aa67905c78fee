//go:build linux

// Package realengine starts the real llama-server of
// ../shared/engines/llama.cpp (upstream llama.cpp b10470, CPU) with one of
// its tiny Qwen3 models, on a free loopback port, for tests. The simulator is
// strata's model of an engine; this is an engine. When the package is
// missing, a test skips locally and fails under CI=true.
package realengine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/sharedpath"
)

// The models the tests start (see the package's README for what each of
// its three answers).
const (
	// Thinker writes "<think>Checking records</think>\n\nREADY" and stops.
	Thinker = "tiny-qwen3-thinker.gguf"
	// Scripted calls lookup_record {"id": "A-17"} when that tool is offered,
	// and without it writes until it is stopped.
	Scripted = "tiny-qwen3-scripted.gguf"
)

// Dir is the engine package: ../shared/engines/llama.cpp.
func Dir(tb testing.TB) string {
	tb.Helper()
	return enginePackage(tb, "llama.cpp", "llama-server")
}

// enginePackage is ../shared/engines/<name>, whose bin/<program> a test
// runs. When it is missing a test skips locally and fails under CI=true.
func enginePackage(tb testing.TB, name, program string) string {
	tb.Helper()
	d := sharedpath.Path(tb, "engines", name)
	if _, err := os.Stat(filepath.Join(d, "bin", program)); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("the real %s is missing (%v); CI needs ../shared/engines/%s", program, err, name)
		}
		tb.Skipf("the real %s is not here (%v): skipping the real-engine test", program, err)
	}
	return d
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns an executable llama-server. The package may be laid out
// read-only without the run bit; then a copy in a temporary folder is made
// executable (once per test binary).
func Binary(tb testing.TB) string {
	tb.Helper()
	src := filepath.Join(Dir(tb), "bin", "llama-server")
	binOnce.Do(func() {
		if st, err := os.Stat(src); err == nil && st.Mode()&0o111 != 0 {
			binPath = src
			return
		}
		dir, err := os.MkdirTemp("", "strata-llama-server-")
		if err != nil {
			binErr = err
			return
		}
		data, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "llama-server"), data, 0o755)
		}
		binPath, binErr = filepath.Join(dir, "llama-server"), err
	})
	if binErr != nil {
		tb.Fatalf("make llama-server executable: %v", binErr)
	}
	return binPath
}

// Model returns the absolute path of a model.
func Model(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(Dir(tb), "models", name)
}

// Options shape a server.
type Options struct {
	Model string // a model name (Thinker, ...) or a path
	// Slots and Context are -np and -c (defaults 1 and 20480).
	Slots, Context int
	// Args are added to the command line (e.g. --reasoning-budget 0).
	Args []string
	// Dir is the working folder ("" the model's folder).
	Dir string
	// RelativeModel passes -m relative to Dir, as a user who started the
	// server in the models folder would.
	RelativeModel bool
	// Env is added to the server's environment (e.g. LLAMA_ARG_BATCH=1024).
	Env []string
}

// Server is a running llama-server.
type Server struct {
	URL  string
	Port int
	*process
}

// Command is the command line Start would run for o on port (for a profile
// that starts the engine itself).
func Command(tb testing.TB, o Options, port int) []string {
	tb.Helper()
	model := o.Model
	if !filepath.IsAbs(model) {
		model = Model(tb, model)
	}
	if o.RelativeModel {
		dir := o.Dir
		if dir == "" {
			dir = filepath.Dir(model)
		}
		rel, err := filepath.Rel(dir, model)
		if err != nil {
			tb.Fatal(err)
		}
		model = rel
	}
	slots, ctx := o.Slots, o.Context
	if slots == 0 {
		slots = 1
	}
	if ctx == 0 {
		ctx = 20480
	}
	args := []string{Binary(tb), "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port),
		"-c", fmt.Sprint(ctx), "--jinja", "--reasoning-format", "deepseek", "-np", fmt.Sprint(slots),
		"--metrics", "--slots", "-t", "1",
		// Threads sleep, not spin, between tasks: the suite runs beside
		// other tests on the same cores.
		"--poll", "0"}
	return append(args, o.Args...)
}

// FreePort returns a free loopback port.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // only its port number was wanted
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts a server and waits until /health answers 200. It is killed
// when the test ends.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	port := FreePort(tb)
	argv := Command(tb, o, port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = o.Dir
	if o.Env != nil {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	if cmd.Dir == "" {
		cmd.Dir = filepath.Dir(Model(tb, Thinker))
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port}
	s.process = startProcess(tb, cmd, s.URL+"/health", nil)
	return s
}

// process is an engine a test started, in its own process group: its
// command, what it printed so far (and where else it goes), and when it
// ended.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	tee  io.Writer
	done chan struct{}
}

// startProcess starts cmd and waits until GET ready answers 200; what it
// prints is kept, and written to tee too unless tee is nil (an engine
// without a log file of its own). It is killed when the test ends.
func startProcess(tb testing.TB, cmd *exec.Cmd, ready string, tee io.Writer) *process {
	tb.Helper()
	p := &process{cmd: cmd, tee: tee, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	name := filepath.Base(cmd.Path)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	tb.Cleanup(p.Kill)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.waitReady(ctx, ready); err != nil {
		p.Kill()
		tb.Fatalf("%s did not become ready: %v\n%s", name, err, p.Log())
	}
	return p
}

// Write keeps what the process prints, and writes it to tee.
func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tee != nil {
		if _, err := p.tee.Write(b); err != nil {
			return 0, err
		}
	}
	return p.log.Write(b)
}

// Log is what the process printed so far.
func (p *process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *process) waitReady(ctx context.Context, url string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			// Only the status is read; the body is drained so the connection
			// is reused, and an error there changes nothing the wait reads.
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("the process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Kill ends the process at once (SIGKILL to its process group, so an
// engine's helpers too) and waits.
func (p *process) Kill() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}
