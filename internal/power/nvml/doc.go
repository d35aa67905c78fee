// Package nvml loads NVIDIA's management library (libnvidia-ml) for the
// power sampler, through purego on Linux. It is apart from power so that
// only the process state links it: purego imports runtime/cgo when cgo is
// on, and every binary that reaches it must then be linked by the C
// linker, the result writer's and the validator's tests among them.
package nvml
