// Command strata runs the Strata standard benchmark protocol against a local
// LLM inference server. See README.md, or run strata --help.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-bench/strata/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}
