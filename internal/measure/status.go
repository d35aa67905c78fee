package measure

import "github.com/strata-bench/strata/internal/contract"

// Status is the run status the reasons give, with the spec's precedence:
// any nonconforming reason wins, then any partial one, else complete.
func Status(rs []contract.StatusReason) string {
	partial := false
	for _, r := range rs {
		if !r.Kind.Partial() {
			return contract.StatusNonconforming
		}
		partial = true
	}
	if partial {
		return contract.StatusPartial
	}
	return contract.StatusComplete
}
