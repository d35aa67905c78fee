package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// LogRequest is one request as an engine's log tells it: the timer lines
// the engine printed when the request ended.
type LogRequest struct {
	// Task is the engine's own ID of the request ("" where its log names
	// none).
	Task string
	// Line is the 1-based line of the prompt's timer line in the log read.
	Line int
	// PromptN and PromptMS are the prompt tokens evaluated and the time
	// taken; PredictedN and PredictedMS the tokens generated and theirs.
	PromptN, PredictedN   int64
	PromptMS, PredictedMS float64
}

// LogRequests reads the per-request timer lines out of an engine log in
// this engine's words. ok is false when strata knows no such lines of this
// engine's log (the log is then kept, but nothing in it is held against the
// records): the simulator prints none, and other engines' logs were not
// read for them.
func (d Dialect) LogRequests(log []byte) (reqs []LogRequest, ok bool) {
	read := factsOf(d.Engine).requestLog
	if d.Simulated || read == nil {
		return nil, false
	}
	return read(log), true
}

// The timer lines of llama-server: since b10470 (tools/server/server-context.cpp
// server_slot::print_timings @34af94cd9) each is its own line,
//
//	slot print_timing: id  0 | task 7 | prompt eval time =  2.57 ms /    10 tokens (…)
//	slot print_timing: id  0 | task 7 |        eval time = 13.13 ms /     7 tokens (…)
//
// and earlier builds print the three under one "print_timing: id  0 | task
// 7 |" line in one call, so a timer line without a task belongs to the
// last task named. The values are printed with two decimals ("%10.2f").
var (
	llamaTask       = regexp.MustCompile(`\| task (-?\d+) \|`)
	llamaPromptEval = regexp.MustCompile(`prompt eval time =\s*([0-9.]+) ms /\s*(\d+) tokens`)
	llamaEval       = regexp.MustCompile(`\beval time =\s*([0-9.]+) ms /\s*(\d+) (?:tokens|runs)`)
)

// llamaLogRequests reads llama-server's per-request timer lines: a
// request is listed once both its prompt and its generation line were
// read, in the order its prompt line appears.
func llamaLogRequests(log []byte) []LogRequest {
	var out []LogRequest
	open := map[string]int{} // task → index in out of a request without its eval line
	task := ""
	for n, line := range bytes.Split(log, []byte("\n")) {
		if m := llamaTask.FindSubmatch(line); m != nil {
			task = string(m[1])
		}
		if m := llamaPromptEval.FindSubmatch(line); m != nil {
			ms, n1 := parseTimer(m)
			open[task] = len(out)
			out = append(out, LogRequest{Task: task, Line: n + 1, PromptMS: ms, PromptN: n1, PredictedN: -1})
			continue
		}
		if m := llamaEval.FindSubmatch(line); m != nil {
			if i, ok := open[task]; ok {
				out[i].PredictedMS, out[i].PredictedN = parseTimer(m)
				delete(open, task)
			}
		}
	}
	var done []LogRequest
	for _, r := range out {
		if r.PredictedN >= 0 {
			done = append(done, r)
		}
	}
	return done
}

// parseTimer reads "<ms> ms / <n> tokens" out of a timer line's match; a
// value that does not parse is -1 (the regular expressions admit only
// digits and dots, so only an absurd one fails).
func parseTimer(m [][]byte) (ms float64, n int64) {
	ms, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		ms = -1
	}
	n, err = strconv.ParseInt(string(m[2]), 10, 64)
	if err != nil {
		n = -1
	}
	return ms, n
}

// LogTimers are a record's engine timers in the terms of its log's timer
// lines: the prompt tokens evaluated and their time, the tokens generated
// and theirs. PromptN is nil where the record does not count the evaluated
// tokens apart: Ollama's done line counts the whole prompt, cached tokens
// included (Input; llm/llama_server.go @96fb6d2fa l.1509–1511).
type LogTimers struct {
	PromptN, Input, PredictedN *int64
	PromptMS, PredictedMS      *float64
}

// String says the timers as a reader of the log compares them.
func (t LogTimers) String() string {
	prompt := ""
	if t.PromptN != nil {
		prompt = fmt.Sprintf("prompt %d tokens", *t.PromptN)
	} else {
		prompt = fmt.Sprintf("prompt of %d tokens, cached ones included,", *t.Input)
	}
	return fmt.Sprintf("%s in %.2f ms, %d generated in %.2f ms", prompt, *t.PromptMS, *t.PredictedN, *t.PredictedMS)
}

// LogTimersOf reads a record's raw timings (outputs.jsonl's) in the terms
// of its log's timer lines: llama-server's timings as they are; Ollama's
// done line, whose durations are the helper's prompt_ms and predicted_ms
// in whole nanoseconds (llm/llama_server.go @96fb6d2fa l.2016–2019). false
// when any value the log prints is absent.
func (d Dialect) LogTimersOf(raw json.RawMessage) (LogTimers, bool) {
	var t LogTimers
	if d.Timers() == TimersOllama {
		var o struct {
			Input      *int64   `json:"prompt_eval_count"`
			PromptNS   *float64 `json:"prompt_eval_duration"`
			Predicted  *int64   `json:"eval_count"`
			DecodingNS *float64 `json:"eval_duration"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &o) != nil || o.Input == nil || o.PromptNS == nil || o.Predicted == nil || o.DecodingNS == nil {
			return t, false
		}
		promptMS, predictedMS := *o.PromptNS/1e6, *o.DecodingNS/1e6
		return LogTimers{Input: o.Input, PredictedN: o.Predicted, PromptMS: &promptMS, PredictedMS: &predictedMS}, true
	}
	var l struct {
		PromptN     *int64   `json:"prompt_n"`
		PromptMS    *float64 `json:"prompt_ms"`
		PredictedN  *int64   `json:"predicted_n"`
		PredictedMS *float64 `json:"predicted_ms"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &l) != nil || l.PromptN == nil || l.PromptMS == nil || l.PredictedN == nil || l.PredictedMS == nil {
		return t, false
	}
	return LogTimers{PromptN: l.PromptN, PredictedN: l.PredictedN, PromptMS: l.PromptMS, PredictedMS: l.PredictedMS}, true
}

// logPrecision is how far a time the log prints with two decimals may lie
// from the record's: the rounding, and Ollama's truncation of the
// helper's milliseconds to whole nanoseconds.
const logPrecision = 0.005 + 1e-6

// MatchLog is the first request of the log not yet used that is the
// record's with timers t: the same tokens generated, both times the same
// to the log's two decimals, and the same prompt tokens evaluated (where
// the record counts them apart; else no more than its whole prompt); -1
// when none is.
func MatchLog(logged []LogRequest, used []bool, t LogTimers) int {
	for j, l := range logged {
		prompt := t.PromptN != nil && l.PromptN == *t.PromptN || t.PromptN == nil && l.PromptN >= 0 && l.PromptN <= *t.Input
		if !used[j] && prompt && l.PredictedN == *t.PredictedN &&
			math.Abs(l.PromptMS-*t.PromptMS) <= logPrecision && math.Abs(l.PredictedMS-*t.PredictedMS) <= logPrecision {
			return j
		}
	}
	return -1
}
