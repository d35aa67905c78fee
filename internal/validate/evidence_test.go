package validate

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/resulttest"
)

// editJSON rewrites one JSON file of the folder by hand.
func editJSON(t testing.TB, fsys fstest.MapFS, file string, edit func(doc map[string]any)) {
	t.Helper()
	fsys[file].Data = resulttest.EditJSON(t, fsys[file].Data, edit)
}

func at(doc map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		doc = doc[k].(map[string]any)
	}
	return doc
}

// shiftOffset moves one request's offset_s in outputs.jsonl by d seconds.
func shiftOffset(t testing.TB, fsys fstest.MapFS, id string, d float64) {
	t.Helper()
	re := regexp.MustCompile(`("request_id":"` + regexp.QuoteMeta(id) + `",.*?"offset_s":)([0-9.e-]+)`)
	out := re.ReplaceAllFunc(fsys[contract.OutputsFile].Data, func(m []byte) []byte {
		sub := re.FindSubmatch(m)
		v, err := strconv.ParseFloat(string(sub[2]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return append(append([]byte{}, sub[1]...), strconv.FormatFloat(v+d, 'g', -1, 64)...)
	})
	if bytes.Equal(out, fsys[contract.OutputsFile].Data) {
		t.Fatalf("no offset_s of %s", id)
	}
	fsys[contract.OutputsFile].Data = out
}

// TestValidatorRederivesFromTheEvidence: the claims results.json makes of
// itself (its status, corpus, durations, engine, recovery, extensions) are
// held to the rest of the folder; each hand edit, with the hashes
// recomputed, is caught where it was made.
func TestValidatorRederivesFromTheEvidence(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	complete := func(doc map[string]any) {
		at(doc, "run")["status"] = contract.StatusComplete
		at(doc, "extensions", "status_reasons")["nonconforming"] = []any{}
	}
	simulatorTrace := func(edit func(cfg map[string]any)) func(*testing.T, fstest.MapFS) {
		return func(t *testing.T, f fstest.MapFS) { editJSON(t, f, contract.ConfigFile, edit) }
	}
	for _, c := range []struct {
		name   string
		folder string
		mutate func(*testing.T, fstest.MapFS)
		ptr    string
		says   string
	}{
		// A simulator's folder claiming to be complete.
		{"the simulator's folder made complete", "nonconforming", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, complete)
		}, "/run/status", "but the reasons give nonconforming"},
		{"the simulator's folder made complete, its traces named nowhere", "nonconforming", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, complete)
		}, "/extensions/status_reasons", "the X-Strata-Simulator response header"},
		{"the simulator's version in /props", "baseline", simulatorTrace(func(cfg map[string]any) {
			at(cfg, "props")["strata_simulator_version"] = "strata-simulator-0.1.0-dev"
		}), "/run/status", "is complete, but the reasons give nonconforming"},
		{"the simulator's header", "baseline", simulatorTrace(func(cfg map[string]any) {
			cfg["simulator_header"] = "strata-simulator-0.1.0-dev"
		}), "/extensions/status_reasons", "the X-Strata-Simulator response header"},
		{"the simulator's owned_by", "baseline", simulatorTrace(func(cfg map[string]any) {
			at(cfg, "models")["data"].([]any)[0].(map[string]any)["owned_by"] = dialect.SimulatorOwner
		}), "/extensions/status_reasons", `owned_by "strata-simulator"`},
		{"the stand-in model's hash", "baseline", func(t *testing.T, f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"sha256": "`+strings.Repeat("cd", 32)+`"`, `"sha256": "`+dialect.SimulatorModelSHA256+`"`, 1)
		}, "/extensions/status_reasons", "the stand-in model's SHA-256"},
		{"the stand-in model's name", "baseline", func(t *testing.T, f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"path": "Qwen3-8B-Q4_K_M.gguf"`, `"path": "`+dialect.SimulatorModelFile+`"`, 1)
		}, "/extensions/status_reasons", "the stand-in model file name"},
		// The preflight showed the engine's template is not the profile's.
		{"a preflight that shows a fixture rendered otherwise", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) { at(doc, "extensions")["preflight"] = toolsDropped(t) })
		}, "/run/status", "is complete, but the reasons give nonconforming"},
		{"the same preflight said to be off the chat path", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				pf := toolsDropped(t).(map[string]any)
				pf["off_chat_path"] = true
				at(doc, "extensions")["preflight"] = pf
			})
		}, "/extensions/preflight/off_chat_path", "renders the bundle's template as its chat path does"},
		// Item 6: the corpus.
		{"another corpus", "baseline", func(t *testing.T, f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"corpus_sha256": "538a81cc`, `"corpus_sha256": "638a81cc`, 1)
		}, "/protocol/corpus_sha256", "the corpus of protocol"},
		// The durations.
		{"a required duration of 123,456,789 s", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) { at(doc, "run")["required_duration_s"] = json.Number("123456789") })
		}, "/run/required_duration_s", "the request trace in outputs.jsonl"},
		{"an optional duration doubled", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				d, _ := at(doc, "run")["optional_duration_s"].(json.Number).Float64()
				at(doc, "run")["optional_duration_s"] = json.Number(strconv.FormatFloat(2*d, 'g', -1, 64))
			})
		}, "/run/optional_duration_s", "the request trace in outputs.jsonl"},
		{"the trace's last request moved 1,000 s later", "baseline", func(t *testing.T, f fstest.MapFS) {
			shiftOffset(t, f, "sanity-T4", 1000)
		}, "/requests/21", "its dispatched_at is"},
		// The engine.
		{"an engine field beside the dialect", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) { at(doc, "extensions", "engine_dialect")["engine"] = "strata-server" })
		}, "/extensions/engine_dialect", "additional properties"},
		{"another llama.cpp build recorded", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions", "engine_dialect", "dialect")["build"] = json.Number("10470")
			})
		}, "/extensions/engine_dialect/dialect", "identifies llama.cpp b9928"},
		{"another engine recorded", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions", "engine_dialect", "dialect")["engine"] = "strata-server"
			})
		}, "/extensions/engine_dialect/dialect", "identifies llama.cpp b9928"},
		{"/props naming another engine", "baseline", simulatorTrace(func(cfg map[string]any) {
			delete(at(cfg, "props"), "build_info")
			cfg["v1_status"] = map[string]any{"service": "strata", "engine": "0.1.41"}
		}), "/extensions/engine_dialect/dialect", "identifies strata-server"},
		{"another budget recorded", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions", "engine_dialect", "reasoning_budget")["value"] = json.Number("0")
			})
		}, "/extensions/engine_dialect/reasoning_budget", "the recorded dialect's"},
		// A recovery.
		{"a complete run said recovered", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions")["recovered"] = map[string]any{"from": "the run's journal (journal.jsonl)", "finished_requests": json.Number("34"),
					"torn_last_line": false, "note": "the engine log was held in memory by the runner and is lost"}
			})
		}, "/extensions/recovered", "never complete"},
		{"a partial run said recovered", "partial", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions")["recovered"] = map[string]any{"from": "the run's journal (journal.jsonl)", "finished_requests": json.Number("15"),
					"torn_last_line": false, "note": "the engine log was held in memory by the runner and is lost"}
			})
		}, "/extensions/recovered", "names the runner's stop"},
		{"a request stopped in flight in a run not recovered", "partial", func(t *testing.T, f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"kind": "truncated_stream"`, `"kind": "runner_stopped"`, 1)
		}, "/requests/14/error/kind", "only a run recovered from its journal has"},
		// The extensions.
		{"a block strata does not write", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) { at(doc, "extensions")["approved"] = true })
		}, "/extensions", "additional properties 'approved' not allowed"},
		{"a limitation that is not text", "baseline", func(t *testing.T, f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) { at(doc, "extensions")["limitations"] = []any{json.Number("1")} })
		}, "/extensions/limitations/0", "want string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := folder(t, c.folder)
			c.mutate(t, fsys)
			mustCatch(t, fsys, b, c.ptr, c.says)
		})
	}
}

// TestSlewedWallClockIsNoEdit: in a folder whose wall times were read one
// by one (before record.Run.Wall) a dispatched_at may run ahead of its
// offset_s as the wall clock was moved, here sanity-T4's by half a second: past the run's required duration on
// the wall clock but inside the slack, and on the durations' own clock the
// dispatch is inside the run. The offset moved past the duration is still
// caught.
func TestSlewedWallClockIsNoEdit(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	fsys := folder(t, "baseline")
	re := regexp.MustCompile(`("request_id":"sanity-T4",.*?"dispatched_at":")([^"]+)`)
	fsys[contract.OutputsFile].Data = re.ReplaceAllFunc(fsys[contract.OutputsFile].Data, func(m []byte) []byte {
		sub := re.FindSubmatch(m)
		at, err := time.Parse(timeLayout, string(sub[2]))
		if err != nil {
			t.Fatal(err)
		}
		return append(sub[1], at.Add(500*time.Millisecond).Format(timeLayout)...)
	})
	rehash(t, fsys)
	if v := FS(fsys, b); len(v.Violations) != 0 {
		t.Errorf("a slewed wall clock read as an edit:\n%v", v.Violations)
	}
	shiftOffset(t, fsys, "sanity-T4", 0.5)
	mustCatch(t, fsys, b, "/requests/21", "outside the run's")
}

// toolsDropped is the preflight of an engine serving a template without
// the tools (llama-server --chat-template chatml): T1 renders otherwise.
func toolsDropped(t testing.TB) any {
	at, engine, frozen := 412, 180, 222
	pf := contract.Preflight{Verifiable: true, Source: "POST /apply-template, POST /tokenize", BundleTemplateSHA256: strings.Repeat("ab", 32),
		Differ: 1, Fixtures: []contract.PreflightFixture{{RequestID: "sanity-T1", FirstDifference: &at, EngineText: "<|im_start|>user", StrataText: "<tools>",
			EngineTokens: &engine, FrozenTokens: frozen}}}
	data, err := json.Marshal(pf)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
