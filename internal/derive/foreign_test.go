package derive

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// timerLines are llama-server's two timer lines of one request.
func timerLines(task string, promptN int, promptMS float64, predictedN int, predictedMS float64) string {
	return fmt.Sprintf("slot print_timing: id  0 | task %s | prompt eval time = %10.2f ms / %5d tokens\n", task, promptMS, promptN) +
		fmt.Sprintf("slot print_timing: id  0 | task %s |        eval time = %10.2f ms / %5d tokens\n", task, predictedMS, predictedN)
}

// llamaTimings are a record's raw llama-server timings.
func llamaTimings(promptN int, promptMS float64, predictedN int, predictedMS float64) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"prompt_n": promptN, "prompt_ms": promptMS, "predicted_n": predictedN, "predicted_ms": predictedMS})
	return b
}

// TestForeign: the timer lines of the log's run part that no record pairs
// with, beyond the dispatched requests without engine timings, are
// requests the engine answered that strata did not send, named by their
// count and the first one's line; lines above the run's start, a record's
// own lines, and no more lines than untimed requests are none.
func TestForeign(t *testing.T) {
	t.Parallel()
	llama := dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470}
	ours := timerLines("3", 10, 2.57, 7, 13.13)
	other := timerLines("9", 777, 55, 12, 66)
	start := contract.EngineLogRunStart + "\n"
	reqs := []contract.Request{{ID: "warmup"}, {ID: "sanity-R1"}, {ID: "sanity-R2"}}
	timed := map[string]contract.Output{"warmup": {Timings: llamaTimings(10, 2.57, 7, 13.13)}}
	untimed := map[string]contract.Output{"warmup": {Timings: llamaTimings(10, 2.57, 7, 13.13)}, "sanity-R1": {}}
	for _, c := range []struct {
		name string
		d    dialect.Dialect
		log  string
		outs map[string]contract.Output
		want string // "": no reason
	}{
		{"the records' lines only", llama, "main: loaded\n" + start + ours, timed, ""},
		{"another request after the run began", llama, "main: loaded\n" + start + ours + other, timed,
			"the engine answered 1 request strata did not send while the run went, so its latency was measured on a server doing other work: " +
				"engine.log holds the timer lines of 1 request below line 3, where the run's part begins, that no record of outputs.jsonl pairs with, " +
				"more than the 0 dispatched requests without engine timings (the first at line 5: task 9, prompt 777 tokens in 55.00 ms, 12 generated in 66.00 ms)"},
		{"two others, one untimed record", llama, start + other + ours + timerLines("11", 5, 1, 2, 3) + timerLines("12", 6, 1, 2, 3), untimed,
			"the engine answered 2 requests strata did not send while the run went, so its latency was measured on a server doing other work: " +
				"engine.log holds the timer lines of 3 requests below line 2, where the run's part begins, that no record of outputs.jsonl pairs with, " +
				"more than the 1 dispatched request without engine timings (the first at line 2: task 9, prompt 777 tokens in 55.00 ms, 12 generated in 66.00 ms)"},
		{"one other, one untimed record", llama, start + ours + other, untimed, ""},
		{"another request before the run began", llama, other + start + ours, timed, ""},
		{"no run start: the whole log is the run's", llama, ours + other, timed, "the first at line 3: task 9"},
		{"a dialect whose log prints no timer line", dialect.Dialect{}, start + ours + other, timed, ""},
		{"no log", llama, "", timed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Foreign(c.d, []byte(c.log), reqs, c.outs)
			switch {
			case c.want == "" && r != nil:
				t.Errorf("got %+v, want no reason", *r)
			case c.want != "" && r == nil:
				t.Errorf("got no reason, want %q", c.want)
			case r != nil && (r.Kind != contract.ForeignRequests || !strings.Contains(r.Text, c.want)):
				t.Errorf("got %s %q, want %s %q", r.Kind, r.Text, contract.ForeignRequests, c.want)
			}
		})
	}
}
