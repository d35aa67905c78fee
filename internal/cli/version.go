package cli

import (
	"fmt"

	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/version"
)

func protocolLine() string { return protocol.ID }

func versionString() string {
	s := fmt.Sprintf("%s (protocol %s, corpus %s)", version.Version, protocol.ID, protocol.CorpusSHA256[:12])
	if c, modified := version.Commit(); c != "" {
		s += " commit " + c
		if modified {
			s += " (modified)"
		}
	}
	return s
}
