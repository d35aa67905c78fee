package simengine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-bench/strata/internal/dialect"
)

// TestNoScenarioRemovesTheMarkers: a scenario that tries to disguise the
// simulator (its /props marker or version removed or changed) still gets
// both in /props and the header on every answer, in each dialect that has
// /props and in one that has not.
func TestNoScenarioRemovesTheMarkers(t *testing.T) {
	t.Parallel()
	for _, props := range []map[string]json.RawMessage{
		{"strata_simulator": json.RawMessage("null")},
		{"strata_simulator": json.RawMessage("false"), "strata_simulator_version": json.RawMessage(`"b10470-34af94cd9"`)},
		{"strata_simulator_version": json.RawMessage("null"), "build_info": json.RawMessage(`"b9928-81ff7ab"`)},
	} {
		for _, d := range []string{DialectLlamaCpp, DialectIKLlama, DialectVLLM} {
			url := startAs(t, d, func(c *Config) { c.Scenario.Props = props })
			for _, path := range []string{"/health", "/v1/models"} {
				if r := call(t, "GET", url+path, nil); r.header.Get(dialect.SimulatorHeaderName) != Version() {
					t.Errorf("%s %s: %s answered without %s", d, show(props), path, dialect.SimulatorHeaderName)
				}
			}
			if d == DialectVLLM {
				continue // no /props
			}
			r := call(t, "GET", url+"/props", nil)
			p := object(t, r.body)
			if p["strata_simulator"] != true || p["strata_simulator_version"] != Version() || r.header.Get(dialect.SimulatorHeaderName) != Version() {
				t.Errorf("%s %s: /props says strata_simulator %v, strata_simulator_version %v; header %q", d, show(props), p["strata_simulator"], p["strata_simulator_version"], r.header.Get(dialect.SimulatorHeaderName))
			}
		}
	}
}

// show is a scenario's props as JSON.
func show(props map[string]json.RawMessage) string {
	b, _ := json.Marshal(props)
	return string(b)
}

// TestStandInModelIsAKnownTrace: the stand-in GGUF's bytes are fixed, so
// its name and SHA-256 are traces of the simulator (dialect's constants).
func TestStandInModelIsAKnownTrace(t *testing.T) {
	t.Parallel()
	for range 2 {
		path, err := WriteModel(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != dialect.SimulatorModelSHA256 || filepath.Base(path) != dialect.SimulatorModelFile {
			t.Errorf("the stand-in is %s with SHA-256 %s; dialect knows %s, %s", filepath.Base(path), got, dialect.SimulatorModelFile, dialect.SimulatorModelSHA256)
		}
	}
}
