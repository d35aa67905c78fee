package measure

import (
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestStatus: nonconforming wins over partial wherever it stands, partial
// over complete, and no reason is complete.
func TestStatus(t *testing.T) {
	t.Parallel()
	skipped := contract.StatusReason{Kind: contract.SkippedWork, Text: "skipped"}
	remote := contract.StatusReason{Kind: contract.RemoteServer, Text: "remote"}
	for _, c := range []struct {
		rs   []contract.StatusReason
		want string
	}{
		{nil, contract.StatusComplete},
		{[]contract.StatusReason{skipped}, contract.StatusPartial},
		{[]contract.StatusReason{skipped, remote}, contract.StatusNonconforming},
		{[]contract.StatusReason{remote, skipped}, contract.StatusNonconforming},
	} {
		if got := Status(c.rs); got != c.want {
			t.Errorf("Status(%v) = %s, want %s", c.rs, got, c.want)
		}
	}
}
