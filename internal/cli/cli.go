// Package cli is strata's command layer: flag parsing and wiring only. Run is
// the whole program as a function of its arguments and one injected process
// state, so every command is tested in process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, named in one place.
const (
	ExitOK     = 0
	ExitFailed = 1 // a check failed, or the work could not be done
	ExitUsage  = 2 // bad flags or arguments
)

// Env is the process state a command may touch. Nothing else in the command
// layer reads os.Args, os.Getenv, the working directory or the std streams.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the working directory; relative paths are resolved against it.
	Dir    string
	Getenv func(string) string
	// Environ is the environment handed to an engine the runner starts
	// (nil: this process's).
	Environ func() []string
	// CacheDir holds strata's caches ("": the user cache folder).
	CacheDir string
}

func (e Env) environ() []string {
	if e.Environ != nil {
		return e.Environ()
	}
	return os.Environ()
}

// OSEnv returns the real process state.
func OSEnv() Env {
	wd, _ := os.Getwd()
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: wd, Getenv: os.Getenv, Environ: os.Environ}
}

// Path resolves p against the working directory.
func (e Env) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// usageError marks bad usage (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// checkFailed marks a completed check that found problems (exit 1) whose
// details the command has already printed.
type checkFailed struct{ msg string }

func (e checkFailed) Error() string { return e.msg }

// Run runs strata with args (without the program name) and returns the exit
// code.
func Run(ctx context.Context, args []string, env Env) int {
	root := newRoot(env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "strata: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(env.Stderr, "Run 'strata --help' (or add --help to the command) for usage.")
		return ExitUsage
	}
	return ExitFailed
}

func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Run the Strata standard benchmark against a local LLM inference server",
		Long: `strata implements the Strata standard benchmark protocol (` + protocolLine() + `) for
local LLM inference servers that speak llama.cpp's server API.

It sends a frozen set of prompts in a fixed order with fixed settings, measures
client latencies and engine token rates, scores twelve sanity checks, and writes
a result folder that anyone can re-validate.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.CompletionOptions.DisableDefaultCmd = true
	bench := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark commands: run the protocol, report a result, manage the fixture bundle",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	corpus := &cobra.Command{
		Use:   "corpus",
		Short: "Build or verify the frozen fixture bundle",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	corpus.AddCommand(newCorpusBuild(env), newCorpusVerify(env))
	profile := &cobra.Command{
		Use:   "profile",
		Short: "Engine profile commands",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	profile.AddCommand(newProfileCheck(env))
	bench.AddCommand(newRun(env), newCheck(env), newReport(env), corpus, newProfiles(env), profile, newManifest(env), newSite(env), newSubmit(env), newCompare(env))
	engine := &cobra.Command{
		Use:   "engine",
		Short: "Engine commands: the simulated llama-server-compatible engine",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	engine.AddCommand(newSimulate(env))
	root.AddCommand(bench, engine, newTokens(env))
	return root
}

// groupRunE makes a command group print its help when called bare and
// reject unknown subcommands as usage errors.
func groupRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && !cmd.HasSubCommands() {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
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
