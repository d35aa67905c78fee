package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/version"
)

// protocolLine names the protocols strata implements, for help texts.
func protocolLine() string {
	var parts []string
	for _, d := range protocol.Known() {
		parts = append(parts, fmt.Sprintf("%s, corpus %s…", d.ID, d.CorpusSHA256[:12]))
	}
	return strings.Join(parts, "; ")
}

// versionString is what `strata version` and --version print after
// "strata ": the version and protocols, the commit and where it came from
// (or why there is none, and how to get an install that has one), the
// module version a go install recorded, and what the checkout around the
// working folder says.
func versionString(env procstate.State) string {
	inst := env.Install()
	lines := []string{fmt.Sprintf("%s (protocols %s)", version.Version, protocolLine()), inst.Line()}
	if v := inst.ModuleVersion; v != "" && v != "(devel)" {
		lines = append(lines, "module version "+v)
	}
	for _, w := range inst.Warnings {
		lines = append(lines, "warning: "+w)
	}
	if inst.Commit == "" {
		lines = append(lines, "warning: a run from this install is nonconforming (strata_commit is null); to get a commit, "+install.Conforming)
	}
	return strings.Join(lines, "\n")
}

func newVersion(env procstate.State) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, the protocols and the commit built from",
		Example: "  strata version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printf(cmd.OutOrStdout(), "strata %s\n", versionString(env))
			return nil
		},
	}
}
