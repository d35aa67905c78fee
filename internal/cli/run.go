package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/strata-bench/strata/internal/benchrun"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
)

// runOptions are bench run's flags.
type runOptions struct {
	url, apiKeyEnv, resultsDir  string
	engineLog                   string
	protocol, bundle            string
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

// runHelp is the help text of the command run.
const runHelp = `Run the protocol: a warm-up, then the performance stage (short, prompt-4k and
prompt-16k in each of 3 repetitions), then the twelve sanity checks, and with
--optional-concurrency three rounds of four short requests released together.
Every request carries the profile's exact settings; nothing about the workload
can be changed (--concurrency, --repeat and --request-timeout are refused).

The fixtures are the bundle of the protocol the run follows, checked byte for
byte against its manifest and the protocol's corpus SHA-256 before anything is
sent. Inside a Strata checkout (a folder holding bench/prompts/standard-v1) that
is the spec's protocol, ` + "`" + protocol.SpecID + "`" + `, with the checkout's bundle
and serve/chat_template.jinja; elsewhere it is strata's stand-in,
` + "`" + protocol.StandInID + "`" + ` (the spec's construction with the Qwen3 tokenizer
and template), whose bundle is embedded in this binary. --protocol ID chooses
one explicitly and --bundle DIR names the bundle folder of a checkout's
protocol. The first line of the run names the protocol, and the result
records it. The result folder goes to
bench/results/<UTC-date>-standard-<gpu>-<run-id>/ when the current folder has
bench/results, otherwise to ./bench-results/; that folder is checked (a
writable directory with room) before anything is sent. The result folder holds
its charts too (chart-*.svg, drawn from results.json), shown in its README.md.

On a terminal one status line shows the request in flight and the time left:
the expected time ("~1m30s left"), from the engine's own prompt and decode
rates so far, the remaining prompts' sizes and what the requests of each stage
wrote so far, with the worst case (every remaining request writing to its cap)
beside it when that is within the request timeout. Into a pipe, each finished
request's line shows the same figure.

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
given; an unset one is null with a reason. The runner never guesses them. A
revision, quantization, background or build option is one line of text (a
control character or a bidirectional override in one is refused); track notes
and a custom pack's description may span lines.

With --profile the runner starts that profile's engine (its own process group,
output captured as the engine log), waits for /health to answer 200, runs, and
stops only the engine it started. An engine already serving at the profile's
URL is used and left running, and the result records whether it was freshly
loaded. --no-start forbids starting.

An engine strata did not start (--url, or a profile's engine already serving)
gives strata no output to keep: name the log file the server writes with
--engine-log FILE (llama-server --log-file FILE). It is read after the run,
redacted and kept as the engine log; what the engine wrote while the run went
is held against the run's records. Without it the result has no engine log,
says so, and bench submit refuses it. Before the warm-up the runner probes the
machine and hashes the model files (the server's model_path, every shard, the
files in the engine's arguments and the profile's model_files), reusing cached
hashes of unchanged files unless --rehash.

--simulate is the built-in profile "simulator": strata's simulated engine (no
GPU needed), started and stopped like a real one. Such a result is always
nonconforming: its numbers are synthetic.

Exit 0 when the result is written, also a partial one that measured
something; 1 when the run measured nothing (its warm-up failed, or every
measured request did: the folder is still written and says why), when the
folder it wrote does not pass bench report (kept, the first violation
named), or when it could not run; 2 for bad usage, before anything is sent;
130 after a signal.`

func newRun(env procstate.State) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run (--url URL | --profile NAME | --simulate) [flags]",
		Short: "Run the protocol against a server and write a result folder",
		Long:  runHelp,
		Example: `  strata bench run --simulate
  strata bench run --profile llama-3060 --track default \
    --track-notes "0.2.1 release, setup defaults"
  strata bench run --url http://127.0.0.1:8080`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "the root URL of a server that is already running, e.g. http://127.0.0.1:8080, not …/v1 (loopback for a standard result)")
	f.StringVar(&o.protocol, "protocol", "", "the protocol to run: "+protocol.SpecID+" (a Strata checkout's bundle; the default inside one) or "+protocol.StandInID+" (embedded; the default elsewhere)")
	f.StringVar(&o.bundle, "bundle", "", "the bundle folder of a checkout's protocol (default: bench/prompts/standard-v1 of the current folder)")
	f.BoolVar(&o.simulate, "simulate", false, "run against strata's simulated engine: the built-in profile \"simulator\" (results are synthetic and nonconforming)")
	f.StringVar(&o.profile, "profile", "", "engine profile: NAME (./profiles/NAME.toml, then the user config folder's strata/profiles/NAME.toml) or a path to a .toml file")
	f.BoolVar(&o.noStart, "no-start", false, "never start an engine: use the one serving at the profile's URL or fail")
	f.StringVar(&o.engineLog, "engine-log", "", "the log file an engine already serving writes (llama-server --log-file FILE), kept as the engine log")
	f.BoolVar(&o.rehash, "rehash", false, "hash every model file again instead of trusting the hash cache")
	f.BoolVar(&o.optional, "optional-concurrency", false, "add the optional concurrency stage (3 rounds of 4 requests)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "name of an environment variable holding the server's API key, of at least 8 characters (sent as a bearer token, never recorded)")
	f.StringVar(&o.resultsDir, "results-dir", "", "folder to write the result folder into (default: bench/results or ./bench-results)")
	f.StringVar(&o.track, "track", protocol.TrackCustom, fmt.Sprintf("configuration track: %q (an unmodified release's setup) or %q", protocol.TrackDefault, protocol.TrackCustom))
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

func runBench(ctx context.Context, cmd *cobra.Command, env procstate.State, o runOptions) error {
	for _, name := range []string{"concurrency", "repeat", "request-timeout"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s is refused: it would change the workload, and the protocol's workload is fixed (a different workload is a different protocol ID)", name)
		}
	}
	out, err := benchrun.Run(ctx, env, benchrun.Options{
		Target: benchrun.Target{URL: o.url, Profile: o.profile, Simulate: o.simulate, NoStart: o.noStart, APIKeyEnv: o.apiKeyEnv,
			Protocol: o.protocol, BundleDir: o.bundle, EngineLog: o.engineLog},
		Optional: o.optional, Rehash: o.rehash, ResultsDir: o.resultsDir,
		Declared: declared(cmd, o), Command: commandLine(cmd), Finish: folder.Finish,
	})
	if out != nil {
		w := cmd.OutOrStdout()
		r := out.Results
		printf(w, "result: %s\n", out.Dir)
		printf(w, "status: %s; sanity %d/%d; requests %d\n", r.Run.Status, r.Quality.Passed, r.Quality.Total, len(r.Requests))
	}
	return err
}

// declared is the identity given by flags: a flag not given is nil.
func declared(cmd *cobra.Command, o runOptions) benchrun.Declared {
	given := func(flag, val string) *string {
		if cmd.Flags().Changed(flag) {
			return &val
		}
		return nil
	}
	d := benchrun.Declared{
		Track: given("track", o.track), TrackNotes: given("track-notes", o.trackNotes),
		ModelRevision: given("model-revision", o.modelRev), SourceRevision: given("source-revision", o.sourceRev),
		TokenizerRevision: given("tokenizer-revision", o.tokRev), Quantization: given("quantization", o.quant),
		CustomPack: given("custom-pack", o.customPack),
	}
	if cmd.Flags().Changed("background") {
		d.Background = append([]string{}, o.background...)
	}
	if cmd.Flags().Changed("build-options") {
		d.BuildOptions = splitOptions(o.buildOptions)
	}
	return d
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

// commandLine is the sanitized command string: flags as given, each one
// shell word on one line, the API key variable's name but never a key.
func commandLine(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				parts = append(parts, "--"+f.Name+"="+escape.ShellWord(v))
			}
			return
		}
		if f.Value.Type() == "bool" && f.Value.String() == "true" {
			parts = append(parts, "--"+f.Name)
			return
		}
		parts = append(parts, "--"+f.Name+"="+escape.ShellWord(f.Value.String()))
	})
	return strings.Join(parts, " ")
}
