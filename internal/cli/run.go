package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/display"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/journal"
	"github.com/strata-bench/strata/internal/localproc"
	"github.com/strata-bench/strata/internal/modelfiles"
	"github.com/strata-bench/strata/internal/preflight"
	"github.com/strata-bench/strata/internal/probe"
	"github.com/strata-bench/strata/internal/provenance"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
)

// runOptions are bench run's flags.
type runOptions struct {
	url, apiKeyEnv, resultsDir  string
	profile                     string
	simulate, optional          bool
	noStart, rehash             bool
	track, trackNotes           string
	modelRev, sourceRev, tokRev string
	quant, customPack           string
	background, buildOptions    []string
	// Refused: they would change the workload.
	concurrency, repeat, requestTimeout string
}

func newRun(env Env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run (--url URL | --profile NAME | --simulate) [flags]",
		Short: "Run the standard benchmark protocol against a server and write a result folder",
		Long: `Run the protocol: a warm-up, then the performance stage (short, prompt-4k and
prompt-16k in each of 3 repetitions), then the twelve sanity checks, and with
--optional-concurrency three rounds of four short requests released together.
Every request carries the profile's exact settings; nothing about the workload
can be changed (--concurrency, --repeat and --request-timeout are refused).

The fixtures are the bundle embedded in this binary, checked byte for byte
against its manifest before anything is sent. The result folder goes to
bench/results/<UTC-date>-standard-<gpu>-<run-id>/ when the current folder has
bench/results, otherwise to ./bench-results/; that folder is checked (a
writable directory with room) before anything is sent.

Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped SSH session) end the
run the same way: the request in flight fails, the rest are skipped, the result
is written and names the signal, and strata exits 130. A second signal cuts the
request in flight at once and stops the engine without its grace period; the
result is still written. While the run goes, every finished request is synced
to a journal beside the result folder; if strata is killed (SIGKILL, out of
memory, a power loss), "strata bench recover" turns that journal into a partial
result. An engine the runner started never outlives it (on Linux the kernel
kills it when strata dies).

Options that describe what the engine cannot tell the runner (--track,
--track-notes, --model-revision, --source-revision, --tokenizer-revision,
--quantization, --custom-pack, --background, --build-options) are recorded as
given; an unset one is null with a reason. The runner never guesses them.

With --profile the runner starts that profile's engine (its own process group,
output captured as the engine log), waits for /health to answer 200, runs, and
stops only the engine it started. An engine already serving at the profile's
URL is used and left running, and the result records that it was not freshly
loaded. --no-start forbids starting. Before the warm-up the runner probes the
machine and hashes the model files (the server's model_path, every shard, the
files in the engine's arguments and the profile's model_files), reusing cached
hashes of unchanged files unless --rehash.

--simulate is the built-in profile "simulator": strata's simulated engine (no
GPU needed), started and stopped like a real one. Such a result is always
nonconforming: its numbers are synthetic.`,
		Example: `  strata bench run --simulate
  strata bench run --profile llama-3060 --track default --track-notes "0.2.1 release, setup defaults"
  strata bench run --url http://127.0.0.1:8080`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "base URL of a server that is already running (loopback for a standard result)")
	f.BoolVar(&o.simulate, "simulate", false, "run against strata's simulated engine: the built-in profile \"simulator\" (results are synthetic and nonconforming)")
	f.StringVar(&o.profile, "profile", "", "engine profile: NAME (./profiles/NAME.toml, then the user config folder's strata/profiles/NAME.toml) or a path to a .toml file")
	f.BoolVar(&o.noStart, "no-start", false, "never start an engine: use the one serving at the profile's URL or fail")
	f.BoolVar(&o.rehash, "rehash", false, "hash every model file again instead of trusting the hash cache")
	f.BoolVar(&o.optional, "optional-concurrency", false, "add the optional concurrency stage (3 rounds of 4 requests)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "name of an environment variable holding the server's API key (sent as a bearer token, never recorded)")
	f.StringVar(&o.resultsDir, "results-dir", "", "folder to write the result folder into (default: bench/results or ./bench-results)")
	f.StringVar(&o.track, "track", "custom", `configuration track: "default" (an unmodified release's setup) or "custom"`)
	f.StringVar(&o.trackNotes, "track-notes", "", "setup choices (default track) or modifications (custom track)")
	f.StringVar(&o.modelRev, "model-revision", "", "the quantization repository's immutable revision")
	f.StringVar(&o.sourceRev, "source-revision", "", "the source model's revision")
	f.StringVar(&o.tokRev, "tokenizer-revision", "", "the tokenizer's revision")
	f.StringVar(&o.quant, "quantization", "", "the quantization (e.g. IQ3_XXS, NVFP4)")
	f.StringVar(&o.customPack, "custom-pack", "", "description or reference of a custom pack preparation or expert profile")
	f.StringArrayVar(&o.background, "background", nil, "a background workload on the machine (repeatable)")
	f.StringArrayVar(&o.buildOptions, "build-options", nil, "build options of a source build (repeatable, or comma-separated)")
	for _, name := range []struct {
		flag string
		v    *string
	}{{"concurrency", &o.concurrency}, {"repeat", &o.repeat}, {"request-timeout", &o.requestTimeout}} {
		f.StringVar(name.v, name.flag, "", "refused: it would change the workload")
		_ = f.MarkHidden(name.flag)
	}
	return cmd
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func runBench(ctx context.Context, cmd *cobra.Command, env Env, o runOptions) error {
	for _, name := range []string{"concurrency", "repeat", "request-timeout"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s is refused: it would change the workload, and the protocol's workload is fixed (a different workload is a different protocol ID)", name)
		}
	}
	to := targetOptions{url: o.url, profile: o.profile, simulate: o.simulate, noStart: o.noStart, apiKeyEnv: o.apiKeyEnv}
	if err := to.validate(); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	// Where the result goes is checked before anything else: a run whose
	// folder cannot be written is not started.
	root := result.ResultsRoot(env.Dir)
	if o.resultsDir != "" {
		root = env.Path(o.resultsDir)
	}
	if err := checkResultsRoot(root, o.resultsDir != ""); err != nil {
		return err
	}
	for _, p := range journal.Pending(root) {
		fmt.Fprintf(stderr, "note: %s holds the journal of a run that did not finish; `strata bench recover` turns it into a partial result\n", p)
	}
	prof, cleanup, err := to.loadProfile(env)
	if err != nil {
		return err
	}
	defer cleanup()
	id, err := identity(cmd, o, prof)
	if err != nil {
		return err
	}
	id.Command = commandLine(cmd)
	// The fixtures are checked before anything is sent.
	bundle, err := prompts.Bundle()
	if err != nil {
		return fmt.Errorf("refusing to run: %w", err)
	}
	t, err := connect(ctx, env, to, prof, stderr)
	if err != nil {
		return err
	}
	defer t.stop()
	srv := runner.ProbeServer(ctx, t.client)
	view, lp := t.engineView(env)
	fmt.Fprintf(stderr, "engine: %s (%s)\n", srv.Dialect.Name(), display.Line(srv.Dialect.IdentifiedBy))

	// Provenance first: probing the machine and hashing the model files
	// come before the warm-up and outside required_duration_s.
	facts := gatherFacts(ctx, t, srv, view, lp, o.rehash, env, stderr)
	facts.Engine = view
	budget := srv.Dialect.CheckBudget(view)
	switch {
	case budget.Nonconforming != "":
		fmt.Fprintf(stderr, "warning: the run will be nonconforming: %s\n", budget.Nonconforming)
	case budget.State == "not verifiable":
		fmt.Fprintf(stderr, "note: the reasoning budget is not verifiable: %s\n", budget.Detail)
	}

	// Preflight: the engine's own template and tokenizer against the bundle.
	pf, err := preflightCheck(ctx, t.client, srv, bundle, nil)
	if err != nil {
		return err
	}
	facts.Extensions["preflight"] = pf
	reportPreflight(stderr, pf, false)
	facts.Extensions["engine"] = engineInfo(t, prof, view, lp)
	if prof != nil {
		facts.EngineConfig = map[string]any{"profile": prof.Sanitized()}
		if t.proc != nil {
			facts.EngineConfig["started_command"] = prof.Command
		}
	}

	m := redact.Local(env.Getenv)
	if t.apiKey != "" {
		m.Secrets = append(m.Secrets, t.apiKey)
	}
	red := result.Redactor(m, bundle)
	// The journal: each request's record on disk before the next is sent,
	// so even a killed runner leaves its work recoverable.
	started := time.Now().UTC()
	runID := runner.NewID(started)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", root, err)
	}
	jw, err := journal.Create(root, journal.Header{RunID: runID, Folder: result.FolderName(started, facts.Hardware, runID), StartedAt: started,
		Optional: o.optional, Identity: id, Facts: facts, Server: srv, Nonconforming: runner.StartReasons(t.baseURL, srv), EngineGroup: t.group()}, red)
	if err != nil {
		return err
	}
	defer jw.Close()

	progress := newProgress(stderr)
	rec := runner.Run(ctx, runner.Config{Client: t.client, Bundle: bundle, Optional: o.optional, Progress: progress, Server: &srv,
		Journal: jw, ID: runID, StartedAt: started})
	progress.finish()
	if err := jw.Err(); err != nil {
		fmt.Fprintf(stderr, "warning: the run's journal could not be kept (%v); the result is written from memory\n", err)
	}
	t.stop()
	if t.proc != nil {
		facts.EngineLog = t.proc.Log()
	}
	maxShared := map[string]int{}
	for rid, f := range bundle.Fixtures {
		maxShared[rid] = f.MaxSharedPrefixTokens
	}
	a, err := result.Assemble(rec, id, facts, maxShared, red)
	if err != nil {
		return fmt.Errorf("assemble the result (its journal stays in %s; `strata bench recover` retries): %w", jw.Dir(), err)
	}
	dir, err := result.Write(root, a, red)
	if err != nil {
		return fmt.Errorf("%w (the run's journal stays in %s; `strata bench recover` writes the result from it)", err, jw.Dir())
	}
	if err := jw.Remove(); err != nil {
		fmt.Fprintf(stderr, "warning: the pending folder %s was not removed: %v\n", jw.Dir(), err)
	}
	w := cmd.OutOrStdout()
	r := &a.Results
	fmt.Fprintf(w, "result: %s\n", dir)
	fmt.Fprintf(w, "status: %s; sanity %d/%d; requests %d\n", r.Run.Status, r.Quality.Passed, r.Quality.Total, len(r.Requests))
	if ctx.Err() != nil {
		return interrupted{fmt.Sprintf("the run was interrupted (%s); the partial result above was written", runner.Interruption(ctx))}
	}
	return nil
}

// engineInfo is extensions.engine: where the engine is and who started it.
func engineInfo(t *target, prof *engine.Profile, view dialect.EngineView, lp *localproc.Process) map[string]any {
	info := map[string]any{"url": "loopback", "started_by_runner": t.proc != nil}
	if prof != nil {
		info["profile"] = prof.Name
	}
	if lp != nil {
		info["local_process"] = map[string]any{"found_by": view.Where, "program": filepath.Base(lp.Program)}
	}
	if t.served != nil {
		info["served_before_run"] = t.served
	}
	return info
}

// checkResultsRoot makes sure a result can be written under root before
// any work is spent: root (or, when it does not exist yet, its nearest
// existing parent) is a writable folder with room for the evidence. A bad
// --results-dir is a usage error.
func checkResultsRoot(root string, flag bool) error {
	name := root
	if flag {
		name = "--results-dir " + root
	}
	dir := root
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				if flag {
					return usagef("%s: %s is a file, not a folder for results", name, dir)
				}
				return fmt.Errorf("%s: %s is a file, not a folder for results", name, dir)
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("%s: no folder of it exists", name)
		}
		dir = parent
	}
	probe, err := os.CreateTemp(dir, ".strata-write-check-")
	if err != nil {
		return fmt.Errorf("%s: %s is not writable: %w", name, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	if free, ok := freeBytes(dir); ok && free < minFreeBytes {
		return fmt.Errorf("%s: only %d MiB free on the file system of %s; a result needs up to %d MiB", name, free>>20, dir, minFreeBytes>>20)
	}
	return nil
}

// minFreeBytes is the room a result folder may need: its journal and its
// files (a normal run writes about 1 MiB; outputs.jsonl is bounded at 512
// MiB, but a bounded request fails long before).
const minFreeBytes = 64 << 20

// targetOptions say which server a command works against.
type targetOptions struct {
	url, profile, apiKeyEnv string
	simulate, noStart       bool
}

func (o *targetOptions) validate() error {
	targets := 0
	for _, set := range []bool{o.url != "", o.simulate, o.profile != ""} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return usagef("give exactly one of --url URL, --profile NAME or --simulate")
	}
	if o.url != "" {
		u, err := url.Parse(o.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("--url %q: expected http://HOST:PORT", o.url)
		}
	}
	if o.simulate {
		o.profile = engine.SimulatorName
	}
	return nil
}

// loadProfile reads the profile, if any (the simulator's is built in, with
// a temporary model folder that cleanup removes).
func (o *targetOptions) loadProfile(env Env) (*engine.Profile, func(), error) {
	nothing := func() {}
	switch o.profile {
	case "":
		return nil, nothing, nil
	case engine.SimulatorName:
		exe, _ := os.Executable()
		port, err := freePort()
		if err != nil {
			return nil, nothing, err
		}
		// The simulator's stand-in model lives in strata's cache folder, not
		// a temporary one: a runner killed with SIGKILL leaves nothing behind,
		// and the unchanged file comes from the hash cache next time.
		modelDir, err := env.cacheDir()
		if err != nil {
			return nil, nothing, err
		}
		return engine.Simulator(exe, port, filepath.Join(modelDir, "simulator")), nothing, nil
	}
	prof, err := engine.Load(o.profile, env.Dir)
	if err != nil {
		return nil, nothing, err
	}
	if errs := prof.Check(); len(errs) > 0 {
		return nil, nothing, fmt.Errorf("profile %s (%s) is not usable:\n  %s", prof.Name, prof.Path, joinErrs(errs))
	}
	if prof.Workdir == "" {
		// The engine starts in strata's working folder; saying so makes the
		// engine's relative paths resolvable.
		prof.Workdir = env.Dir
	}
	return prof, nothing, nil
}

// target is a server a command works against, and the engine process if
// this command started it.
type target struct {
	client  *client.Client
	baseURL string
	apiKey  string
	prof    *engine.Profile
	proc    *engine.Process
	served  *engine.ServedBefore
	environ []string
	stopped bool
	stderr  io.Writer
	stopNow <-chan struct{}
}

// connect makes sure an engine serves at the target's URL: one already
// serving is used and left running; otherwise the profile's engine is
// started (unless --no-start).
func connect(ctx context.Context, env Env, o targetOptions, prof *engine.Profile, stderr io.Writer) (*target, error) {
	t := &target{baseURL: o.url, prof: prof, stderr: stderr, stopNow: env.stopNow}
	keyEnv := o.apiKeyEnv
	if prof != nil {
		t.baseURL = prof.URL
		if keyEnv == "" {
			keyEnv = prof.APIKeyEnv
		}
	}
	if keyEnv != "" {
		if t.apiKey = env.Getenv(keyEnv); t.apiKey == "" {
			return nil, usagef("api key variable %s is empty or unset", keyEnv)
		}
	}
	t.client = client.New(client.Options{BaseURL: t.baseURL, APIKey: t.apiKey})
	t.environ = env.environ()
	var err error
	t.served, t.proc, err = engineUp(ctx, t.client, prof, o.noStart, t.environ, stderr)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// stop ends the engine this command started (once).
func (t *target) stop() {
	if t.proc != nil && !t.stopped {
		t.stopped = true
		if err := t.proc.Stop(10*time.Second, t.stopNow); err != nil {
			fmt.Fprintf(t.stderr, "warning: %v\n", err)
		}
	}
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
func (t *target) engineView(env Env) (dialect.EngineView, *localproc.Process) {
	if t.proc != nil {
		environ := append([]string{}, t.environ...)
		for k, v := range t.prof.Env {
			environ = append(environ, k+"="+v)
		}
		return dialect.EngineView{Args: append([]string{}, t.prof.Command[1:]...), Env: environ,
			Where: "the command line and environment of the engine the runner started"}, nil
	}
	u, err := url.Parse(t.baseURL)
	if err != nil || !isLoopbackHost(u.Hostname()) {
		return dialect.EngineView{}, nil
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	lp, err := localproc.Listening(os.DirFS("/"), port)
	if err != nil {
		return dialect.EngineView{}, nil
	}
	v := dialect.EngineView{Args: lp.Args, Env: lp.Env,
		Where: fmt.Sprintf("the command line and environment of process %d, which listens on port %d (/proc)", lp.PID, port)}
	if lp.EnvErr != nil {
		v.EnvUnreadable = lp.EnvErr.Error()
	}
	return v, lp
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// preflightCheck runs the preflight. progress, when set, gets each line.
func preflightCheck(ctx context.Context, c *client.Client, srv runner.ServerInfo, bundle *fixtures.Bundle, progress func(string)) (*preflight.Result, error) {
	src, sum, err := prompts.Template(bundle)
	if err != nil {
		return nil, fmt.Errorf("refusing to run: %w", err)
	}
	tmpl, err := chattemplate.Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("the bundle's chat template: %w", err)
	}
	in := preflight.Input{Client: c, Dialect: srv.Dialect, Bundle: bundle, Template: tmpl, TemplateSHA256: sum, EngineTemplate: srv.Template,
		ContextTokens: srv.ContextSize}
	if progress != nil {
		in.Progress = func(_, _ int, f preflight.Fixture) { progress(f.Line()) }
	}
	return preflight.Check(ctx, in), nil
}

// reportPreflight prints what matters of a preflight before the warm-up:
// everything when it failed, one line when it agrees.
func reportPreflight(w io.Writer, pf *preflight.Result, verbose bool) {
	if pf.Context != nil {
		for _, l := range pf.Context.Warnings() {
			fmt.Fprintf(w, "warning: %s\n", l)
		}
	}
	if pf.OK() && !verbose {
		fmt.Fprintf(w, "preflight: the engine's template and tokenizer agree with the bundle on all %d fixtures\n", len(pf.Fixtures))
		return
	}
	if !pf.Verifiable {
		fmt.Fprintf(w, "preflight not verifiable: %s\n", pf.Reason)
		return
	}
	fmt.Fprintln(w, "preflight: the engine's own template and tokenizer DIFFER from the bundle:")
	for _, f := range pf.Fixtures {
		if !f.Agree {
			fmt.Fprintf(w, "  %s\n", f.Line())
		}
	}
	for _, l := range pf.Summary() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, l := range pf.LengthProblems() {
		fmt.Fprintf(w, "warning: the run will be nonconforming: %s\n", l)
	}
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
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// engineUp makes sure an engine serves at the client's URL.
func engineUp(ctx context.Context, c *client.Client, prof *engine.Profile, noStart bool, environ []string, stderr io.Writer) (*engine.ServedBefore, *engine.Process, error) {
	health := func(ctx context.Context) (int, error) {
		s, _, err := c.Get(ctx, "/health", 2*time.Second)
		return s, err
	}
	status, err := health(ctx)
	if err == nil {
		if status != 200 && status != 503 {
			return nil, nil, fmt.Errorf("something that is not an inference engine answers at %s (/health: HTTP %d): the port is taken", c.BaseURL(), status)
		}
		if status == 503 {
			fmt.Fprintf(stderr, "the engine at %s is loading; waiting\n", c.BaseURL())
			if err := waitHealthy(ctx, c, loadTimeout(prof)); err != nil {
				return nil, nil, err
			}
		}
		_, metrics, merr := c.Get(ctx, "/metrics", 5*time.Second)
		_, slots, _ := c.Get(ctx, "/slots", 5*time.Second)
		sb := engine.CountServed(metrics, merr, slots)
		fmt.Fprintf(stderr, "using the engine already serving at %s (left running; %s)\n", c.BaseURL(), sb.Summary())
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
	fmt.Fprintf(stderr, "starting the %s engine: %s\n", prof.Name, strings.Join(prof.Command, " "))
	proc, err := engine.Start(prof, environ)
	if err != nil {
		return nil, nil, err
	}
	if err := proc.WaitReady(ctx, health, loadTimeout(prof), func(s string) { fmt.Fprintf(stderr, "  %s\n", s) }); err != nil {
		proc.Stop(5*time.Second, nil)
		return nil, nil, fmt.Errorf("profile %s: %w", prof.Name, err)
	}
	fmt.Fprintf(stderr, "the engine is ready\n")
	return nil, proc, nil
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

// identity merges the declared identity: flags win over the profile.
func identity(cmd *cobra.Command, o runOptions, p *engine.Profile) (result.Identity, error) {
	pick := func(flag, val string, prof *string) *string {
		if cmd.Flags().Changed(flag) {
			return optional(val)
		}
		return prof
	}
	var pi engine.Identity
	if p != nil {
		pi = p.Identity
	}
	id := result.Identity{
		Track: o.track, TrackNotes: pick("track-notes", o.trackNotes, pi.TrackNotes),
		ModelRevision: pick("model-revision", o.modelRev, pi.ModelRevision), SourceRevision: pick("source-revision", o.sourceRev, pi.SourceRevision),
		TokenizerRevision: pick("tokenizer-revision", o.tokRev, pi.TokenizerRevision), Quantization: pick("quantization", o.quant, pi.Quantization),
		CustomPack: pick("custom-pack", o.customPack, pi.CustomPack),
		Background: o.background, BuildOptions: splitOptions(o.buildOptions),
	}
	if !cmd.Flags().Changed("track") && pi.Track != nil {
		id.Track = *pi.Track
	}
	if id.Track != "default" && id.Track != "custom" {
		return id, usagef(`--track must be "default" or "custom", got %q`, id.Track)
	}
	if !cmd.Flags().Changed("background") && pi.Background != nil {
		id.Background = pi.Background
	}
	if !cmd.Flags().Changed("build-options") && pi.BuildOptions != nil {
		id.BuildOptions = pi.BuildOptions
	}
	return id, nil
}

// gatherFacts probes the machine and hashes the model files, with progress.
// Relative model paths resolve against the engine's own working folder: the
// profile's workdir for an engine the runner started, the local process's
// for one it found listening on the port.
func gatherFacts(ctx context.Context, t *target, srv runner.ServerInfo, view dialect.EngineView, lp *localproc.Process, rehash bool, env Env, stderr io.Writer) result.Facts {
	exe, _ := os.Executable()
	in := provenance.Inputs{Workdir: env.Dir, Executable: exe, Runner: probe.Exec{Timeout: 5 * time.Second},
		Root: os.DirFS("/"), GOOS: runtime.GOOS, ModelDir: env.Dir, EngineDir: env.Dir, Rehash: rehash,
		ModelPath: srv.ModelPath, EngineArgs: view.Args}
	relative := srv.ModelPath != "" && !filepath.IsAbs(srv.ModelPath)
	switch {
	case t.prof != nil:
		in.ModelGlobs = t.prof.ModelFiles
		if len(t.prof.Command) > 0 {
			in.EngineArgs = t.prof.Command[1:]
		}
		if t.prof.Path != "built-in" {
			in.ModelDir = filepath.Dir(t.prof.Path)
		}
		in.EngineDir = t.prof.Workdir
		if relative {
			in.ModelPathNote = "the server's model_path is relative; it was resolved against the profile's engine working folder"
		}
	case lp != nil:
		in.EngineDir = lp.Cwd
		if relative {
			in.ModelPathNote = fmt.Sprintf("the server's model_path is relative; it was resolved against the working folder of process %d, found by its listening port (/proc)", lp.PID)
		}
	case relative:
		in.ModelPathNote = "the server's model_path is relative and the server's working folder is unknown (no local process listens on its port), so it was resolved against strata's working folder"
	}
	cacheDir, err := env.cacheDir()
	cachePath := filepath.Join(cacheDir, "model-hashes.json")
	if err == nil {
		if in.Cache, err = modelfiles.OpenCache(cachePath); err != nil {
			fmt.Fprintf(stderr, "warning: %v (hashing without a cache)\n", err)
		}
	}
	start := time.Now()
	tty := isTerminal(stderr)
	in.Progress = func(done, total int64) {
		el := time.Since(start).Seconds()
		rate := float64(done) / max(el, 1e-9)
		eta := 0.0
		if rate > 0 {
			eta = float64(total-done) / rate
		}
		line := fmt.Sprintf("hashing model files: %.2f of %.2f GB, %.2f GB/s, ETA %.0f s", float64(done)/1e9, float64(total)/1e9, rate/1e9, eta)
		switch {
		case tty:
			fmt.Fprint(stderr, "\r\033[K"+line)
			if done == total {
				fmt.Fprintln(stderr)
			}
		case done == total:
			fmt.Fprintf(stderr, "hashed %.2f GB of model files in %.1f s (%.2f GB/s)\n", float64(total)/1e9, el, rate/1e9)
		}
	}
	f := provenance.Gather(ctx, in)
	if in.Cache != nil {
		if err := in.Cache.Save(); err != nil {
			fmt.Fprintf(stderr, "warning: the hash cache was not saved: %v\n", err)
		}
	}
	return f
}

func splitOptions(vals []string) []string {
	if vals == nil {
		return nil
	}
	out := []string{}
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// commandLine is the sanitized command string: flags as given, the API key
// variable's name but never a key.
func commandLine(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				parts = append(parts, "--"+f.Name+"="+quoteArg(v))
			}
			return
		}
		if f.Value.Type() == "bool" && f.Value.String() == "true" {
			parts = append(parts, "--"+f.Name)
			return
		}
		parts = append(parts, "--"+f.Name+"="+quoteArg(f.Value.String()))
	})
	return strings.Join(parts, " ")
}

func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'\\$`") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// waitHealthy polls /health until it answers 200.
func waitHealthy(ctx context.Context, c *client.Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		status, _, err := c.Get(ctx, "/health", 2*time.Second)
		if err == nil && status == 200 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the engine did not become healthy within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
