package resulttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-bench/strata/internal/record"
)

// LlamaLog is an engine log in the words of llama-server b10470 (the shared
// engine's build) for rec: lines of its start, then each answered request's
// timer lines as the server prints them when the request ends, from the
// timings its record keeps.
func LlamaLog(rec *record.Run) []byte {
	timings := make([]json.RawMessage, len(rec.Requests))
	for i, e := range rec.Requests {
		if e.Outcome != nil {
			timings[i] = e.Outcome.Timings
		}
	}
	return llamaLogOf(timings)
}

// llamaLogOf is LlamaLog of the requests' raw timings, in order (nil: a
// request without them).
func llamaLogOf(timings []json.RawMessage) []byte {
	var b strings.Builder
	b.WriteString("0.00.003.331 I srv    load_model: loading model 'Qwen3-8B-Q4_K_M.gguf'\n0.00.406.656 I srv  llama_server: model loaded\n")
	for task, raw := range timings {
		b.WriteString(LlamaTimerLines(task, raw))
	}
	return []byte(b.String())
}

// LlamaTimerLines are the lines llama-server prints when a request (its
// task) ends, from its raw timings ("" when they lack a count or time).
func LlamaTimerLines(task int, raw json.RawMessage) string {
	var t struct {
		PromptN     *int64   `json:"prompt_n"`
		PromptMS    *float64 `json:"prompt_ms"`
		PredictedN  *int64   `json:"predicted_n"`
		PredictedMS *float64 `json:"predicted_ms"`
	}
	if json.Unmarshal(raw, &t) != nil || t.PromptN == nil || t.PromptMS == nil || t.PredictedN == nil || t.PredictedMS == nil {
		return ""
	}
	return fmt.Sprintf("0.02.038.823 I slot print_timing: id  0 | task %d | prompt eval time = %10.2f ms / %5d tokens\n", task, *t.PromptMS, *t.PromptN) +
		fmt.Sprintf("0.02.038.865 I slot print_timing: id  0 | task %d |        eval time = %10.2f ms / %5d tokens\n", task, *t.PredictedMS, *t.PredictedN) +
		fmt.Sprintf("0.02.038.926 I slot      release: id  0 | task %d | stop processing\n", task)
}
