package dialect

import (
	"bytes"
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
