//go:build !linux

package nvml

import (
	"fmt"
	"runtime"

	"github.com/strata-bench/strata/internal/power"
)

// Load loads NVIDIA's management library; strata reads it on Linux
// only (elsewhere nvidia-smi samples).
func Load() (power.NVML, error) {
	return nil, fmt.Errorf("NVML is read on Linux only, not on %s", runtime.GOOS)
}
