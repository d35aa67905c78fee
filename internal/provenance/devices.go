package provenance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// visibility are the variables that hide GPUs from the engine's runtime,
// in the order they apply: ROCr's, then HIP's on what ROCr left, then
// CUDA_VISIBLE_DEVICES (which HIP honours as well) on what those left.
var visibility = []string{"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}

// llama.cpp's device selections (common/arg.cpp: -dev/--device, env
// LLAMA_ARG_DEVICE; -mg/--main-gpu, env LLAMA_ARG_MAIN_GPU; a command-line
// argument wins over its variable).
var (
	deviceFlags  = []string{"-dev", "--device"}
	mainGPUFlags = []string{"-mg", "--main-gpu"}
)

// SelectedDevices finds the device selections the engine ran with (the
// visibility variables, llama.cpp's --device and --main-gpu) and ties them
// to the probed GPUs. hardware.gpus' device_index is the vendor tool's
// (nvidia-smi, amd-smi: PCI order); a visible list is indices into the
// list before it; --device CUDA<n>/ROCm<n> is the n-th visible device and
// -mg the n-th device used. What cannot be tied leaves device_indices null
// with the reason returned.
func SelectedDevices(v record.EngineView, gpus []contract.GPU) (*contract.SelectedDevices, string) {
	sd := &contract.SelectedDevices{Settings: []contract.DeviceSetting{}, TiedBy: []string{}}
	if v.Args == nil && v.Env == nil {
		return sd, "the runner could not see the engine's command line or environment (it neither started the engine nor found it listening on a local port), so which GPUs it was given is unknown"
	}
	env := map[string]string{}
	for _, kv := range v.Env {
		if k, val, ok := strings.Cut(kv, "="); ok {
			env[k] = val
		}
	}
	envWhere := "the environment of " + v.Where
	used := make([]int, len(gpus))
	for i, g := range gpus {
		used[i] = g.DeviceIndex
	}
	why := ""
	fail := func(s string) {
		if why == "" {
			why = s
		}
	}
	if len(gpus) == 0 {
		fail("no GPU was probed, so the selections name no hardware.gpus entry")
	}
	if v.EnvUnreadable != "" {
		fail("the engine's environment could not be read (" + v.EnvUnreadable + "), so a visibility variable may hide GPUs")
	}
	for _, name := range visibility {
		val, ok := env[name]
		if !ok {
			continue
		}
		sd.Settings = append(sd.Settings, contract.DeviceSetting{Name: name, Value: val, Source: envWhere})
		if name == "CUDA_VISIBLE_DEVICES" && env["CUDA_DEVICE_ORDER"] != "PCI_BUS_ID" && !sameModel(gpus) {
			fail("CUDA_VISIBLE_DEVICES counts devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and these GPUs differ, so its indices cannot be tied to nvidia-smi's")
			continue
		}
		next, err := pick(used, val)
		if err != nil {
			fail(name + "=" + val + ": " + err.Error())
			continue
		}
		used = next
		sd.TiedBy = append(sd.TiedBy, fmt.Sprintf("%s=%s keeps device_index %s of the GPUs before it", name, val, ints(used)))
	}
	if val, where, ok := engineSetting(v, deviceFlags, "LLAMA_ARG_DEVICE"); ok {
		sd.Settings = append(sd.Settings, contract.DeviceSetting{Name: "--device", Value: val, Source: where})
		next, err := byDeviceName(used, val)
		if err != nil {
			fail("--device " + val + ": " + err.Error())
		} else {
			used = next
			sd.TiedBy = append(sd.TiedBy, fmt.Sprintf("--device %s uses device_index %s", val, ints(used)))
		}
	}
	if val, where, ok := engineSetting(v, mainGPUFlags, "LLAMA_ARG_MAIN_GPU"); ok {
		sd.Settings = append(sd.Settings, contract.DeviceSetting{Name: "--main-gpu", Value: val, Source: where})
		n, err := strconv.Atoi(val)
		switch {
		case err != nil || n < 0 || n >= len(used):
			sd.TiedBy = append(sd.TiedBy, fmt.Sprintf("--main-gpu %s names no device of the %d used", val, len(used)))
		case why != "":
			sd.TiedBy = append(sd.TiedBy, "--main-gpu "+val+" cannot be tied: the devices it counts are unknown")
		default:
			sd.MainDeviceIndex = &used[n]
			sd.TiedBy = append(sd.TiedBy, fmt.Sprintf("--main-gpu %s is device_index %d", val, used[n]))
		}
	}
	if why != "" {
		return sd, why
	}
	if len(sd.Settings) == 0 {
		sd.TiedBy = append(sd.TiedBy, "no device selection was given (no visibility variable, --device or --main-gpu): the engine could use every GPU")
	}
	sd.DeviceIndices = used
	return sd, ""
}

// engineSetting is a flag's value on the command line, else its
// variable's, and where it was read.
func engineSetting(v record.EngineView, flags []string, envName string) (value, where string, ok bool) {
	for i, a := range v.Args {
		for _, f := range flags {
			if a == f && i+1 < len(v.Args) {
				value, where, ok = v.Args[i+1], "the command line of "+v.Where, true
			} else if after, cut := strings.CutPrefix(a, f+"="); cut {
				value, where, ok = after, "the command line of "+v.Where, true
			}
		}
	}
	if ok {
		return value, where, true
	}
	for _, kv := range v.Env {
		if after, cut := strings.CutPrefix(kv, envName+"="); cut {
			return after, envName + " in the environment of " + v.Where, true
		}
	}
	return "", "", false
}

// pick keeps the devices a comma-separated list of indices names (into
// list), in the list's order as given.
func pick(list []int, val string) ([]int, error) {
	out := []int{}
	if strings.TrimSpace(val) == "" {
		return out, nil
	}
	for _, part := range strings.Split(val, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%q is not an index (a UUID or MIG name cannot be tied to a device_index here)", part)
		}
		if n < 0 || n >= len(list) {
			return nil, fmt.Errorf("index %d is beyond the %d GPUs it chooses from", n, len(list))
		}
		out = append(out, list[n])
	}
	return out, nil
}

// byDeviceName applies llama.cpp's --device list: "none" is no GPU, and
// CUDA<n> or ROCm<n> is the n-th device its runtime sees.
func byDeviceName(list []int, val string) ([]int, error) {
	if val == "none" {
		return []int{}, nil
	}
	out := []int{}
	for _, name := range strings.Split(val, ",") {
		num := ""
		for _, prefix := range []string{"CUDA", "ROCm"} {
			if after, ok := strings.CutPrefix(name, prefix); ok {
				num = after
			}
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CUDA<n> or ROCm<n> device (other backends count devices their own way)", name)
		}
		if n < 0 || n >= len(list) {
			return nil, fmt.Errorf("%s is beyond the %d visible GPUs", name, len(list))
		}
		out = append(out, list[n])
	}
	return out, nil
}

// sameModel is true when every GPU has one name: then the fastest-first
// order CUDA uses by default is the PCI order (ties go by PCI bus).
func sameModel(gpus []contract.GPU) bool {
	for _, g := range gpus {
		if g.Name != gpus[0].Name {
			return false
		}
	}
	return true
}

func ints(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
