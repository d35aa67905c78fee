package provenance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

func gpus(names ...string) []contract.GPU {
	out := make([]contract.GPU, len(names))
	for i, n := range names {
		out[i] = contract.GPU{DeviceIndex: i, Name: n}
	}
	return out
}

// TestSelectedDevicesAreTiedToTheGPUs: each selection (the visibility
// variables, --device, --main-gpu, on the command line or as LLAMA_ARG_*)
// is named with its source and applied to hardware.gpus' indices; what
// cannot be tied is null with the reason.
func TestSelectedDevicesAreTiedToTheGPUs(t *testing.T) {
	t.Parallel()
	four := gpus("NVIDIA RTX A4000", "NVIDIA RTX A4000", "NVIDIA RTX A4000", "NVIDIA RTX A4000")
	for _, c := range []struct {
		name      string
		view      record.EngineView
		gpus      []contract.GPU
		indices   string // fmt of DeviceIndices ("<nil>" when not tied)
		main      int    // -1: none
		settings  []string
		whyHolds  string
		tiedHolds string
	}{
		{"nothing selected", record.EngineView{Args: []string{"-m", "x.gguf"}, Where: "p"}, four, "[0 1 2 3]", -1, nil, "", "every GPU"},
		{"CUDA_VISIBLE_DEVICES", record.EngineView{Args: []string{}, Env: []string{"CUDA_VISIBLE_DEVICES=2,3"}, Where: "p"}, four, "[2 3]", -1,
			[]string{"CUDA_VISIBLE_DEVICES=2,3"}, "", "keeps device_index 2, 3"},
		{"visible, then --device and -mg", record.EngineView{Args: []string{"--device", "CUDA1,CUDA0", "-mg", "1"}, Env: []string{"CUDA_VISIBLE_DEVICES=1,3"}, Where: "p"}, four, "[3 1]", 1,
			[]string{"CUDA_VISIBLE_DEVICES=1,3", "--device=CUDA1,CUDA0", "--main-gpu=1"}, "", "--main-gpu 1 is device_index 1"},
		{"LLAMA_ARG_* and ROCr", record.EngineView{Args: []string{}, Env: []string{"ROCR_VISIBLE_DEVICES=0,2", "HIP_VISIBLE_DEVICES=1", "LLAMA_ARG_MAIN_GPU=0"}, Where: "p"},
			gpus("AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX"), "[2]", 2,
			[]string{"ROCR_VISIBLE_DEVICES=0,2", "HIP_VISIBLE_DEVICES=1", "--main-gpu=0"}, "", "HIP_VISIBLE_DEVICES=1 keeps device_index 2"},
		{"the command line wins", record.EngineView{Args: []string{"-dev=CUDA0"}, Env: []string{"LLAMA_ARG_DEVICE=CUDA1"}, Where: "p"}, four, "[0]", -1,
			[]string{"--device=CUDA0"}, "", ""},
		{"no offload", record.EngineView{Args: []string{"--device", "none"}, Where: "p"}, four, "[]", -1, []string{"--device=none"}, "", "uses device_index none"},
		{"a UUID", record.EngineView{Args: []string{}, Env: []string{"CUDA_VISIBLE_DEVICES=GPU-8c2f"}, Where: "p"}, four, "<nil>", -1, nil, "is not an index", ""},
		{"mixed cards, CUDA's order", record.EngineView{Args: []string{}, Env: []string{"CUDA_VISIBLE_DEVICES=1"}, Where: "p"}, gpus("NVIDIA GeForce RTX 3060", "NVIDIA RTX A4000"), "<nil>", -1, nil, "fastest first", ""},
		{"mixed cards, PCI order", record.EngineView{Args: []string{}, Env: []string{"CUDA_VISIBLE_DEVICES=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}, Where: "p"}, gpus("NVIDIA GeForce RTX 3060", "NVIDIA RTX A4000"), "[1]", -1, nil, "", ""},
		{"Vulkan", record.EngineView{Args: []string{"--device", "Vulkan0"}, Where: "p"}, four, "<nil>", -1, nil, "CUDA<n> or ROCm<n>", ""},
		{"an unreadable environment", record.EngineView{Args: []string{}, EnvUnreadable: "permission denied", Where: "p"}, four, "<nil>", -1, nil, "permission denied", ""},
		{"no GPU", record.EngineView{Args: []string{}, Where: "p"}, nil, "<nil>", -1, nil, "no GPU was probed", ""},
		{"not seen", record.EngineView{}, four, "<nil>", -1, nil, "could not see the engine's command line", ""},
	} {
		sd, why := SelectedDevices(c.view, c.gpus)
		got := sd.DeviceIndices
		if s := fmt.Sprint(got); (got == nil) != (c.indices == "<nil>") || got != nil && s != c.indices {
			t.Errorf("%s: device_indices %v, want %s", c.name, got, c.indices)
		}
		if (why == "") != (c.whyHolds == "") || !strings.Contains(why, c.whyHolds) {
			t.Errorf("%s: reason %q, want one with %q", c.name, why, c.whyHolds)
		}
		if c.main < 0 && sd.MainDeviceIndex != nil || c.main >= 0 && (sd.MainDeviceIndex == nil || *sd.MainDeviceIndex != c.main) {
			t.Errorf("%s: main %v, want %d", c.name, sd.MainDeviceIndex, c.main)
		}
		for _, want := range c.settings {
			name, val, _ := strings.Cut(want, "=")
			found := false
			for _, s := range sd.Settings {
				found = found || s.Name == name && s.Value == val && s.Source != ""
			}
			if !found {
				t.Errorf("%s: setting %s not named: %+v", c.name, want, sd.Settings)
			}
		}
		if !strings.Contains(strings.Join(sd.TiedBy, "; "), c.tiedHolds) {
			t.Errorf("%s: tied by %q, want %q", c.name, sd.TiedBy, c.tiedHolds)
		}
	}
}
