package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/strata-bench/strata/internal/probe/probetest"
)

// recorded answers tools from testdata files, keyed by the command line:
// the stand-in machine of internal/probe/probetest.
type recorded map[string]string

func (r recorded) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return probetest.Recorded{Dir: "testdata", Answers: r}.Run(ctx, name, args...)
}

var linuxRoot = fstest.MapFS{
	"proc/cpuinfo":   {Data: []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n")},
	"proc/meminfo":   {Data: []byte("MemTotal:       65536000 kB\nMemFree:        1 kB\n")},
	"etc/os-release": {Data: []byte("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n")},
}

func TestNvidiaTwoCards(t *testing.T) {
	t.Parallel()
	f := Probe(context.Background(), recorded{
		"nvidia-smi --query-gpu": "nvidia-smi-query-2gpu.txt", "nvidia-smi": "nvidia-smi-header.txt", "lsblk": "lsblk.json",
	}, linuxRoot, "linux")
	g := f.Hardware.GPUs
	if len(g) != 2 || g[1].DeviceIndex != 1 || g[0].Name != "NVIDIA RTX A4000" || *g[0].MemoryBytes != 16376*1024*1024 || *g[0].PowerLimitW != 140 {
		t.Fatalf("gpus %+v", g)
	}
	if g[1].PowerLimitW != nil || !strings.Contains(f.Missing["/hardware/gpus/1/power_limit_w"], "[N/A]") {
		t.Errorf("an N/A power limit is null with a reason: %+v %q", g[1].PowerLimitW, f.Missing["/hardware/gpus/1/power_limit_w"])
	}
	if *f.Drivers[0].Version != "550.54.14" || f.Runtime[0].Name != "cuda" || *f.Runtime[0].Version != "12.6" {
		t.Errorf("drivers %+v runtime %+v", f.Drivers, f.Runtime)
	}
	if *f.Hardware.CPU != "AMD Ryzen 9 7950X 16-Core Processor" || *f.Hardware.RAMBytes != 65536000*1024 {
		t.Errorf("cpu %v ram %v", *f.Hardware.CPU, *f.Hardware.RAMBytes)
	}
	if f.OS.Name != "Debian GNU/Linux" || *f.OS.Version != "12" {
		t.Errorf("os %+v", f.OS)
	}
	s := f.Hardware.Storage
	if len(s) != 2 || *s[0].Kind != "nvme" || *s[1].Kind != "hdd" || *s[1].Bus != "sata" || *s[0].Model != "Samsung SSD 990 PRO 2TB" {
		t.Errorf("storage %+v", s)
	}
}

func TestROCmEmptyProductName(t *testing.T) {
	t.Parallel()
	f := Probe(context.Background(), recorded{"rocm-smi": "rocm-smi-empty-name.json"}, linuxRoot, "linux")
	g := f.Hardware.GPUs
	if len(g) != 2 || g[0].Name != "AMD GPU" || g[1].Name != "Radeon RX 7900 XTX" || *g[0].MemoryBytes != 25753026560 || *g[0].PowerLimitW != 327 {
		t.Fatalf("gpus %+v", g)
	}
	if g[1].PowerLimitW != nil || f.Missing["/hardware/gpus/1/power_limit_w"] == "" {
		t.Error("N/A power")
	}
	if *f.Drivers[0].Version != "6.8.5" || f.Missing["/software/runtime"] == "" {
		t.Errorf("drivers %+v", f.Drivers)
	}
	if f.Missing["/hardware/storage"] == "" {
		t.Error("a missing lsblk leaves storage null with a reason")
	}
}

func TestAMDSMIROCm7(t *testing.T) {
	t.Parallel()
	root := fstest.MapFS{
		"sys/bus/pci/devices/0000:03:00.0/mem_info_vram_total": {Data: []byte("25753026560\n")},
		"opt/rocm/.info/version":                               {Data: []byte("7.0.1-38\n")},
	}
	for k, v := range linuxRoot {
		root[k] = v
	}
	f := Probe(context.Background(), recorded{"amd-smi list": "amd-smi-list.json", "amd-smi static": "amd-smi-static-asic.json"}, root, "linux")
	g := f.Hardware.GPUs
	if len(g) != 1 || g[0].Name != "AMD Radeon RX 7900 XTX" || *g[0].MemoryBytes != 25753026560 {
		t.Fatalf("gpus %+v", g)
	}
	if f.Runtime[0].Name != "rocm" || *f.Runtime[0].Version != "7.0.1-38" {
		t.Errorf("runtime %+v", f.Runtime)
	}
	if f.Drivers != nil || !strings.Contains(f.Missing["/software/drivers"], "builds amdgpu in") {
		t.Errorf("in-kernel amdgpu: drivers %+v, reason %q", f.Drivers, f.Missing["/software/drivers"])
	}
}

func TestAppleSilicon(t *testing.T) {
	t.Parallel()
	r := fakeMac{}
	f := Probe(context.Background(), r, fstest.MapFS{}, "darwin")
	g := f.Hardware.GPUs
	if len(g) != 1 || g[0].Name != "Apple M2 Max" || *g[0].MemoryKind != "shared" || *g[0].MemoryBytes != 68719476736 || g[0].PowerLimitW != nil {
		t.Fatalf("gpus %+v", g)
	}
	if f.Runtime[0].Name != "metal" || *f.Runtime[0].Version != "15.1" || f.Drivers != nil || f.Missing["/software/drivers"] == "" {
		t.Errorf("runtime %+v drivers %+v", f.Runtime, f.Drivers)
	}
}

type fakeMac struct{}

func (fakeMac) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	switch strings.Join(append([]string{name}, args...), " ") {
	case "sysctl -n machdep.cpu.brand_string":
		return []byte("Apple M2 Max\n"), nil
	case "sysctl -n hw.memsize":
		return []byte("68719476736\n"), nil
	case "sw_vers -productVersion":
		return []byte("15.1\n"), nil
	}
	return nil, ErrNotFound
}

func TestWindowsDisplayKey(t *testing.T) {
	t.Parallel()
	f := Probe(context.Background(), recorded{"reg query": "reg-display.txt"}, fstest.MapFS{}, "windows")
	if g := f.Hardware.GPUs; len(g) != 1 || g[0].Name != "NVIDIA GeForce RTX 4090" || *f.Drivers[0].Version != "32.0.15.6094" {
		t.Fatalf("gpus %+v drivers %+v", g, f.Drivers)
	}
}

func TestNoToolsAndAHangingTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	f := Probe(ctx, recorded{"nvidia-smi": "HANG"}, linuxRoot, "linux")
	if time.Since(start) > 2*time.Second {
		t.Fatal("a hanging tool held the probe")
	}
	if f.Hardware.GPUs != nil || !strings.Contains(f.Missing["/hardware/gpus"], "no GPU tool answered") ||
		!strings.Contains(f.Missing["/hardware/gpus"], "amd-smi") {
		t.Errorf("gpus %+v: %q", f.Hardware.GPUs, f.Missing["/hardware/gpus"])
	}
	if f.Missing["/software/drivers"] == "" || f.Missing["/software/runtime"] == "" {
		t.Error("drivers and runtime need reasons")
	}
}

// TestExecTimeout: the real runner cuts a tool that does not answer.
func TestExecTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := Exec{Timeout: 200 * time.Millisecond}.Run(context.Background(), "sleep", "10")
	if err == nil || !strings.Contains(err.Error(), "did not answer") || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
	if _, err := (Exec{}).Run(context.Background(), "strata-no-such-tool"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing tool: %v", err)
	}
}
