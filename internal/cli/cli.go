// Package cli is strata's command layer: flag parsing and wiring only. Run is
// the whole program as a function of its arguments and one injected process
// state, so every command is tested in process.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/liveline"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/redact"
)

// sources are where the bundles of a command are: the protocol table, the
// working folder (a Strata checkout) and --bundle DIR.
func sources(e procstate.State, bundleDir string) prompts.Sources {
	return prompts.Sources{Table: e.Protocols, Workdir: e.Dir, Dir: e.Path(bundleDir)}
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP (the terminal or the SSH session closed)"
	}
	return sig.String()
}

// withSignals ends ctx on the first signal (its cause names the signal)
// and closes the returned channel on the second.
func withSignals(ctx context.Context, sigs <-chan os.Signal) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	now := make(chan struct{})
	done := make(chan struct{})
	if sigs != nil {
		go func() {
			n := 0
			for {
				select {
				case sig := <-sigs:
					n++
					switch n {
					case 1:
						cancel(exitcode.Signalled{Name: signalName(sig)})
					case 2:
						close(now)
					}
				case <-done:
					return
				}
			}
		}()
	}
	return ctx, now, func() { close(done); cancel(nil) }
}

// Main is the program: the real process state, with SIGINT, SIGTERM and
// SIGHUP (a closed terminal, a dropped SSH session) ending a command the
// same way (the work in flight stops, the result is written), and a broken
// pipe on stdout or stderr an error to ignore rather than a reason to die
// mid-run. It returns the exit code.
func Main() int { return mainWith(nil) }

// mainWith is Main with the process state adjusted first (tests run this
// binary as strata with a faster simulator).
func mainWith(adjust func(*procstate.State)) int {
	env := procstate.OS()
	if adjust != nil {
		adjust(&env)
	}
	return Run(context.Background(), procstate.Args(), env)
}

func usagef(format string, a ...any) error { return exitcode.Usagef(format, a...) }

// printf prints to a command's stdout or stderr and discards the write's
// error: those are Run's screens, which report none (a terminal or pipe
// that went away must not stop a run midway; procstate ignores SIGPIPE
// for the same reason).
func printf(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }

// checkFailed marks a completed check that found problems (exit 1) whose
// details the command has already printed.
func checkFailed(msg string) error { return exitcode.CheckFailed{Msg: msg} }

// Run runs strata with args (without the program name) and returns the exit
// code.
func Run(ctx context.Context, args []string, env procstate.State) int {
	ctx, now, stop := withSignals(ctx, env.Signals)
	defer stop()
	env.StopNow = now
	// Everything a command prints, on a terminal or into a pipe, passes one
	// filter: what came from outside (an engine's version, a run ID, an
	// error a server wrote, a file name) is escaped so it cannot act on the
	// terminal, and the secrets the command learns are removed. What the
	// user typed is theirs, and shown as typed.
	if env.Keys == nil {
		env.Keys = &redact.Keyring{}
	}
	env.Keys.Typed(typedWords(env, args)...)
	for _, k := range flagKeys(env, args) {
		env.Keys.Add(k)
	}
	clean := func(s string) string { return escape.Line(env.Keys.Redact(s)) }
	stdout := liveline.New(env.Stdout, false, nil, clean)
	stderr := liveline.New(env.Stderr, env.TTY, env.Width, clean)
	defer stdout.Flush()
	defer stderr.Flush()
	env.Stdout, env.Stderr = stdout, stderr
	root := newRoot(env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitcode.OK
	}
	printf(env.Stderr, "strata: %v\n", err)
	code := exitcode.Of(ctx, err)
	if code == exitcode.Usage {
		path := "strata"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		printf(env.Stderr, "Run '%s --help' for usage.\n", path)
	}
	return code
}

// typedWords are the words of the command line as the user typed them
// and as commands show them: each argument, a --flag=value's value, and a
// path as resolved against the working folder.
func typedWords(env procstate.State, args []string) []string {
	var out []string
	for _, a := range args {
		words := []string{a}
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			words = append(words, v)
		}
		for _, w := range words {
			out = append(out, w)
			if p := filepath.Clean(env.Path(w)); w != "" && p != w {
				out = append(out, p)
			}
		}
	}
	return out
}

// flagKeys are the API keys the variables --api-key-env names hold, known
// to the filter from the start: a typed path is shown as typed but for the
// key in use, and a refusal printed before a command reads the key (a
// --bundle that names no folder) must hide it too. A key shorter than a
// secret is refused where it is read, and is left out here so that no
// word of that refusal is hidden with it.
func flagKeys(env procstate.State, args []string) []string {
	var out []string
	for i, a := range args {
		name, ok := strings.CutPrefix(a, "--api-key-env=")
		if !ok && a == "--api-key-env" && i+1 < len(args) {
			name, ok = args[i+1], true
		}
		if !ok || name == "" || env.Getenv == nil {
			continue
		}
		if k := env.Getenv(name); len(k) >= redact.MinSecretLen {
			out = append(out, k)
		}
	}
	return out
}

func newRoot(env procstate.State) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Run the Strata standard benchmark against a local LLM inference server",
		Long: `strata implements the Strata standard benchmark protocol for local LLM
inference servers that speak llama.cpp's server API. Protocols: ` + protocolLine() + `.

It sends a frozen set of prompts in a fixed order with fixed settings, measures
client latencies and engine token rates, scores twelve sanity checks, and writes
a result folder that anyone can re-validate.

` + exitCodes(),
		Example: `  strata bench run --simulate
  strata bench report bench-results/*/
  strata bench --help`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(env),
		Args:          noArgs,
		RunE:          groupRunE,
	}
	// --version prints what `strata version` prints.
	root.SetVersionTemplate("strata {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.DisableDefaultCmd = true
	setHelp(root)
	bench := &cobra.Command{
		Use: "bench",
		Example: `  strata bench run --simulate
  strata bench report bench-results/*/
  strata bench compare bench-results/RUN-A bench-results/RUN-B`,
		Short: "Run the protocol; check, compare and publish its results",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	corpus := &cobra.Command{
		Use: "corpus",
		Example: `  strata bench corpus verify
  strata bench corpus verify bench/prompts/qwen3-standard-v1`,
		Short: "Build or verify the frozen fixture bundle",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	corpus.AddCommand(newCorpusBuild(env), newCorpusVerify(env))
	profile := &cobra.Command{
		Use: "profile",
		Example: `  strata bench profile check simulator
  strata bench profile check my-llama-server`,
		Short: "Engine profile commands",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	profile.AddCommand(newProfileCheck(env))
	bench.AddCommand(newRun(env), newCheck(env), newRecover(env), newReport(env), corpus, newProfiles(env), profile, newManifest(env), newSite(env), newView(env), newSubmit(env), newCompare(env), newPilot(env))
	engine := &cobra.Command{
		Use: "engine",
		Example: `  strata engine simulate --port 8080
  strata engine simulate --port 8080 --scenario slow-prefill.json`,
		Short: "Engine commands: the simulated llama-server-compatible engine",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	engine.AddCommand(newSimulate(env))
	root.AddCommand(bench, engine, newTokens(env), newVersion(env))
	return root
}

// groupRunE makes a command group print its help when called bare and
// reject unknown subcommands as usage errors, with the nearest names.
func groupRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	return cmd.Help()
}

// flagError is the usage error for flags that do not parse. A command
// group meets the flags of a mistyped subcommand (strata becnh run
// --simulate): the word before them is what is wrong, and it is named with
// the command meant.
func flagError(cmd *cobra.Command, err error) error {
	if rest := cmd.Flags().Args(); cmd.HasSubCommands() && len(rest) > 0 {
		return unknownCommand(cmd, rest[0])
	}
	return exitcode.UsageError{Err: err}
}

// unknownCommand is the usage error for a subcommand that does not exist,
// naming the ones it could have meant.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(s), " or ") + "?"
	} else {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg += " (its commands: " + strings.Join(names, ", ") + ")"
	}
	return usagef("%s", msg)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return unknownCommand(cmd, args[0])
		}
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %s, got %d", cmd.CommandPath(), humanize.Count(n, "argument", "arguments"), len(args))
		}
		return nil
	}
}

func requireFlag(name, value string) error {
	if value == "" {
		return usagef("--%s is required", name)
	}
	return nil
}
