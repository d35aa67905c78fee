// Command strata runs the Strata standard benchmark protocol against a local
// LLM inference server. See README.md, or run strata --help.
package main

import (
	"os"

	"github.com/strata-bench/strata/internal/cli"
)

func main() { os.Exit(cli.Main()) }
