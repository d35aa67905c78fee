//go:build linux

package realengine

import (
	"os"
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
)

// TestMain: these tests time concurrent streams (see RunWithEveryCPU).
func TestMain(m *testing.M) { os.Exit(resulttest.RunWithEveryCPU(m)) }
