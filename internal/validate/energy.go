package validate

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/strictjson"
)

// checkEnergy holds the energy block to its samples and the records: the
// head's shape (a source or why none, the GPUs of hardware.gpus, the
// samples artifact and its count), then every number derived again from
// power.csv and the request windows (the idle baseline, each request's
// joules and decode tokens per joule, the summaries, the rounds), which
// must be exactly what the block says.
func (c *checker) checkEnergy() {
	e := c.res.Extensions.Energy
	if e == nil {
		return
	}
	const at = "/extensions/energy"
	if (e.Source == nil) == (e.NotMeasured == "") {
		c.add(at, "names a source %q and a reason it measured nothing %q: exactly one belongs", e.SourceName(), e.NotMeasured)
	}
	c.checkEnergySource(e)
	var gpus []int
	for _, g := range c.res.Hardware.GPUs {
		gpus = append(gpus, g.DeviceIndex)
	}
	if !slices.Equal(e.GPUs, gpus) && len(e.GPUs)+len(gpus) > 0 {
		c.add(at+"/gpus", "are %v; hardware.gpus are %v", e.GPUs, gpus)
	}
	var readings []power.Reading
	if e.Samples != "" {
		listed := false
		for _, a := range c.res.Artifacts {
			listed = listed || (a.Path == e.Samples && a.Kind == contract.ArtifactProvenance)
		}
		if !listed {
			c.add(at+"/samples", "%s is not a provenance artifact of the folder", e.Samples)
		}
		data, err := strictjson.ReadFile(c.fsys, e.Samples, c.samplesLimit())
		if err == nil {
			readings, err = power.ParseCSV(data)
		}
		if err != nil {
			c.add(at+"/samples", "%s: %v", e.Samples, err)
			return
		}
		if why := power.Kept(readings, e.GPUs); why != "" {
			c.add(at+"/samples", "%s: %s", e.Samples, why)
		}
	}
	if e.SampleCount != len(readings) {
		c.add(at+"/sample_count", "is %d; the samples hold %d readings", e.SampleCount, len(readings))
	}
	if i, why := power.CheckDropped(e.Dropped, readings); why != "" {
		c.add(contract.Pointer("extensions", "energy", "dropped", i), "%s", why)
	}
	head := *e
	want, _ := derive.Energy(head, readings, c.res, c.outs, c.derive().Reuse)
	for _, part := range []struct {
		ptr       string
		got, want any
	}{
		{at + "/idle_w", e.IdleW, want.IdleW},
		{at + "/requests", e.Requests, want.Requests},
		{at + "/summaries", e.Summaries, want.Summaries},
		{at + "/rounds", e.Rounds, want.Rounds},
	} {
		g, _ := json.Marshal(part.got)
		w, _ := json.Marshal(part.want)
		if string(g) != string(w) {
			c.add(part.ptr, "does not follow from %s and the request records: derived %s", orNone(e.Samples), clip(w))
		}
	}
}

// checkEnergySource holds the source to the ones strata samples with at
// the recorded interval, for the GPUs the probe found (any of them when
// the folder does not say where its GPUs came from).
func (c *checker) checkEnergySource(e *contract.Energy) {
	if e.Source == nil {
		return
	}
	var interval time.Duration
	if e.IntervalS != nil {
		interval = time.Duration(math.Round(*e.IntervalS * float64(time.Second)))
	}
	gpuSource := c.res.Extensions.MachineSources["gpus"]
	if names := power.Sources(gpuSource, interval); !slices.Contains(names, *e.Source) {
		c.add(contract.PtrEnergySource, "%q is not a source strata samples with every %s for the GPUs found by %q (%s)",
			*e.Source, interval, gpuSource, strings.Join(names, "; "))
	}
}

// samplesLimit is the largest power.csv the folder's GPUs can fill.
func (c *checker) samplesLimit() int64 {
	return max(contract.MaxArtifactBytes, power.MaxCSVBytes(len(c.res.Hardware.GPUs)))
}

func orNone(samples string) string {
	if samples == "" {
		return "the (absent) samples"
	}
	return samples
}

// clip shortens a derived value for a message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
