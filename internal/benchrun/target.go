package benchrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/record"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/localproc"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
)

// Target says which server a command works against: exactly one of URL,
// Profile or Simulate.
type Target struct {
	URL, Profile, APIKeyEnv string
	Simulate, NoStart       bool
	// Protocol is the protocol's ID ("": the spec's inside a Strata
	// checkout, else the stand-in) and BundleDir a bundle folder given
	// with --bundle ("": the checkout's bench/prompts/standard-v1).
	Protocol, BundleDir string
	// EngineLog is the log file an engine already serving writes (bench run
	// --engine-log; "": none).
	EngineLog string
}

// bundle finds, verifies and loads the bundle of the target's protocol: a
// bundle that differs by one byte from its manifest or its protocol's
// corpus SHA-256 stops everything before anything is sent.
func (o Target) bundle(p session) (*fixtures.Bundle, error) {
	src := prompts.Sources{Table: p.Protocols, Workdir: p.Dir, Dir: p.Path(o.BundleDir)}
	def, err := src.Protocol(o.Protocol)
	if err != nil {
		return nil, exitcode.Usagef("--protocol: %v", err)
	}
	if err := prompts.EmbeddedFlag(o.BundleDir, def); err != nil {
		return nil, err
	}
	if err := src.FlagDir(o.BundleDir); err != nil {
		return nil, err
	}
	return src.Open(def)
}

func (o *Target) validate() error {
	targets := 0
	for _, set := range []bool{o.URL != "", o.Simulate, o.Profile != ""} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return exitcode.Usagef("give exactly one of --url URL, --profile NAME or --simulate")
	}
	if o.URL != "" {
		if _, err := engine.ServerURL(o.URL); err != nil {
			return exitcode.Usagef("--url %q: %w", o.URL, err)
		}
	}
	if o.Simulate {
		if o.EngineLog != "" {
			return exitcode.Usagef("--engine-log names the log file of an engine already serving; --simulate starts strata's own engine, whose output strata keeps")
		}
		o.Profile = engine.SimulatorName
	}
	return nil
}

// logFile checks the file --engine-log names, before any work: a regular
// file strata can read, within the bound of what it keeps.
func (o Target) logFile(p procstate.State) (*engine.LogFile, error) {
	if o.EngineLog == "" {
		return nil, nil
	}
	l, err := engine.OpenLogFile(p.Path(o.EngineLog))
	if err != nil {
		return nil, exitcode.Usagef("--engine-log: %v", err)
	}
	return l, nil
}

// loadProfile reads the profile, if any (the simulator's is built in).
func (o *Target) loadProfile(p session) (*engine.Profile, error) {
	switch o.Profile {
	case "":
		return nil, nil
	case engine.SimulatorName:
		if p.Executable == "" {
			return nil, fmt.Errorf("the simulator is this program, and its path is unknown")
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		// The simulator's stand-in model lives in strata's cache folder, not
		// a temporary one: a runner killed with SIGKILL leaves nothing behind,
		// and the unchanged file comes from the hash cache next time.
		prof := engine.Simulator(p.Executable, port, filepath.Join(p.CacheDir, "simulator"))
		if p.SimulatorSpeed > 1 {
			prof.Command = append(prof.Command, "--speed", strconv.FormatFloat(p.SimulatorSpeed, 'g', -1, 64))
		}
		return prof, nil
	}
	// The profile is input named on the command line: one that is not
	// there, or not usable, is bad usage (exit 2), said before any work.
	prof, err := engine.Load(o.Profile, p.Dir)
	if err != nil {
		return nil, exitcode.UsageError{Err: err}
	}
	if errs := prof.Check(); len(errs) > 0 {
		return nil, exitcode.Usagef("profile %s (%s) is not usable:\n  %s", prof.Name, prof.Path, joinErrs(errs))
	}
	if prof.Workdir == "" {
		// The engine starts in strata's working folder; saying so makes the
		// engine's relative paths resolvable.
		prof.Workdir = p.Dir
	}
	return prof, nil
}

// target is a server a command works against, and the engine process if
// this command started it.
type target struct {
	client  *client.Client
	baseURL string
	apiKey  string
	// keyFrom names where the key came from ("--api-key-env NAME", or the
	// profile's api_key_env), for the error when the server refuses it.
	keyFrom string
	prof    *engine.Profile
	proc    *engine.Child
	served  *contract.ServedBefore
	environ []string
	stopped bool
	p       session
	// engineLog is --engine-log's file ("": none given).
	engineLog string
	// logDir is where the output of an engine the runner starts goes until
	// the run's pending folder takes it ("": the system's temporary
	// folder), and log that file (nil: no engine was started).
	logDir string
	log    *os.File
	// adopted is set once the pending folder holds the log: the journal's
	// removal removes it.
	adopted bool
}

// connect makes sure an engine serves at the target's URL: one already
// serving is used and left running; otherwise the profile's engine is
// started (unless NoStart), and hashes, when set, hashes the model files
// while it loads.
func connect(ctx context.Context, p session, o Target, prof *engine.Profile, bundle *fixtures.Bundle, hashes *prehash, logDir string) (*target, error) {
	t := &target{baseURL: o.URL, prof: prof, p: p, environ: p.Environment(), engineLog: o.EngineLog, logDir: logDir}
	keyEnv, from := o.APIKeyEnv, "--api-key-env"
	if prof != nil {
		t.baseURL = prof.URL
		if keyEnv == "" {
			keyEnv, from = prof.APIKeyEnv, fmt.Sprintf("profile %s api_key_env", prof.Name)
		}
	}
	if keyEnv != "" {
		if t.apiKey = p.Getenv(keyEnv); t.apiKey == "" {
			return nil, exitcode.Usagef("api key variable %s is empty or unset", keyEnv)
		}
		// The key is redacted from everything the run writes, in every form
		// it may be echoed in; a key that is short, a word or made of the
		// words every result holds would be found in honest evidence too.
		// Refused before anything is sent.
		if err := result.CheckKey(t.apiKey, bundle, nil); err != nil {
			return nil, exitcode.Usagef("%s %s: %v", from, keyEnv, err)
		}
		if p.Keys != nil {
			p.Keys.Add(t.apiKey)
		}
		t.keyFrom = from + " " + keyEnv
	}
	t.client = client.New(client.Options{BaseURL: t.baseURL, APIKey: t.apiKey, Now: p.Clock})
	var err error
	t.served, t.proc, err = t.engineUp(ctx, o.NoStart, hashes)
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// redactor is the redactor of what the command writes of this target's
// run: the machine's private data and the key in use.
func (t *target) redactor(p session, bundle *fixtures.Bundle) *redact.Redactor {
	m := p.Private()
	if t.apiKey != "" {
		m.Secrets = append(append([]string(nil), m.Secrets...), t.apiKey)
	}
	return result.Redactor(m, bundle)
}

// stop ends the engine this command started (once).
func (t *target) stop() {
	if t.proc != nil && !t.stopped {
		t.stopped = true
		if err := t.proc.Stop(10*time.Second, t.p.StopNow); err != nil {
			t.p.out.Line("warning: %v", err)
		}
	}
}

// close stops the engine this command started and removes its output's
// file unless a pending folder took it.
func (t *target) close() {
	t.stop()
	if t.log == nil {
		return
	}
	// The engine has exited: nothing writes the file any more, and a
	// failed close loses nothing that was read.
	_ = t.log.Close()
	if !t.adopted {
		if err := os.Remove(t.log.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.p.out.Line("warning: the engine's output %s was not removed: %v", t.log.Name(), err)
		}
	}
}

// adoptLog moves the output of the engine this command started into the
// run's pending folder (dir), where the engine goes on writing it and
// where `bench recover` finds what it wrote up to a kill.
func (t *target) adoptLog(dir string) error {
	if t.log == nil {
		return nil
	}
	if err := os.Rename(t.log.Name(), filepath.Join(dir, contract.EngineLog)); err != nil {
		return fmt.Errorf("move the engine's output into the run's pending folder: %w", err)
	}
	t.adopted = true
	return nil
}

// group is the process group of the engine the runner started, or 0.
func (t *target) group() int {
	if t.proc == nil {
		return 0
	}
	return t.proc.Group()
}

// engineView is what the runner can see of the engine process: the command
// and environment it started, or the local process listening on the URL's
// port (Linux /proc), or nothing.
func (t *target) engineView(p session) (record.EngineView, *localproc.Process) {
	if t.proc != nil {
		environ := append([]string{}, t.environ...)
		for k, v := range t.prof.Env {
			environ = append(environ, k+"="+v)
		}
		return record.EngineView{Args: append([]string{}, t.prof.Command[1:]...), Env: environ,
			Where: "the command line and environment of the engine the runner started"}, nil
	}
	u, err := url.Parse(t.baseURL)
	if err != nil || !protocol.IsLoopback(u.Hostname()) || p.Root == nil {
		return record.EngineView{}, nil
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	lp, err := localproc.Listening(p.Root, port)
	if err != nil {
		return record.EngineView{}, nil
	}
	v := record.EngineView{Args: lp.Args, Env: lp.Env,
		Where: fmt.Sprintf("the command line and environment of process %d, which listens on port %d (/proc)", lp.PID, port)}
	if lp.EnvErr != nil {
		v.EnvUnreadable = lp.EnvErr.Error()
	}
	return v, lp
}

// engineInfo is extensions.engine: where the engine is and who started it.
func engineInfo(t *target, prof *engine.Profile, view record.EngineView, lp *localproc.Process) *contract.Engine {
	info := &contract.Engine{URL: "loopback", StartedByRunner: t.proc != nil, ServedBeforeRun: t.served}
	if prof != nil {
		info.Profile = prof.Name
	}
	if lp != nil {
		info.LocalProcess = &contract.LocalProcess{FoundBy: view.Where, Program: filepath.Base(lp.Program)}
	}
	return info
}

func joinErrs(errs []error) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n  ")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer func() { _ = ln.Close() }() // only its port number was wanted
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// engineUp makes sure an engine serves at the client's URL.
func (t *target) engineUp(ctx context.Context, noStart bool, hashes *prehash) (*contract.ServedBefore, *engine.Child, error) {
	c, prof, out := t.client, t.prof, t.p.out
	health := func(ctx context.Context) (int, error) {
		s, _, err := ready(ctx, c)
		return s, err
	}
	status, route, err := ready(ctx, c)
	if err == nil {
		if status == 401 || status == 403 {
			return nil, nil, t.keyError([]string{fmt.Sprintf("GET %s answered HTTP %d", route, status)})
		}
		if status != 200 && status != 503 {
			// The port is taken only for an engine strata would start there;
			// a --url names a server the user runs.
			taken := ""
			if prof != nil {
				taken = fmt.Sprintf(": the port is taken, and profile %s's engine cannot listen there", prof.Name)
			}
			return nil, nil, fmt.Errorf("something that is not an inference engine answers at %s (%s: HTTP %d, and no route of an engine without /health answers)%s", c.BaseURL(), route, status, taken)
		}
		if status == 503 {
			out.Line("the engine at %s is loading; waiting", c.BaseURL())
			err := waitHealthy(ctx, c, t.p.Clock, loadTimeout(prof), t.loadingStatus(loadTimeout(prof), nil))
			t.p.clearStatus()
			if err != nil {
				return nil, nil, err
			}
		}
		_, metrics, merr := c.Get(ctx, contract.ReqMetrics, 5*time.Second)
		_, slots, _ := c.Get(ctx, "/slots", 5*time.Second)
		sb := engine.CountServed(metrics, merr, slots)
		out.Line("using the engine already serving at %s (left running; %s)", c.BaseURL(), derive.Served(sb))
		return &sb, nil, nil
	}
	if prof == nil {
		return nil, nil, fmt.Errorf("the server at %s does not answer: %w", c.BaseURL(), err)
	}
	if noStart {
		return nil, nil, fmt.Errorf("nothing serves at %s, and --no-start forbids starting profile %s's engine", c.BaseURL(), prof.Name)
	}
	if len(prof.Command) == 0 {
		return nil, nil, fmt.Errorf("nothing serves at %s, and profile %s has no command to start one", c.BaseURL(), prof.Name)
	}
	if t.engineLog != "" {
		return nil, nil, exitcode.Usagef("--engine-log names the log file of an engine already serving, but nothing serves at %s: strata would start profile %s's engine and keep its output itself; leave out --engine-log, or start the server first", c.BaseURL(), prof.Name)
	}
	out.Line("starting the %s engine: %s", prof.Name, escape.Line(strings.Join(prof.Command, " ")))
	// The nearest folder of the result location that exists is on the file
	// system the pending folder will be made on, so the file can move there.
	dir := ""
	if t.logDir != "" {
		dir, _ = existing(t.logDir)
	}
	if t.log, err = os.CreateTemp(dir, ".strata-engine-*.log"); err != nil {
		return nil, nil, fmt.Errorf("create a file for the engine's output: %w", err)
	}
	proc, err := engine.Start(prof, t.environ, t.p.Clock, t.log)
	if err != nil {
		return nil, nil, err
	}
	// The engine reads the model files while it loads; hashing them now
	// takes that time off the user's wait (both read the same files, and
	// the page cache serves the second reader).
	hashes.start(ctx)
	loadStart := t.p.Clock()
	limit := loadTimeout(prof)
	err = proc.WaitReady(ctx, health, limit, t.loadingStatus(limit, hashes))
	t.p.clearStatus() // the load is over: its line goes
	if err != nil {
		if serr := proc.Stop(5*time.Second, nil); serr != nil {
			out.Line("warning: %v", serr)
		}
		if ctx.Err() != nil {
			// A signal during the load: no request was sent, nothing to write.
			return nil, nil, exitcode.InterruptedError{Msg: fmt.Sprintf("interrupted (%s) while profile %s's engine loaded; it was stopped, and no request was sent",
				runner.Interruption(ctx), prof.Name)}
		}
		return nil, nil, fmt.Errorf("profile %s: %w", prof.Name, err)
	}
	hashes.loaded(t.p.Clock().Sub(loadStart))
	out.Line("the engine is ready")
	return nil, proc, nil
}

// loadingStatus shows an engine's load: on a terminal a status line that
// counts up against the load timeout (and shows the model files hashing
// beside it), elsewhere one line per change of state.
func (t *target) loadingStatus(limit time.Duration, h *prehash) func(string, time.Duration) {
	last := ""
	return func(state string, el time.Duration) {
		if t.p.scr != nil && t.p.scr.Live() {
			line := fmt.Sprintf("engine %s · %s of %s load timeout", state, clockText(el.Seconds()), clockText(limit.Seconds()))
			if h != nil {
				if done, total := h.progress(); total > 0 {
					line += fmt.Sprintf(" · hashing %.0f%%", 100*float64(done)/float64(total))
				}
			}
			t.p.scr.Status(line)
			return
		}
		if state != last {
			t.p.out.Line("  %s after %s", state, clockText(el.Seconds()))
			last = state
		}
	}
}

func loadTimeout(p *engine.Profile) time.Duration {
	if p == nil {
		return engine.DefaultLoadTimeout
	}
	d, err := p.Timeout()
	if err != nil {
		return engine.DefaultLoadTimeout
	}
	return d
}

// ready asks the server whether it is ready: /health, or, for an engine
// that serves none, the route that is its readiness (dialect.AskReady).
// Strata's server answers /health 200 with loaded false while its engine
// starts, and 503 on /props until the engine runs (serve/server.py
// @452325a9 /health, Handler._props; an engine unloaded on purpose still
// answers /props): both together are still loading.
func ready(ctx context.Context, c *client.Client) (int, string, error) {
	return dialect.AskReady(func(path string) (int, error) {
		s, body, err := c.Get(ctx, path, 2*time.Second)
		if err == nil && s == 200 && path == dialect.HealthRoute && dialect.StrataStarting(body) {
			if ps, _, perr := c.Get(ctx, dialect.PropsRoute, 2*time.Second); perr == nil && ps == 503 {
				return 503, nil
			}
		}
		return s, err
	})
}

// waitHealthy polls the server's readiness until it answers 200.
func waitHealthy(ctx context.Context, c *client.Client, now clock.Func, limit time.Duration, show func(string, time.Duration)) error {
	start := now()
	deadline := start.Add(limit)
	for {
		status, route, err := ready(ctx, c)
		if err == nil && status == 200 {
			return nil
		}
		state := "waiting for the server to answer"
		if err == nil {
			state = fmt.Sprintf("loading (%s answers %d)", route, status)
		}
		show(state, now().Sub(start))
		if now().After(deadline) {
			return fmt.Errorf("the engine did not become healthy within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func displayLine(s string) string { return escape.Line(s) }

// checkKey stops a run, before anything is sent but the probes, whose
// server refused them for want of an API key (or refused the key sent):
// the run would otherwise go on as "an unknown engine" and fail every
// request. The key itself is never printed.
func (t *target) checkKey(srv record.Server, bundle *fixtures.Bundle) error {
	if err := t.keyError(srv.Refused); err != nil {
		return err
	}
	if t.apiKey == "" {
		return nil
	}
	if err := result.CheckKey(t.apiKey, bundle, &srv); err != nil {
		return exitcode.Usagef("%s: %v", t.keyFrom, err)
	}
	return nil
}

// keyError is the error for probes a server refused (nil when none was).
func (t *target) keyError(refused []string) error {
	if len(refused) == 0 {
		return nil
	}
	what := strings.Join(refused, ", ")
	if t.apiKey == "" {
		return exitcode.Usagef("the server needs an API key (%s): put the key in an environment variable and pass its name with --api-key-env NAME (or api_key_env in the profile)", what)
	}
	return exitcode.Usagef("the server refused the API key from %s (%s): check that the variable holds this server's key", t.keyFrom, what)
}
