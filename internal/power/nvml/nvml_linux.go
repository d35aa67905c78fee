//go:build linux

package nvml

import (
	"fmt"

	"github.com/ebitengine/purego"

	"github.com/strata-bench/strata/internal/power"
)

// nvmlLib is libnvidia-ml loaded through purego (no cgo): the four calls
// the sampler makes.
type nvmlLib struct {
	handle     uintptr
	shutdown   func() int32
	byIndex    func(index uint32, device *uintptr) int32
	powerUsage func(device uintptr, milliwatts *uint32) int32
}

// Load loads libnvidia-ml.so.1 and initializes it.
func Load() (power.NVML, error) {
	h, err := purego.Dlopen("libnvidia-ml.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("load libnvidia-ml.so.1: %w", err)
	}
	l := &nvmlLib{handle: h}
	var initFn func() int32
	for name, fn := range map[string]any{"nvmlInit_v2": &initFn, "nvmlShutdown": &l.shutdown,
		"nvmlDeviceGetHandleByIndex_v2": &l.byIndex, "nvmlDeviceGetPowerUsage": &l.powerUsage} {
		if _, err := purego.Dlsym(h, name); err != nil {
			_ = purego.Dlclose(h)
			return nil, fmt.Errorf("libnvidia-ml.so.1 has no %s: %w", name, err)
		}
		purego.RegisterLibFunc(fn, h, name)
	}
	if rc := initFn(); rc != 0 {
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("nvmlInit_v2 returned %d", rc)
	}
	return l, nil
}

func (l *nvmlLib) PowerW(index int) (float64, error) {
	var dev uintptr
	if rc := l.byIndex(uint32(index), &dev); rc != 0 {
		return 0, fmt.Errorf("nvmlDeviceGetHandleByIndex_v2(%d) returned %d", index, rc)
	}
	var mw uint32
	if rc := l.powerUsage(dev, &mw); rc != 0 {
		return 0, fmt.Errorf("nvmlDeviceGetPowerUsage returned %d", rc)
	}
	return float64(mw) / 1000, nil
}

func (l *nvmlLib) Close() error {
	l.shutdown()
	return purego.Dlclose(l.handle)
}
