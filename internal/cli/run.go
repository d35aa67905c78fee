package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/version"
)

// runOptions are bench run's flags.
type runOptions struct {
	url, apiKeyEnv, resultsDir  string
	simulate, optional          bool
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
		Use:   "run (--url URL | --simulate) [flags]",
		Short: "Run the standard benchmark protocol against a server and write a result folder",
		Long: `Run the protocol: a warm-up, then the performance stage (short, prompt-4k and
prompt-16k in each of 3 repetitions), then the twelve sanity checks, and with
--optional-concurrency three rounds of four short requests released together.
Every request carries the profile's exact settings; nothing about the workload
can be changed (--concurrency, --repeat and --request-timeout are refused).

The fixtures are the bundle embedded in this binary, checked byte for byte
against its manifest before anything is sent. The result folder goes to
bench/results/<UTC-date>-standard-<gpu>-<run-id>/ when the current folder has
bench/results, otherwise to ./bench-results/. Ctrl-C ends the run: the request
in flight fails, the rest are skipped, and the result is still written.

Options that describe what the engine cannot tell the runner (--track,
--track-notes, --model-revision, --source-revision, --tokenizer-revision,
--quantization, --custom-pack, --background, --build-options) are recorded as
given; an unset one is null with a reason. The runner never guesses them.

--simulate runs against strata's simulated engine (no GPU needed). Such a
result is always nonconforming: its numbers are synthetic.`,
		Example: `  strata bench run --simulate
  strata bench run --url http://127.0.0.1:8080 --track default --track-notes "0.2.1 release, setup defaults"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "base URL of a server that is already running (loopback for a standard result)")
	f.BoolVar(&o.simulate, "simulate", false, "run against strata's simulated engine (results are synthetic and nonconforming)")
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
	if (o.url == "") == !o.simulate {
		return usagef("give exactly one of --url URL or --simulate")
	}
	if o.track != "default" && o.track != "custom" {
		return usagef(`--track must be "default" or "custom", got %q`, o.track)
	}
	if o.url != "" {
		u, err := url.Parse(o.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("--url %q: expected http://HOST:PORT", o.url)
		}
	}
	apiKey := ""
	if o.apiKeyEnv != "" {
		if apiKey = env.Getenv(o.apiKeyEnv); apiKey == "" {
			return usagef("--api-key-env %s: the environment variable is empty or unset", o.apiKeyEnv)
		}
	}
	// The fixtures are checked before anything is sent.
	bundle, err := prompts.Bundle()
	if err != nil {
		return fmt.Errorf("refusing to run: %w", err)
	}
	stderr := cmd.ErrOrStderr()
	base := o.url
	if o.simulate {
		cfg := simengine.DefaultConfig()
		cfg.Bundle = bundle
		sim := simengine.New(cfg)
		u, err := sim.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer sim.Close()
		base = u
		fmt.Fprintf(stderr, "simulated engine on %s (results are synthetic)\n", base)
		if err := waitHealthy(ctx, client.New(client.Options{BaseURL: base}), 30*time.Second); err != nil {
			return err
		}
	}
	c := client.New(client.Options{BaseURL: base, APIKey: apiKey})
	if _, _, err := c.Get(ctx, "/health", 10*time.Second); err != nil {
		return fmt.Errorf("the server at %s does not answer: %w", base, err)
	}
	progress := newProgress(stderr)
	rec := runner.Run(ctx, runner.Config{Client: c, Bundle: bundle, Optional: o.optional, Progress: progress})
	progress.finish()

	id := result.Identity{
		Track: o.track, TrackNotes: optional(o.trackNotes), ModelRevision: optional(o.modelRev),
		SourceRevision: optional(o.sourceRev), TokenizerRevision: optional(o.tokRev), Quantization: optional(o.quant),
		CustomPack: optional(o.customPack), Background: o.background, BuildOptions: splitOptions(o.buildOptions),
		Command: commandLine(cmd),
	}
	exe, _ := os.Executable()
	facts := installFacts(version.Detect(env.Dir, exe))
	maxShared := map[string]int{}
	for rid, f := range bundle.Fixtures {
		maxShared[rid] = f.MaxSharedPrefixTokens
	}
	a, err := result.Assemble(rec, id, facts, maxShared)
	if err != nil {
		return fmt.Errorf("assemble the result: %w", err)
	}
	m := redact.Local()
	if apiKey != "" {
		m.Secrets = append(m.Secrets, apiKey)
	}
	root := result.ResultsRoot(env.Dir)
	if o.resultsDir != "" {
		root = env.Path(o.resultsDir)
	}
	dir, err := result.Write(root, a, redact.New(m))
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	r := &a.Results
	fmt.Fprintf(w, "result: %s\n", dir)
	fmt.Fprintf(w, "status: %s; sanity %d/%d; requests %d\n", r.Run.Status, r.Quality.Passed, r.Quality.Total, len(r.Requests))
	if ctx.Err() != nil {
		return errors.New("the run was interrupted; the partial result above was written")
	}
	return nil
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

// installFacts fills the install fields; machine facts are not probed by
// this version, so they are null with that reason.
func installFacts(inst version.Install) result.Facts {
	const notProbed = "not probed: this version of strata does not read machine facts yet"
	f := result.Facts{Missing: map[string]string{}}
	f.BuildKind = &inst.Kind
	if inst.Commit != "" {
		c := inst.Commit
		f.StrataCommit, f.RunnerCommit = &c, &c
	} else {
		f.Missing["/software/strata_commit"] = inst.Reason
		f.Missing["/software/runner_commit"] = inst.Reason
		f.Missing["/protocol/git_commit"] = inst.Reason
	}
	for _, p := range []string{"/hardware/gpus", "/hardware/cpu", "/hardware/ram_bytes", "/hardware/storage", "/software/os", "/software/drivers", "/software/runtime"} {
		f.Missing[p] = notProbed
	}
	f.Missing["/model/files"] = "not hashed: this version of strata does not locate and hash model files yet"
	f.Extensions = map[string]any{"install": map[string]string{"commit_source": inst.Source, "build_kind": inst.Kind}}
	return f
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
