//go:build !linux

package power

import (
	"fmt"
	"runtime"
)

// LoadNVML loads NVIDIA's management library; strata reads it on Linux
// only (elsewhere nvidia-smi samples).
func LoadNVML() (NVML, error) {
	return nil, fmt.Errorf("NVML is read on Linux only, not on %s", runtime.GOOS)
}
