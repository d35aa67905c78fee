package cli

import (
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
)

// TestASimulatedFolderHoldsNoEmptyString: the README's main command on a
// machine without a GPU writes a folder whose results.json holds no empty
// string for a value strata does not know (the energy block's source
// among them): each is null, with its reason in missing, and report
// validates the folder.
func TestASimulatedFolderHoldsNoEmptyString(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	dir, res, _ := energyRun(t, testEnv(t, work, strings.NewReader(""), nil, nil))
	if e := res.Extensions.Energy; !strings.Contains(e.NotMeasured, "no GPU was probed") {
		t.Fatalf("the machine has a GPU to sample: %+v", e)
	}
	for _, p := range resulttest.EmptyStrings(t, dir) {
		t.Errorf("%s is an empty string; an unknown value is null with a reason", p)
	}
	reportValid(t, work, dir)
}
