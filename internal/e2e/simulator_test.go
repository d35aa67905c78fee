package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestDisguisedSimulatorIsNonconforming: a simulator in disguise and its
// variants, end to end. A scenario that removes or changes the simulator's
// /props markers does not hide it: it still marks itself, and the run names
// every trace it left and validates as nonconforming.
func TestDisguisedSimulatorIsNonconforming(t *testing.T) {
	t.Parallel()
	for _, props := range []map[string]json.RawMessage{
		{"strata_simulator": json.RawMessage("null")}, // the attack
		{"strata_simulator": json.RawMessage("null"), "strata_simulator_version": json.RawMessage("null"), "build_info": json.RawMessage(`"b10470-34af94cd9"`)},
		{"strata_simulator": json.RawMessage("false"), "strata_simulator_version": json.RawMessage(`"b10470-34af94cd9"`)},
	} {
		o := harness{simulated: true, scenario: &simengine.Scenario{Props: props}}.run(t)
		o.mustBeValid(t)
		reasons := o.reasons()
		shown, _ := json.Marshal(props)
		if o.res.Run.Status != contract.StatusNonconforming {
			t.Errorf("%s: status %s (%s)", shown, o.res.Run.Status, reasons)
		}
		for _, trace := range []string{"the X-Strata-Simulator response header", "/props strata_simulator;", "/props strata_simulator_version",
			`owned_by "strata-simulator"`, `the Server header "strata-simulator"`, "software.engine_version"} {
			if !strings.Contains(reasons, trace) {
				t.Errorf("%s: the reasons do not name %q: %s", shown, trace, reasons)
			}
		}
	}
}

// TestEveryTraceAlone: with every marker removed but one (a proxy in front
// of the simulator), or with the simulator's stand-in model, its counter or
// its GGUF name as the only trace, the run is nonconforming and names that
// trace; with none, it is complete. The cases whose trace is in the facts
// alone share the wire of the one without a trace: one execution is
// finished with each case's facts.
func TestEveryTraceAlone(t *testing.T) {
	t.Parallel()
	cases := map[resulttest.Marker]string{
		resulttest.MarkHeader:       "the X-Strata-Simulator response header",
		resulttest.MarkServer:       `the Server header "strata-simulator"`,
		resulttest.MarkProps:        "/props strata_simulator;",
		resulttest.MarkPropsVersion: "/props strata_simulator_version",
		resulttest.MarkOwnedBy:      `owned_by "strata-simulator"`,
	}
	if len(cases) != len(resulttest.Markers()) {
		t.Fatalf("%d markers, %d cases", len(resulttest.Markers()), len(cases))
	}
	type run struct {
		h    harness
		says string
	}
	runs := map[string]run{"no trace": {harness{}, ""}}
	for m, says := range cases {
		runs[string(m)] = run{harness{keep: []resulttest.Marker{m}}, says}
	}
	standIn := func(edit func(*contract.ModelFile)) harness {
		f := conformingFacts()
		edit(&f.ModelFiles[0])
		return harness{facts: &f}
	}
	sum := dialect.SimulatorModelSHA256
	runs["the stand-in's name"] = run{standIn(func(m *contract.ModelFile) { m.Path = dialect.SimulatorModelFile }), "the stand-in model file name"}
	runs["the stand-in's hash"] = run{standIn(func(m *contract.ModelFile) { m.SHA256 = &sum }), "the stand-in model's SHA-256"}
	ext := func(set func(*contract.Extensions)) harness {
		f := conformingFacts()
		set(&f.Extensions)
		return harness{facts: &f}
	}
	runs["the stand-in's GGUF name"] = run{ext(func(e *contract.Extensions) {
		e.GGUF = &contract.GGUF{File: "model-00001-of-00001.gguf", Metadata: map[string]contract.GGUFFact{
			"name": {Source: "GGUF general.name", Value: dialect.SimulatorModelName}}}
	}), "general.name"}
	zero := int64(0)
	runs["the simulator's counter"] = run{ext(func(e *contract.Extensions) {
		e.Engine = &contract.Engine{URL: "loopback", ServedBeforeRun: &contract.ServedBefore{Answered: &zero,
			Evidence: map[string]float64{"strata_simulator:requests_total": 0}}}
	}), "/metrics counter"}
	plain := harness{}.executeOnce(t)
	for name, r := range runs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var o outcome
			if len(r.h.keep) == 0 { // the facts differ, the wire is the plain one
				o = plain.finishCopy(t, r.h)
			} else {
				o = r.h.run(t)
			}
			o.mustBeValid(t)
			reasons := o.reasons()
			switch {
			case r.says == "" && o.res.Run.Status != contract.StatusComplete:
				t.Errorf("status %s: %s", o.res.Run.Status, reasons)
			case r.says != "" && (o.res.Run.Status != contract.StatusNonconforming || !strings.Contains(reasons, "simulated engine") ||
				!strings.Contains(reasons, r.says)):
				t.Errorf("status %s; the reasons do not name %q: %s", o.res.Run.Status, r.says, reasons)
			}
		})
	}
}
