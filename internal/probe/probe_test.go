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
	f := Probe(context.Background(), fakeMac{chip: "Apple M2 Max", arm64: "1"}, fstest.MapFS{}, "darwin")
	g := f.Hardware.GPUs
	if len(g) != 1 || g[0].Name != "Apple M2 Max" || *g[0].MemoryKind != "shared" || *g[0].MemoryBytes != 68719476736 || g[0].PowerLimitW != nil {
		t.Fatalf("gpus %+v", g)
	}
	if f.Runtime[0].Name != "metal" || *f.Runtime[0].Version != "15.1" || f.Drivers != nil || f.Missing["/software/drivers"] == "" {
		t.Errorf("runtime %+v drivers %+v", f.Runtime, f.Drivers)
	}
}

// TestIntelMacHasNoSharedGPU: an Intel Mac (no hw.optional.arm64, an Intel
// chip) keeps its CPU, memory and macOS, and gets no GPU entry: its CPU is
// no shared-memory GPU. Neither does an arm64 machine whose chip is not
// Apple's.
func TestIntelMacHasNoSharedGPU(t *testing.T) {
	t.Parallel()
	for _, m := range []fakeMac{
		{chip: "Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz"},
		{chip: "Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz", arm64: "0"},
		{chip: "Some Other Chip", arm64: "1"},
	} {
		f := Probe(context.Background(), m, fstest.MapFS{}, "darwin")
		if f.Hardware.GPUs != nil || !strings.Contains(f.Missing["/hardware/gpus"], "is not Apple silicon") {
			t.Errorf("%+v: gpus %+v, reason %q", m, f.Hardware.GPUs, f.Missing["/hardware/gpus"])
		}
		if f.Runtime != nil || f.Missing["/software/runtime"] == "" || f.Missing["/software/drivers"] == "" {
			t.Errorf("%+v: runtime %+v, reasons %q %q", m, f.Runtime, f.Missing["/software/runtime"], f.Missing["/software/drivers"])
		}
		if f.Hardware.CPU == nil || *f.Hardware.CPU != m.chip || f.Hardware.RAMBytes == nil || f.OS == nil || *f.OS.Version != "15.1" {
			t.Errorf("%+v: cpu %v ram %v os %+v", m, f.Hardware.CPU, f.Hardware.RAMBytes, f.OS)
		}
	}
}

// fakeMac answers sysctl and sw_vers; arm64 "" is a machine without
// hw.optional.arm64 (sysctl fails: an unknown oid).
type fakeMac struct{ chip, arm64 string }

func (m fakeMac) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	switch strings.Join(append([]string{name}, args...), " ") {
	case "sysctl -n machdep.cpu.brand_string":
		return []byte(m.chip + "\n"), nil
	case "sysctl -n hw.memsize":
		return []byte("68719476736\n"), nil
	case "sysctl -n hw.optional.arm64":
		if m.arm64 != "" {
			return []byte(m.arm64 + "\n"), nil
		}
		return nil, errors.New("sysctl: unknown oid 'hw.optional.arm64'")
	case "sw_vers -productVersion":
		return []byte("15.1\n"), nil
	}
	return nil, ErrNotFound
}

// TestRAMDisksAreNotStorage: zram0 and ram0 are memory, not disks.
func TestRAMDisksAreNotStorage(t *testing.T) {
	t.Parallel()
	f := Probe(context.Background(), recorded{"lsblk": "lsblk-zram.json"}, linuxRoot, "linux")
	s := f.Hardware.Storage
	if len(s) != 1 || *s[0].Kind != "ssd" || *s[0].Model != "Samsung SSD 870 EVO 1TB" {
		t.Errorf("storage %+v", s)
	}
	if !strings.Contains(f.Sources["storage"], "zram0, ram0 left out") {
		t.Errorf("source %q", f.Sources["storage"])
	}
}

// TestAMDSMIPowerLimit: amd-smi static --limit's current cap is the power
// limit, in its older form (limit.socket_power) and its newer one
// (gpu_data, limit.ppt0.socket_power_limit); "N/A" is null with a reason.
func TestAMDSMIPowerLimit(t *testing.T) {
	t.Parallel()
	root := fstest.MapFS{
		"sys/bus/pci/devices/0000:03:00.0/mem_info_vram_total": {Data: []byte("25753026560\n")},
		"sys/bus/pci/devices/0000:04:00.0/mem_info_vram_total": {Data: []byte("25753026560\n")},
	}
	older := Probe(context.Background(), recorded{"amd-smi list": "amd-smi-list.json", "amd-smi static --asic": "amd-smi-static-asic.json",
		"amd-smi static --limit": "amd-smi-static-limit.json"}, root, "linux")
	if g := older.Hardware.GPUs; len(g) != 1 || g[0].PowerLimitW == nil || *g[0].PowerLimitW != 327 {
		t.Errorf("limit.socket_power: gpus %+v", g)
	}
	newer := Probe(context.Background(), recorded{"amd-smi list": "amd-smi-list-2.json", "amd-smi static --limit": "amd-smi-static-limit-ppt.json"}, root, "linux")
	g := newer.Hardware.GPUs
	if len(g) != 2 || g[0].PowerLimitW == nil || *g[0].PowerLimitW != 211 {
		t.Fatalf("limit.ppt0.socket_power_limit: gpus %+v", g)
	}
	if g[1].PowerLimitW != nil || !strings.Contains(newer.Missing["/hardware/gpus/1/power_limit_w"], `"N/A"`) {
		t.Errorf("N/A: %+v, reason %q", g[1].PowerLimitW, newer.Missing["/hardware/gpus/1/power_limit_w"])
	}
	none := Probe(context.Background(), recorded{"amd-smi list": "amd-smi-list.json"}, root, "linux")
	if why := none.Missing["/hardware/gpus/0/power_limit_w"]; !strings.Contains(why, "amd-smi static --limit") {
		t.Errorf("no --limit answer: reason %q", why)
	}
}

func TestWindowsDisplayKey(t *testing.T) {
	t.Parallel()
	f := Probe(context.Background(), recorded{"reg query": "reg-display.txt"}, fstest.MapFS{}, "windows")
	if g := f.Hardware.GPUs; len(g) != 1 || g[0].Name != "NVIDIA GeForce RTX 4090" || *f.Drivers[0].Version != "32.0.15.6094" {
		t.Fatalf("gpus %+v drivers %+v", g, f.Drivers)
	}
}

// cancelOnHang is a machine whose hanging tools end ctx when they are run.
type cancelOnHang struct {
	recorded
	cancel context.CancelFunc
}

func (c cancelOnHang) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if c.recorded[name] == probetest.Hang {
		c.cancel()
	}
	return c.recorded.Run(ctx, name, args...)
}

// TestNoToolsAndAHangingTool: a tool that never answers holds the probe
// only until its context ends (it ends here as the tool is run), and
// every fact it would have given is null with a reason.
func TestNoToolsAndAHangingTool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := Probe(ctx, cancelOnHang{recorded{"nvidia-smi": probetest.Hang}, cancel}, linuxRoot, "linux")
	if f.Hardware.GPUs != nil || !strings.Contains(f.Missing["/hardware/gpus"], "no GPU tool answered") ||
		!strings.Contains(f.Missing["/hardware/gpus"], "amd-smi") {
		t.Errorf("gpus %+v: %q", f.Hardware.GPUs, f.Missing["/hardware/gpus"])
	}
	if f.Missing["/software/drivers"] == "" || f.Missing["/software/runtime"] == "" {
		t.Error("drivers and runtime need reasons")
	}
}

// TestExecTimeout: the real runner cuts a tool that does not answer (one
// that would sleep for ever: Run returns only because it was cut).
func TestExecTimeout(t *testing.T) {
	t.Parallel()
	_, err := Exec{Timeout: 200 * time.Millisecond}.Run(context.Background(), "sleep", "infinity")
	if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms") {
		t.Fatalf("err %v", err)
	}
	if _, err := (Exec{}).Run(context.Background(), "strata-no-such-tool"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing tool: %v", err)
	}
}
