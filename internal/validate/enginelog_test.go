package validate

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/internal/contract"
)

// foreign is one request's timer lines that no record of the baseline has.
const foreign = "0.09.000.000 I slot print_timing: id  0 | task 99 | prompt eval time =      55.00 ms /   777 tokens\n" +
	"0.09.000.001 I slot print_timing: id  0 | task 99 |        eval time =      66.00 ms /    12 tokens\n"

// foreignReason is the reason the baseline with foreign's lines appended
// to its log is nonconforming.
const foreignReason = "the engine answered 1 request strata did not send while the run went, so its latency was measured on a server doing other work: " +
	"engine.log holds the timer lines of 1 request below line 1, where the run's part begins, that no record of outputs.jsonl pairs with, " +
	"more than the 0 dispatched requests without engine timings (the first at line 105: task 99, prompt 777 tokens in 55.00 ms, 12 generated in 66.00 ms)"

// recordReason makes the folder nonconforming for the engine's requests
// strata did not send, with the reason text.
func recordReason(t *testing.T, f fstest.MapFS, text string) {
	t.Helper()
	editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
		at(doc, "run")["status"] = string(contract.StatusNonconforming)
		at(doc, "extensions", "status_reasons")["nonconforming"] = []any{map[string]any{"kind": string(contract.ForeignRequests), "text": text}}
	})
}

// mustPass: the folder, its hashes made again, has no violation.
func mustPass(t *testing.T, fsys fstest.MapFS) {
	t.Helper()
	rehash(t, fsys)
	if v := FS(fsys, bundle(t)); len(v.Violations) > 0 {
		t.Errorf("violations: %v", v.Violations)
	}
}

// TestEngineLogAgreesWithTheRecords: where llama-server's log prints a
// timer line per request, the part of it written while the run went holds
// every timed request's lines with its counts and times; a request strata
// did not send there makes the run nonconforming (derive.Foreign), and the
// reason stands only where the log shows it; what was in the file before
// the run, a log that
// prints no timer line and the lines a cut left out say nothing against
// the records.
func TestEngineLogAgreesWithTheRecords(t *testing.T) {
	t.Parallel()
	logOf := func(f fstest.MapFS) string { return string(f[contract.EngineLog].Data) }
	setLog := func(f fstest.MapFS, s string) { f[contract.EngineLog].Data = []byte(s) }
	for _, c := range []struct {
		name      string
		mutate    func(fstest.MapFS)
		ptr, says string // "": valid
	}{
		{"as written", func(fstest.MapFS) {}, "", ""},
		{"a prompt count that disagrees", func(f fstest.MapFS) {
			setLog(f, strings.Replace(logOf(f), "| task 14 | prompt eval time =       0.82 ms /  4080 tokens", "| task 14 | prompt eval time =       0.82 ms /  4079 tokens", 1))
		}, "/requests/14", "engine.log has no timer lines of sanity-R1 below line 1, where the run's part begins (its timings in outputs.jsonl: prompt 4080 tokens in 0.82 ms, 88 generated in 0.75 ms)"},
		{"a generation time that disagrees", func(f fstest.MapFS) {
			setLog(f, strings.Replace(logOf(f), "| task 14 |        eval time =       0.75 ms", "| task 14 |        eval time =       0.76 ms", 1))
		}, "/requests/14", "no timer lines of sanity-R1"},
		{"a request strata did not send, unrecorded", func(f fstest.MapFS) { setLog(f, logOf(f)+foreign) },
			"/extensions/status_reasons", "leaves out what the records show: " + foreignReason},
		{"a request strata did not send, recorded", func(f fstest.MapFS) {
			setLog(f, logOf(f)+foreign)
			recordReason(t, f, foreignReason)
		}, "", ""},
		{"the reason recorded without the log showing it", func(f fstest.MapFS) { recordReason(t, f, foreignReason) },
			"/extensions/status_reasons/nonconforming/0", "engine.log shows no request strata did not send"},
		{"a request before the run began", func(f fstest.MapFS) {
			setLog(f, foreign+contract.EngineLogRunStart+"\n"+logOf(f))
		}, "", ""},
		{"a request after the run began", func(f fstest.MapFS) {
			setLog(f, contract.EngineLogRunStart+"\n"+foreign+logOf(f))
		}, "/extensions/status_reasons", "engine.log holds the timer lines of 1 request below line 2, where the run's part begins, that no record"},
		{"the records' lines only before the run began", func(f fstest.MapFS) {
			setLog(f, logOf(f)+contract.EngineLogRunStart+"\n")
		}, "", ""},
		{"no timer line at all", func(f fstest.MapFS) { setLog(f, "main: model loaded\n") }, "", ""},
		{"a cut log", func(f fstest.MapFS) {
			setLog(f, logOf(f)[:strings.Index(logOf(f), "| task 14 |")]+"\n"+contract.EngineLogCut+"\n")
		}, "", ""},
		{"extensions.engine.log naming another file", func(f fstest.MapFS) {
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(doc, "extensions")["engine"] = map[string]any{"url": "loopback", "started_by_runner": true, "log": "other.log"}
			})
		}, contract.PtrEngineLog, `is "other.log", which is not the engine_log artifact`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := folder(t, "baseline")
			c.mutate(f)
			if c.ptr == "" {
				mustPass(t, f)
				return
			}
			mustCatch(t, f, bundle(t), c.ptr, c.says)
		})
	}
}
