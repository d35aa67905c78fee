package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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

func versionString() string {
	s := fmt.Sprintf("%s (protocols %s)", version.Version, protocolLine())
	c, modified := version.Commit()
	switch {
	case c == "":
		// A build without VCS stamps (go build -buildvcs=false, a tarball):
		// a run from it records no strata_commit and is nonconforming.
		s += " commit unknown"
	case modified:
		s += " commit " + c + " (modified)"
	default:
		s += " commit " + c
	}
	return s
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print strata's version, the protocol it implements and the commit it was built from",
		Example: "  strata version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "strata %s\n", versionString())
			return nil
		},
	}
}
