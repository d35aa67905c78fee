package validate

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
)

// What the folder's other evidence says about the claims results.json
// makes of itself: the protocol's corpus, the engine the requests were
// built for, the durations and a recovery.

// readServer reads what the server served about itself from config.json
// (the status rules and the identification read it). A folder without it
// has no config artifact, which checkArtifacts reports.
func (c *checker) readServer() {
	data, err := strictjson.ReadFile(c.fsys, contract.ConfigFile, contract.MaxArtifactBytes)
	if err != nil {
		return
	}
	if err := strictjson.Check(data); err != nil {
		c.add(contract.ConfigFile, "is not strict JSON: %v", err)
		return
	}
	ev, err := contract.ReadServerEvidence(data)
	if err != nil {
		c.add(contract.ConfigFile, "%v", err)
		return
	}
	c.server = ev
}

// checkCorpus: the corpus SHA-256 and the profile are those of the
// protocol the result names (checkFormat has made sure it is the bundle's).
func (c *checker) checkCorpus() {
	p, def := c.res.Protocol, c.fx.Protocol
	if p.CorpusSHA256 != def.CorpusSHA256 {
		c.add(contract.PtrProtocolCorpusSHA256, "is %q; the corpus of protocol %s has SHA-256 %s", p.CorpusSHA256, p.ID, def.CorpusSHA256)
	}
	if p.Profile != def.Profile {
		c.add(contract.PtrProtocolProfile, "is %q; protocol %s measures the profile %s", p.Profile, p.ID, def.Profile)
	}
}

// checkEngineDialect: the recorded dialect is the one the server's
// evidence in config.json identifies, and its budget and setting names
// are that dialect's.
func (c *checker) checkEngineDialect() {
	d, known := c.recordedDialect()
	if !known {
		return // checkBody says it, once
	}
	if got := dialect.Identify(c.server); !got.Admits(d) {
		c.add("/extensions/engine_dialect/dialect", "records %s (%s, simulated %v), but the server's evidence in %s identifies %s (%s, simulated %v)",
			d.Name(), d.IdentifiedBy, d.Simulated, contract.ConfigFile, got.Name(), got.IdentifiedBy, got.Simulated)
	}
	ed := c.res.Extensions.EngineDialect
	// Compared as the folder says it, in JSON (the field is a pointer); a
	// struct of strings, numbers and booleans always encodes.
	saved, _ := json.Marshal(ed.ReasoningBudget)
	recorded, _ := json.Marshal(d.ReasoningBudget())
	if !bytes.Equal(saved, recorded) {
		c.add("/extensions/engine_dialect/reasoning_budget", "is %s; the recorded dialect's is %s", saved, recorded)
	}
	want := d.SettingNames()
	if len(want) == 0 {
		want = map[string]string{}
	}
	if !reflect.DeepEqual(ed.SettingNames, want) {
		c.add("/extensions/engine_dialect/setting_names", "is %v; the recorded dialect's are %v", ed.SettingNames, want)
	}
}

// wallSlack is how far a dispatch's offset on the monotonic clock may lie
// from the same offset on the wall clock (dispatched_at). The runner takes
// every wall time from one reading (record.Run.Wall), so its folders agree
// to the microsecond; the slack is for folders from before that, whose two
// clocks were read apart (a step of the wall clock meanwhile is beyond it).
// More than that means one of them was changed.
func wallSlack(offset float64) float64 { return 1 + 1e-3*math.Abs(offset) }

// checkDurations: required_duration_s and optional_duration_s are what the
// trace in outputs.jsonl gives (the writer computes them the same way, from
// the values it writes, so only float rounding may differ), and each
// dispatch's monotonic offset agrees with its wall time.
func (c *checker) checkDurations() {
	r := c.res
	req, opt, _ := derive.Durations(r.Requests, c.outs, r.Run.OptionalConcurrency)
	for _, f := range []struct {
		ptr       string
		got, want *float64
	}{{contract.PtrRunRequiredDurationS, r.Run.RequiredDurationS, req}, {contract.PtrRunOptionalDurationS, r.Run.OptionalDurationS, opt}} {
		if !eqF(f.got, f.want) {
			c.add(f.ptr, "is %s; the request trace in outputs.jsonl (offset_s and total_s) gives %s", show(f.got), show(f.want))
		}
	}
	warm, ok := c.outs[protocol.WarmupID()]
	if !ok || warm.DispatchedAt == nil {
		return
	}
	w0, err := time.Parse(timeLayout, *warm.DispatchedAt)
	if err != nil {
		return // checkDispatch reports it
	}
	for i, q := range r.Requests {
		o, ok := c.outs[q.ID]
		if !ok || o.OffsetS == nil || o.DispatchedAt == nil {
			continue
		}
		t, err := time.Parse(timeLayout, *o.DispatchedAt)
		if err != nil {
			continue
		}
		wall := t.Sub(w0).Seconds()
		if math.Abs(wall-*o.OffsetS) > wallSlack(wall) {
			c.add(contract.Pointer("requests", i), "outputs.jsonl says %s was dispatched %s s after the run's first dispatch (offset_s), but its dispatched_at is %.6f s after the warm-up's",
				q.ID, show(o.OffsetS), wall)
		}
	}
}

// checkOffset: a dispatched request has its offset from the run's first
// dispatch (the warm-up's, at zero), a skipped one none.
func (c *checker) checkOffset(p func(...any) string, q *contract.Request, o contract.Output) {
	switch {
	case q.Status == contract.Skipped && o.OffsetS != nil:
		c.add(p(), "outputs.jsonl has an offset_s for %s, which was skipped", q.ID)
	case q.Status != contract.Skipped && o.OffsetS == nil:
		c.add(p(), "outputs.jsonl has no offset_s for %s, which was dispatched: the run's durations cannot be rebuilt", q.ID)
	case o.OffsetS != nil && (*o.OffsetS < 0 || q.ID == protocol.WarmupID() && *o.OffsetS != 0):
		c.add(p(), "outputs.jsonl offset_s of %s is %s; the warm-up is the run's first dispatch, at 0", q.ID, show(o.OffsetS))
	}
}

// checkRecovered: extensions.recovered is there exactly when the run was
// recovered from its journal, and then agrees with the records: such a run
// names the stop as its interruption and abort, is never complete, and
// finished the requests it says.
func (c *checker) checkRecovered(recordedPartial []string) {
	r := c.res
	ext := r.Extensions
	stopped, finished := 0, 0
	for i, q := range r.Requests {
		switch {
		case q.Status == contract.Skipped:
		case q.Error != nil && q.Error.Kind == derive.RunnerStoppedKind:
			stopped++
			if ext.Recovered == nil {
				c.add(contract.Pointer("requests", i, "error", "kind"), "is %s, which only a run recovered from its journal has, and extensions.recovered is absent", derive.RunnerStoppedKind)
			}
		default:
			finished++
		}
	}
	interruption := derive.Interruption(derive.RunnerStopped).Text
	named := false
	for _, s := range recordedPartial {
		named = named || s == interruption
	}
	aborted := ext.Aborted == derive.RunnerStopped
	if ext.Recovered == nil {
		if named || aborted {
			c.add("/extensions", "says the run was recovered from its journal (status_reasons, aborted), but has no extensions.recovered")
		}
		return
	}
	if !named || !aborted {
		c.add("/extensions/recovered", "a recovered run names the runner's stop as its interruption (status_reasons.partial) and its abort (aborted)")
	}
	if r.Run.Status == contract.StatusComplete {
		c.add("/extensions/recovered", "a run recovered from its journal is never complete")
	}
	if ext.Recovered.FinishedRequests != finished {
		c.add("/extensions/recovered/finished_requests", "is %d; the records show %d finished requests (and %d stopped in flight)", ext.Recovered.FinishedRequests, finished, stopped)
	}
}
