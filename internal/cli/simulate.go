package cli

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engineconfig"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/simengine"
)

// simulateHelp is the help text of the command simulate.
const simulateHelp = `Serve a simulated engine with llama.cpp's server API (/health, /props,
/v1/models, /slots, streaming /v1/chat/completions with llama.cpp's chunk shapes,
usage and timings, and /apply-template and /tokenize for the preflight). By
default it models a plausible engine; --scenario scripts each request's
behaviour and faults by request ID (format below), and can replay real
llama-server captures. --dialect and --build choose the engine it speaks as
(llama.cpp b10470 by default), each with that engine's reading of the
reasoning budget, and --reasoning-budget sets a server-level budget as
llama-server's does. The other dialects ("strata", "vllm", "sglang",
"ollama", "ik_llama.cpp", "lmstudio", "tabbyapi") serve that engine's
identification endpoints and streaming wire instead, with the same simulated
model.

"strata" ("strata-server" is its old name) speaks as Strata's own server as
its source shows it (Niko1221/Strata serve/server.py @452325a9, with
serve/frontend.py): GET /health and /api/health (always 200, service
"strata"), /v1/status (engine: the simulator's version), /props (503 "the
engine is not running" while loading; build_info "Strata <version>"), /slots,
/v1/models, /metrics, streaming POST /v1/chat/completions (role chunk first,
": keep-alive" comments while the prompt is read, usage and timings on the
final chunk, HTTP/1.0 semantics with Connection: close) and POST
/v1/messages/count_tokens ({"input_tokens": N}); no /tokenize or
/apply-template. With --api-key-env NAME the key is read from that
environment variable and every POST and those GET routes but /health answer
401 without "Authorization: Bearer KEY" or "x-api-key: KEY".

It says it is a simulator in an X-Strata-Simulator response header on every
response (and in /props where the dialect is llama-server's), and no scenario
can remove or change that, so a run against it is always nonconforming (the
result names every trace it left). Stop it with Ctrl-C.

Scenario file (JSON; an unknown field is an error). Request IDs are the
protocol's, e.g. "performance-prompt-4k-r2" or "sanity-I1" (see a
result's results.json); "default" applies to every request first, then the
request's own entry:
  {"default": {...}, "requests": {"ID": {...}},
   "props": {"FIELD": VALUE}        replace top-level /props fields (null
                                    removes one; not the simulator's markers)
   "no_slots": true                 /slots answers 501 (no --slots)
   "no_template_endpoints": true    /apply-template and /tokenize answer 404
   "tokenize_skew": {"ID": N}       add N to /tokenize's (strata: count_tokens')
                                    count of ID's prompt
   "captures_dir": "DIR",           where "replay" files are read from
   "vllm_per_request_metrics": false    vllm: no usage-chunk "metrics"
   "vllm_prompt_tokens_details": false  vllm: no usage.prompt_tokens_details
   "sglang_reject_xhigh": true      sglang: an older SGLang, 400 on a
                                    reasoning_effort other than low/medium/high
   "tabbyapi_no_timings": true      tabbyapi: an older TabbyAPI, usage with
                                    the three counts only
   "strata_props_unavailable": true}  strata: /props answers 503 "the engine
                                    is not running" throughout
Each behaviour ({...}) may set:
  output     "reasoning_tokens": N, "answer_tokens": N, "answer": "TEXT",
             "tool_call": {"name": "NAME", "arguments": "EXACT JSON TEXT"},
             "no_tool_call": true, "finish_reason": "stop|length|..."
  counts     "prompt_tokens": N, "cached_tokens": N, "predicted_n_skew": N
             (added to timings.predicted_n only), "omit_usage": true,
             "omit_timings": true, "usage_on_finish": true (timings on the
             finish chunk, no usage chunk)
  faults     "http_status": CODE with "error_message": "TEXT"; "html": true
             (200 with an HTML page); after N deltas: "error_event_after",
             "cut_after" (close), "malformed_after" (broken JSON line),
             "invalid_utf8_after"; "no_done": true; "duplicate_keys": true
             (usage repeats a key); "long_line": true (a line over 1 MiB);
             "empty_deltas": N and "keep_alives": N before the first token;
             "stall_before_ms": MS (before headers, as queueing),
             "stall_after_headers_ms": MS; "die": true (the server stops
             mid-stream); "flood": "lines|deltas|content" (a stream that
             never ends); "slot_params": {...} (what /slots reports);
             "replay": "FILE" (serve a recorded llama-server body).
For example {"requests": {"performance-short-r1": {"cut_after": 5}}}.`

func newSimulate(env procstate.State) *cobra.Command {
	o := simulateOptions{cfg: simengine.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "simulate [--port N] [--scenario FILE] [flags]",
		Short: "Serve a simulated llama-server-compatible engine on loopback",
		Long:  simulateHelp,
		Example: `  strata engine simulate --port 8080 &
  strata bench run --url http://127.0.0.1:8080
  strata engine simulate --port 8081 --dialect llama.cpp --build 9928 --reasoning-budget 16`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, env, o) },
	}
	f := cmd.Flags()
	cfg := &o.cfg
	f.StringVar(&o.host, "host", "127.0.0.1", "loopback address to listen on")
	f.IntVar(&o.port, "port", 8080, "port (0 picks a free one)")
	f.StringVar(&o.scenario, "scenario", "", "JSON scenario file scripting requests by ID")
	f.Float64Var(&cfg.PromptTPS, "prompt-tps", cfg.PromptTPS, "simulated prompt processing speed (tokens/s)")
	f.Float64Var(&cfg.DecodeTPS, "decode-tps", cfg.DecodeTPS, "simulated decode speed (tokens/s)")
	f.IntVar(&cfg.ReasoningTokens, "reasoning-tokens", cfg.ReasoningTokens, "typical reasoning length (doubled for long prompts)")
	f.Float64Var(&cfg.Accuracy, "accuracy", cfg.Accuracy, "share of sanity cases answered right (0-1)")
	f.IntVar(&cfg.Slots, "slots", cfg.Slots, "parallel slots (llama-server's -np)")
	f.IntVar(&cfg.ContextTokens, "context", cfg.ContextTokens, "per-slot context size reported in /props")
	f.DurationVar(&cfg.LoadTime, "load-time", cfg.LoadTime, "how long /health answers 503 (loading; strata: /props answers 503 and chat requests wait)")
	f.StringVar(&cfg.ModelPath, "model-path", cfg.ModelPath, "model path reported by /props")
	f.StringVar(&cfg.Dialect, "dialect", cfg.Dialect, `the engine to speak as: "llama.cpp" (of --build), "strata" (Strata's server; "strata-server" is its old name), "unknown", "vllm", "sglang", "ollama", "ik_llama.cpp", "lmstudio" or "tabbyapi"`)
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "strata dialect: require the API key held in this environment variable (as Strata's --api-key)")
	f.StringVar(&o.config, "config", "", "strata dialect: a Strata config file (strata-<model>.json) whose args set the context (--max-context) and the model_path (--native), as Strata's server reads them")
	f.IntVar(&cfg.Build, "build", cfg.Build, "the llama.cpp build number to speak as (per-request reasoning budgets arrived in b9982)")
	f.IntVar(&o.budget, "reasoning-budget", -1, "server-level reasoning budget, as llama-server's (-1 unrestricted; env LLAMA_ARG_THINK_BUDGET)")
	f.StringVar(&o.modelDir, "model-dir", "", "write a small stand-in GGUF here and report it as the model")
	f.StringVar(&o.banner, "banner", "", "a line printed at start (tests plant text in the engine log with it)")
	_ = f.MarkHidden("banner")
	f.Float64Var(&o.speed, "speed", 1, "run this many times faster than real time (tests)")
	_ = f.MarkHidden("speed")
	return cmd
}

// simulateOptions are engine simulate's flags.
type simulateOptions struct {
	cfg                                         simengine.Config
	host, scenario, modelDir, banner, apiKeyEnv string
	config                                      string
	speed                                       float64
	port, budget                                int
}

// runSimulate checks the flags and serves until the context ends.
func runSimulate(cmd *cobra.Command, env procstate.State, o simulateOptions) error {
	cfg := o.cfg
	if err := o.check(); err != nil {
		return err
	}
	// Faster than real time: the same run, its waits shortened (tests).
	cfg.PromptTPS *= o.speed
	cfg.DecodeTPS *= o.speed
	cfg.LoadTime = time.Duration(float64(cfg.LoadTime) / o.speed)
	// As llama-server: the flag, else LLAMA_ARG_THINK_BUDGET.
	budget := o.budget
	if !cmd.Flags().Changed("reasoning-budget") {
		if v := env.Getenv("LLAMA_ARG_THINK_BUDGET"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return usagef("LLAMA_ARG_THINK_BUDGET=%q: expected an integer", v)
			}
			budget = n
		}
	}
	if budget < -1 {
		return usagef("--reasoning-budget %d: expected -1 (unrestricted) or a token count", budget)
	}
	cfg.ReasoningBudget = &budget
	if o.apiKeyEnv != "" {
		// As Strata's api_key_of: surrounding whitespace is not part of the
		// key, and an empty key is refused (Strata exits 2 on one).
		key := strings.TrimSpace(env.Getenv(o.apiKeyEnv))
		if key == "" {
			return usagef("--api-key-env %s: the environment variable is unset or empty; expected the API key", o.apiKeyEnv)
		}
		cfg.APIKey = key
	}
	if o.config != "" {
		if err := strataConfig(env, o.config, &cfg); err != nil {
			return err
		}
	}
	if o.scenario != "" {
		s, err := simengine.LoadScenario(env.Path(o.scenario))
		if err != nil {
			return err
		}
		cfg.Scenario = s
	}
	if o.modelDir != "" {
		path, err := simengine.WriteModel(env.Path(o.modelDir))
		if err != nil {
			return fmt.Errorf("--model-dir: %w", err)
		}
		cfg.ModelPath = path
	}
	b, err := prompts.Bundle()
	if err != nil {
		return err
	}
	cfg.Bundle = b
	tmpl, _, err := prompts.Template(b)
	if err != nil {
		return err
	}
	cfg.Template, cfg.Now = string(tmpl), env.Now
	return simengine.New(cfg).Serve(cmd.Context(), net.JoinHostPort(o.host, strconv.Itoa(o.port)), func(url string) {
		if o.banner != "" {
			printf(cmd.OutOrStdout(), "%s\n", o.banner)
		}
		printf(cmd.OutOrStdout(), "simulated engine listening on %s, model %s\n", url, cfg.ModelPath)
	})
}

// check refuses flags a simulator cannot serve with.
func (o simulateOptions) check() error {
	cfg := o.cfg
	switch {
	case !protocol.IsLoopback(o.host):
		return usagef("--host %q: the simulator serves on loopback only", o.host)
	case o.port < 0 || o.port > 65535:
		return usagef("--port %d: expected 0-65535", o.port)
	case cfg.PromptTPS <= 0 || cfg.DecodeTPS <= 0:
		return usagef("--prompt-tps and --decode-tps must be positive")
	case cfg.Accuracy < 0 || cfg.Accuracy > 1:
		return usagef("--accuracy must be between 0 and 1")
	case o.speed < 1:
		return usagef("--speed %g: expected 1 or more", o.speed)
	case !simengine.KnownDialect(cfg.Dialect):
		return usagef("--dialect %q: expected one of %s", cfg.Dialect, strings.Join(simengine.Dialects(), ", "))
	case cfg.Build <= 0:
		return usagef("--build %d: expected a positive llama.cpp build number", cfg.Build)
	case o.apiKeyEnv != "" && cfg.Dialect != simengine.DialectStrata && cfg.Dialect != simengine.DialectStrataAlias:
		return usagef("--api-key-env: only the strata dialect asks for a key (--dialect %s)", cfg.Dialect)
	}
	return nil
}

// strataConfig reads a Strata config file as Strata's server does for what
// the simulator models of it (serve/server.py @452325a9 main,
// StrataEngine.__init__): --max-context is the context, and model_path is
// the value after --native (else --pack), as written.
func strataConfig(env procstate.State, name string, cfg *simengine.Config) error {
	if cfg.Dialect != simengine.DialectStrata && cfg.Dialect != simengine.DialectStrataAlias {
		return usagef("--config: only the strata dialect reads a Strata config file (--dialect %s)", cfg.Dialect)
	}
	data, err := inputfile.Read(env.Path(name), 4<<20)
	if err != nil {
		return usagef("--config: %v", err)
	}
	file, err := dialect.ParseStrataFile(filepath.Base(name), data)
	if err != nil {
		return usagef("--config: %v", err)
	}
	if n := engineconfig.StrataContext(file.Args); n > 0 {
		cfg.ContextTokens = int(n)
	}
	for _, flag := range []string{"--native", "--pack"} {
		if v := dialect.FlagValue(file.Args, flag); v != "" {
			cfg.ModelPath = v
			break
		}
	}
	return nil
}
