package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/version"
)

func protocolLine() string { return protocol.ID }

func versionString() string {
	s := fmt.Sprintf("%s (protocol %s, corpus %s)", version.Version, protocol.ID, protocol.CorpusSHA256[:12])
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
