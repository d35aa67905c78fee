// Package probe gathers the inference machine's hardware and software facts
// (GPUs, drivers and runtimes, CPU, RAM, storage, OS), each from a named
// source or null with the reason. Every tool runs through a Runner and every
// file is read through an fs.FS, so the tests feed recorded outputs of
// nvidia-smi, rocm-smi and amd-smi, and a hanging tool is cut off.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
)

// Runner runs a tool and returns its standard output.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Streamer starts a tool that keeps writing until it is stopped (a power
// sampler such as nvidia-smi -lms) and hands over its standard output as
// it comes. The tool stops when ctx ends or the stream is closed; a Runner
// whose tools cannot stream (a test's recorded answers) need not be one.
type Streamer interface {
	Stream(ctx context.Context, name string, args ...string) (io.ReadCloser, error)
}

// ErrNotFound is returned by a Runner for a tool that is not installed.
var ErrNotFound = errors.New("not installed")

// Exec runs real tools, each bounded by Timeout.
type Exec struct{ Timeout time.Duration }

// Run implements Runner.
func (e Exec) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath(name); err != nil {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	t := e.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = time.Second // a child that keeps the pipe open cannot hold us
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%s did not answer within %s", name, t)
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Stream implements Streamer: the tool runs without Timeout (it samples
// for as long as the run goes) until ctx ends or the stream is closed.
func (e Exec) Stream(ctx context.Context, name string, args ...string) (io.ReadCloser, error) {
	if _, err := exec.LookPath(name); err != nil {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &stream{ReadCloser: out, stop: func() error {
		cancel()
		// The tool was stopped on purpose: its exit status says nothing.
		_ = cmd.Wait()
		return nil
	}}, nil
}

// stream is a running tool's output; closing it stops the tool.
type stream struct {
	io.ReadCloser
	stop func() error
}

func (s *stream) Close() error { return s.stop() }

// Facts are the probed machine facts. Missing uses absolute pointers.
type Facts struct {
	Hardware contract.Hardware
	OS       *contract.NameVersion
	Drivers  []contract.NameVersion
	Runtime  []contract.NameVersion
	Missing  map[string]string
	// Sources says where each fact came from (for extensions).
	Sources map[string]string
}

// none is the Runner of a process that runs no tools (a test): every tool
// is missing.
type none struct{}

func (none) Run(_ context.Context, name string, _ ...string) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w (this process runs no probes)", name, ErrNotFound)
}

// emptyFS is a machine without files.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Probe gathers the facts for goos ("linux", "darwin", "windows"). A nil
// r runs no tools and a nil root reads no files: those facts are null with
// the reason.
func Probe(ctx context.Context, r Runner, root fs.FS, goos string) Facts {
	f := Facts{Missing: map[string]string{}, Sources: map[string]string{}}
	if r == nil {
		r = none{}
	}
	if root == nil {
		root = emptyFS{}
	}
	var gpuReasons []string
	gpus := func() bool {
		switch goos {
		case "darwin":
			return f.mac(ctx, r, &gpuReasons)
		case "windows":
			ok := f.nvidia(ctx, r, &gpuReasons)
			if !ok {
				ok = f.windows(ctx, r, &gpuReasons)
			}
			return ok
		}
		return f.nvidia(ctx, r, &gpuReasons) || f.amdsmi(ctx, r, root, &gpuReasons) || f.rocmsmi(ctx, r, &gpuReasons)
	}()
	if !gpus {
		reason := "no GPU tool answered"
		if len(gpuReasons) > 0 {
			reason += ": " + strings.Join(gpuReasons, "; ")
		}
		f.Missing[contract.PtrHardwareGPUs] = reason
		if f.Drivers == nil {
			f.Missing[contract.PtrSoftwareDrivers] = reason
		}
		if f.Runtime == nil {
			f.Missing[contract.PtrSoftwareRuntime] = reason
		}
	}
	if goos == "linux" {
		f.linuxHost(ctx, r, root)
	} else if goos != "darwin" {
		for _, p := range []string{contract.PtrHardwareCPU, contract.PtrHardwareRAMBytes, contract.PtrHardwareStorage, contract.PtrSoftwareOS} {
			if _, ok := f.Missing[p]; !ok {
				f.Missing[p] = "not probed on " + goos
			}
		}
	}
	return f
}

func str(s string) *string { return &s }

// --- NVIDIA ---------------------------------------------------------------

var cudaVersion = regexp.MustCompile(`CUDA Version:\s*([0-9.]+)`)

func (f *Facts) nvidia(ctx context.Context, r Runner, reasons *[]string) bool {
	out, err := r.Run(ctx, "nvidia-smi", "--query-gpu=index,name,memory.total,power.limit,driver_version", "--format=csv,noheader,nounits")
	if err != nil {
		*reasons = append(*reasons, "nvidia-smi: "+err.Error())
		return false
	}
	driver := ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		cols := strings.Split(line, ",")
		if len(cols) < 5 {
			continue
		}
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		idx, err := strconv.Atoi(cols[0])
		if err != nil {
			continue
		}
		g := contract.GPU{DeviceIndex: idx, Name: cols[1], MemoryKind: str("dedicated")}
		gi := len(f.Hardware.GPUs)
		if mib, err := strconv.ParseFloat(cols[2], 64); err == nil {
			b := int64(mib * 1024 * 1024)
			g.MemoryBytes = &b
		} else {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "memory_bytes")] = "nvidia-smi reported memory.total as " + cols[2]
		}
		if w, err := strconv.ParseFloat(cols[3], 64); err == nil {
			g.PowerLimitW = &w
		} else {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "power_limit_w")] = "nvidia-smi reported power.limit as " + cols[3]
		}
		if g.Name == "" {
			g.Name = "NVIDIA GPU"
		}
		driver = cols[4]
		f.Hardware.GPUs = append(f.Hardware.GPUs, g)
	}
	if len(f.Hardware.GPUs) == 0 {
		*reasons = append(*reasons, "nvidia-smi listed no GPU")
		return false
	}
	f.Sources["gpus"] = "nvidia-smi --query-gpu"
	if driver != "" {
		f.Drivers = append(f.Drivers, contract.NameVersion{Name: "nvidia", Version: str(driver)})
	} else {
		f.Missing[contract.PtrSoftwareDrivers] = "nvidia-smi reported no driver version"
	}
	if full, err := r.Run(ctx, "nvidia-smi"); err == nil {
		if m := cudaVersion.FindSubmatch(full); m != nil {
			f.Runtime = append(f.Runtime, contract.NameVersion{Name: "cuda", Version: str(string(m[1]))})
		}
	}
	if f.Runtime == nil {
		f.Missing[contract.PtrSoftwareRuntime] = "nvidia-smi did not report a CUDA version"
	}
	return true
}

// --- AMD, ROCm 7+ (amd-smi) -----------------------------------------------

func (f *Facts) amdsmi(ctx context.Context, r Runner, root fs.FS, reasons *[]string) bool {
	list, err := r.Run(ctx, "amd-smi", "list", "--json")
	if err != nil {
		*reasons = append(*reasons, "amd-smi: "+err.Error())
		return false
	}
	var devices []struct {
		GPU int    `json:"gpu"`
		BDF string `json:"bdf"`
	}
	if err := amdDevices(list, &devices); err != nil || len(devices) == 0 {
		*reasons = append(*reasons, "amd-smi list gave no devices")
		return false
	}
	names := map[int]string{}
	if static, err := r.Run(ctx, "amd-smi", "static", "--asic", "--json"); err == nil {
		var st []struct {
			GPU  int `json:"gpu"`
			ASIC struct {
				MarketName string `json:"market_name"`
			} `json:"asic"`
		}
		if amdDevices(static, &st) == nil {
			for _, s := range st {
				names[s.GPU] = strings.TrimSpace(s.ASIC.MarketName)
			}
		}
	}
	limits, limitsWhy := amdPowerLimits(ctx, r)
	for _, d := range devices {
		g := contract.GPU{DeviceIndex: d.GPU, Name: names[d.GPU], MemoryKind: str("dedicated")}
		gi := len(f.Hardware.GPUs)
		if g.Name == "" || g.Name == "N/A" {
			g.Name = "AMD GPU"
		}
		path := "sys/bus/pci/devices/" + d.BDF + "/mem_info_vram_total"
		if data, err := fs.ReadFile(root, path); err == nil {
			if b, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
				g.MemoryBytes = &b
			}
		}
		if g.MemoryBytes == nil {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "memory_bytes")] = "/" + path + " cannot be read"
		}
		if w, ok := limits[d.GPU]; ok && w.why == "" {
			g.PowerLimitW = &w.watts
		} else {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "power_limit_w")] = orElse(w.why, limitsWhy)
		}
		f.Hardware.GPUs = append(f.Hardware.GPUs, g)
	}
	f.Sources["gpus"] = "amd-smi list / static --asic / static --limit, memory from the amdgpu sysfs file"
	if v, err := fs.ReadFile(root, "opt/rocm/.info/version"); err == nil {
		f.Runtime = append(f.Runtime, contract.NameVersion{Name: "rocm", Version: str(strings.TrimSpace(string(v)))})
	} else {
		f.Missing[contract.PtrSoftwareRuntime] = "/opt/rocm/.info/version cannot be read"
	}
	if v, err := fs.ReadFile(root, "sys/module/amdgpu/version"); err == nil {
		f.Drivers = append(f.Drivers, contract.NameVersion{Name: "amdgpu", Version: str(strings.TrimSpace(string(v)))})
	} else {
		f.Missing[contract.PtrSoftwareDrivers] = "the kernel builds amdgpu in: there is no driver version to read (/sys/module/amdgpu/version is absent)"
	}
	return true
}

// amdDevices decodes an amd-smi --json answer: a list of devices, which
// newer releases wrap as {"gpu_data": [...]} (ROCm/amdsmi's CLI tests read
// static_data['gpu_data'][i]).
func amdDevices(data []byte, into any) error {
	var wrapped struct {
		GPUData json.RawMessage `json:"gpu_data"`
	}
	if json.Unmarshal(data, &wrapped) == nil && len(wrapped.GPUData) > 0 {
		data = wrapped.GPUData
	}
	return json.Unmarshal(data, into)
}

// amdLimit is one GPU's power limit in watts, or why it is unknown.
type amdLimit struct {
	watts float64
	why   string
}

// amdPowerLimits reads each GPU's power cap from amd-smi static --limit
// --json: limit.socket_power, the current cap as {"value", "unit": "W"}
// (amdsmi_cli/amdsmi_commands.py @0ceca28, from
// amdsmi_get_power_cap_info's power_cap), which newer releases give per
// power-tracking domain as limit.ppt0.socket_power_limit. "N/A" is a GPU
// that reports none. why says why none was read at all.
func amdPowerLimits(ctx context.Context, r Runner) (map[int]amdLimit, string) {
	out, err := r.Run(ctx, "amd-smi", "static", "--limit", "--json")
	if err != nil {
		return nil, "amd-smi static --limit: " + err.Error()
	}
	var st []struct {
		GPU   int `json:"gpu"`
		Limit struct {
			SocketPower json.RawMessage `json:"socket_power"`
			PPT0        struct {
				SocketPowerLimit json.RawMessage `json:"socket_power_limit"`
			} `json:"ppt0"`
		} `json:"limit"`
	}
	if err := amdDevices(out, &st); err != nil {
		return nil, "amd-smi static --limit did not answer a JSON list of GPUs"
	}
	limits := map[int]amdLimit{}
	for _, g := range st {
		raw, field := g.Limit.PPT0.SocketPowerLimit, "limit.ppt0.socket_power_limit"
		if len(raw) == 0 {
			raw, field = g.Limit.SocketPower, "limit.socket_power"
		}
		var v struct {
			Value *float64 `json:"value"`
			Unit  string   `json:"unit"`
		}
		switch {
		case len(raw) == 0:
			limits[g.GPU] = amdLimit{why: "amd-smi static --limit reported no socket power limit"}
		case json.Unmarshal(raw, &v) != nil || v.Value == nil:
			limits[g.GPU] = amdLimit{why: "amd-smi static --limit reported " + field + " as " + string(raw)}
		case v.Unit != "W":
			limits[g.GPU] = amdLimit{why: fmt.Sprintf("amd-smi static --limit reported %s in %q, not watts", field, v.Unit)}
		default:
			limits[g.GPU] = amdLimit{watts: *v.Value}
		}
	}
	return limits, "amd-smi static --limit did not list this GPU"
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// --- AMD, older ROCm (rocm-smi) -------------------------------------------

func (f *Facts) rocmsmi(ctx context.Context, r Runner, reasons *[]string) bool {
	out, err := r.Run(ctx, "rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showmaxpower", "--showdriverversion", "--json")
	if err != nil {
		*reasons = append(*reasons, "rocm-smi: "+err.Error())
		return false
	}
	var doc map[string]map[string]string
	if err := json.Unmarshal(out, &doc); err != nil {
		*reasons = append(*reasons, "rocm-smi did not answer JSON")
		return false
	}
	var cards []string
	for k := range doc {
		if strings.HasPrefix(k, "card") {
			cards = append(cards, k)
		}
	}
	sortCards(cards)
	for _, card := range cards {
		m := doc[card]
		idx, _ := strconv.Atoi(strings.TrimPrefix(card, "card"))
		name := strings.TrimSpace(m["Card Series"])
		if name == "" {
			name = strings.TrimSpace(m["Card series"])
		}
		if name == "" {
			name = strings.TrimSpace(m["Card model"])
		}
		if name == "" || name == "N/A" {
			name = "AMD GPU"
		}
		g := contract.GPU{DeviceIndex: idx, Name: name, MemoryKind: str("dedicated")}
		gi := len(f.Hardware.GPUs)
		if b, err := strconv.ParseInt(m["VRAM Total Memory (B)"], 10, 64); err == nil {
			g.MemoryBytes = &b
		} else {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "memory_bytes")] = "rocm-smi reported no VRAM total"
		}
		if w, err := strconv.ParseFloat(m["Max Graphics Package Power (W)"], 64); err == nil {
			g.PowerLimitW = &w
		} else {
			f.Missing[contract.Pointer("hardware", "gpus", gi, "power_limit_w")] = "rocm-smi reported no max graphics package power"
		}
		f.Hardware.GPUs = append(f.Hardware.GPUs, g)
	}
	if len(cards) == 0 {
		*reasons = append(*reasons, "rocm-smi listed no card")
		return false
	}
	f.Sources["gpus"] = "rocm-smi --json"
	if sys, ok := doc["system"]; ok && sys["Driver version"] != "" {
		f.Drivers = append(f.Drivers, contract.NameVersion{Name: "amdgpu", Version: str(sys["Driver version"])})
	} else {
		f.Missing[contract.PtrSoftwareDrivers] = "rocm-smi reported no driver version"
	}
	f.Missing[contract.PtrSoftwareRuntime] = "rocm-smi does not report the ROCm version"
	return true
}

func sortCards(c []string) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0; j-- {
			a, _ := strconv.Atoi(strings.TrimPrefix(c[j-1], "card"))
			b, _ := strconv.Atoi(strings.TrimPrefix(c[j], "card"))
			if a <= b {
				break
			}
			c[j-1], c[j] = c[j], c[j-1]
		}
	}
}

// --- macOS: Apple silicon, or an Intel Mac ---------------------------------

// mac reads the chip, memory and macOS version. Only Apple silicon (an
// arm64 machine whose chip is Apple's) is one shared-memory GPU named
// after the chip; an Intel Mac's CPU is no GPU, and its GPU (discrete or
// Intel's, with memory of its own) has no probe here.
func (f *Facts) mac(ctx context.Context, r Runner, reasons *[]string) bool {
	chip, err1 := r.Run(ctx, "sysctl", "-n", "machdep.cpu.brand_string")
	mem, err2 := r.Run(ctx, "sysctl", "-n", "hw.memsize")
	ver, err3 := r.Run(ctx, "sw_vers", "-productVersion")
	f.Missing[contract.PtrHardwareStorage] = "not probed on macOS"
	v := strings.TrimSpace(string(ver))
	if err3 == nil && v != "" {
		f.OS = &contract.NameVersion{Name: "macOS", Version: str(v)}
	} else {
		f.Missing[contract.PtrSoftwareOS] = "sw_vers did not answer"
	}
	var ram *int64
	if b, err := strconv.ParseInt(strings.TrimSpace(string(mem)), 10, 64); err2 == nil && err == nil {
		ram = &b
		f.Hardware.RAMBytes = ram
	} else {
		f.Missing[contract.PtrHardwareRAMBytes] = "sysctl hw.memsize did not answer"
	}
	name := strings.TrimSpace(string(chip))
	if err1 != nil || name == "" {
		f.Missing[contract.PtrHardwareCPU] = "sysctl machdep.cpu.brand_string did not answer"
		*reasons = append(*reasons, "sysctl machdep.cpu.brand_string did not answer, so the chip is unknown")
		return false
	}
	f.Hardware.CPU = str(name)
	// hw.optional.arm64 is the machine's, not this binary's: strata built
	// for amd64 runs translated on Apple silicon, where it is still 1.
	arm, err := r.Run(ctx, "sysctl", "-n", "hw.optional.arm64")
	if err != nil || strings.TrimSpace(string(arm)) != "1" || !strings.HasPrefix(name, "Apple ") {
		*reasons = append(*reasons, fmt.Sprintf("%q is not Apple silicon (sysctl hw.optional.arm64 is not 1 or the chip is not Apple's): an Intel Mac's GPU has memory of its own, and strata has no probe for it", name))
		return false
	}
	g := contract.GPU{DeviceIndex: 0, Name: name, MemoryKind: str("shared"), MemoryBytes: ram}
	if ram == nil {
		f.Missing[contract.PtrHardwareGPU0MemoryBytes] = "sysctl hw.memsize did not answer"
	}
	f.Missing[contract.PtrHardwareGPU0PowerLimitW] = "Apple silicon reports no GPU power limit"
	f.Hardware.GPUs = []contract.GPU{g}
	f.Missing[contract.PtrSoftwareDrivers] = "Apple silicon has no separate GPU driver"
	if f.OS != nil {
		f.Runtime = []contract.NameVersion{{Name: "metal", Version: str(v)}}
	} else {
		f.Missing[contract.PtrSoftwareRuntime] = "sw_vers did not answer"
	}
	f.Sources["gpus"] = "sysctl (Apple silicon: one shared-memory GPU named after the chip)"
	return true
}

// --- Windows ---------------------------------------------------------------

var regValue = regexp.MustCompile(`(?m)^\s*(DriverDesc|DriverVersion)\s+REG_SZ\s+(.+?)\s*$`)

func (f *Facts) windows(ctx context.Context, r Runner, reasons *[]string) bool {
	out, err := r.Run(ctx, "reg", "query", `HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\0000`)
	if err != nil {
		*reasons = append(*reasons, "the display driver key: "+err.Error())
		return false
	}
	vals := map[string]string{}
	for _, m := range regValue.FindAllStringSubmatch(string(out), -1) {
		vals[m[1]] = m[2]
	}
	if vals["DriverDesc"] == "" {
		*reasons = append(*reasons, "the display driver key has no DriverDesc")
		return false
	}
	f.Hardware.GPUs = []contract.GPU{{DeviceIndex: 0, Name: vals["DriverDesc"], MemoryKind: str("dedicated")}}
	f.Missing[contract.PtrHardwareGPU0MemoryBytes] = "the display driver key does not state the memory"
	f.Missing[contract.PtrHardwareGPU0PowerLimitW] = "the display driver key does not state a power limit"
	if v := vals["DriverVersion"]; v != "" {
		f.Drivers = []contract.NameVersion{{Name: "display", Version: str(v)}}
	}
	f.Missing[contract.PtrSoftwareRuntime] = "the display driver key does not state a runtime"
	f.Sources["gpus"] = "the Windows display driver key"
	return true
}

// --- Linux host -------------------------------------------------------------

func (f *Facts) linuxHost(ctx context.Context, r Runner, root fs.FS) {
	f.linuxCPU(root)
	f.linuxRAM(root)
	f.linuxOS(root)
	f.storage(ctx, r)
}

// linuxCPU reads the CPU's model name in /proc/cpuinfo.
func (f *Facts) linuxCPU(root fs.FS) {
	if data, err := fs.ReadFile(root, "proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				f.Hardware.CPU = str(strings.TrimSpace(v))
				break
			}
		}
	}
	if f.Hardware.CPU == nil {
		f.Missing[contract.PtrHardwareCPU] = "/proc/cpuinfo has no model name"
	}
}

// linuxRAM reads MemTotal in /proc/meminfo.
func (f *Facts) linuxRAM(root fs.FS) {
	if data, err := fs.ReadFile(root, "proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "MemTotal:" {
				continue
			}
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				b := kb * 1024
				f.Hardware.RAMBytes = &b
			}
		}
	}
	if f.Hardware.RAMBytes == nil {
		f.Missing[contract.PtrHardwareRAMBytes] = "/proc/meminfo has no MemTotal"
	}
}

// linuxOS reads the system's name and version in /etc/os-release.
func (f *Facts) linuxOS(root fs.FS) {
	if data, err := fs.ReadFile(root, "etc/os-release"); err == nil {
		vals := map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				vals[k] = strings.Trim(v, `"`)
			}
		}
		if vals["NAME"] != "" {
			os := &contract.NameVersion{Name: vals["NAME"]}
			if v := vals["VERSION_ID"]; v != "" {
				os.Version = str(v)
			} else {
				f.Missing[contract.PtrSoftwareOSVersion] = "/etc/os-release has no VERSION_ID"
			}
			f.OS = os
		}
	}
	if f.OS == nil {
		f.Missing[contract.PtrSoftwareOS] = "/etc/os-release cannot be read"
	}
}

func (f *Facts) storage(ctx context.Context, r Runner) {
	out, err := r.Run(ctx, "lsblk", "-d", "-J", "-o", "NAME,ROTA,MODEL,TRAN,TYPE")
	if err != nil {
		f.Missing[contract.PtrHardwareStorage] = "lsblk: " + err.Error()
		return
	}
	var doc struct {
		Devices []struct {
			Name  string `json:"name"`
			Rota  any    `json:"rota"`
			Model string `json:"model"`
			Tran  string `json:"tran"`
			Type  string `json:"type"`
		} `json:"blockdevices"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		f.Missing[contract.PtrHardwareStorage] = "lsblk did not answer JSON"
		return
	}
	f.Hardware.Storage = []contract.Storage{}
	var inRAM []string
	for _, d := range doc.Devices {
		if d.Type != "disk" {
			continue
		}
		if ramDisk.MatchString(d.Name) {
			inRAM = append(inRAM, d.Name)
			continue
		}
		si := len(f.Hardware.Storage)
		s := contract.Storage{}
		rot := fmt.Sprint(d.Rota)
		switch {
		case strings.HasPrefix(d.Name, "nvme"):
			s.Kind = str("nvme")
		case rot == "true" || rot == "1":
			s.Kind = str("hdd")
		case rot == "false" || rot == "0":
			s.Kind = str("ssd")
		default:
			f.Missing[contract.Pointer("hardware", "storage", si, "kind")] = "lsblk did not say whether the disk rotates"
		}
		if m := strings.TrimSpace(d.Model); m != "" {
			s.Model = str(m)
		} else {
			f.Missing[contract.Pointer("hardware", "storage", si, "model")] = "lsblk reported no model"
		}
		if d.Tran != "" {
			s.Bus = str(d.Tran)
		} else {
			f.Missing[contract.Pointer("hardware", "storage", si, "bus")] = "lsblk reported no transport"
		}
		f.Hardware.Storage = append(f.Hardware.Storage, s)
	}
	f.Sources["storage"] = "lsblk -d"
	if len(inRAM) > 0 {
		f.Sources["storage"] += " (" + strings.Join(inRAM, ", ") + " left out: RAM-backed block devices, not storage)"
	}
}

// ramDisk names the block devices that hold memory, not storage: zram's
// compressed swap (zram0) and the brd driver's RAM disks (ram0), which
// lsblk lists as disks that do not rotate.
var ramDisk = regexp.MustCompile(`^(?:zram|ram)[0-9]+$`)
