package dialect

import (
	"reflect"
	"testing"
)

// b10470 is what the shared llama-server (b10470, 34af94cd9) wrote to its
// --log-file for one request, and what its two slots write when their
// requests end together.
const (
	b10470 = `0.00.406.656 I srv  llama_server: listening on http://127.0.0.1:18791
0.02.023.088 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0
0.02.038.823 I slot print_timing: id  0 | task 0 | prompt eval time =       2.57 ms /    10 tokens (    0.26 ms per token,  3888.02 tokens per second)
0.02.038.865 I slot print_timing: id  0 | task 0 |        eval time =      13.13 ms /     7 tokens (    2.19 ms per token,   457.07 tokens per second)
0.02.038.879 I slot print_timing: id  0 | task 0 |       total time =      15.70 ms /    17 tokens
0.02.038.926 I slot      release: id  0 | task 0 | stop processing: n_tokens = 16, truncated = 0
`
	twoSlots = `slot print_timing: id  0 | task 12 | prompt eval time =     100.00 ms /    30 tokens (    3.33 ms per token,   300.00 tokens per second)
slot print_timing: id  1 | task 13 | prompt eval time =     101.25 ms /    31 tokens (    3.27 ms per token,   306.17 tokens per second)
slot print_timing: id  1 | task 13 |        eval time =    2000.50 ms /   512 tokens (    3.91 ms per token,   255.94 tokens per second)
slot print_timing: id  0 | task 12 |        eval time =    1999.99 ms /   511 tokens (    3.91 ms per token,   255.50 tokens per second)
`
	// older builds print the timers under one prefixed line.
	multiline = `slot print_timing: id  0 | task 4 | 
prompt eval time =      12.00 ms /    40 tokens (    0.30 ms per token,  3333.33 tokens per second)
       eval time =      30.00 ms /     5 tokens (    6.00 ms per token,   166.67 tokens per second)
      total time =      42.00 ms /    45 tokens
`
)

func TestLlamaLogRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		log  string
		want []LogRequest
	}{
		{"b10470, one request", b10470, []LogRequest{{Task: "0", Line: 3, PromptN: 10, PromptMS: 2.57, PredictedN: 7, PredictedMS: 13.13}}},
		{"two slots interleaved", twoSlots, []LogRequest{
			{Task: "12", Line: 1, PromptN: 30, PromptMS: 100, PredictedN: 511, PredictedMS: 1999.99},
			{Task: "13", Line: 2, PromptN: 31, PromptMS: 101.25, PredictedN: 512, PredictedMS: 2000.5}}},
		{"the timers under one prefixed line", multiline, []LogRequest{{Task: "4", Line: 2, PromptN: 40, PromptMS: 12, PredictedN: 5, PredictedMS: 30}}},
		{"a prompt line whose request never ended", "slot print_timing: id  0 | task 9 | prompt eval time =   1.00 ms /   3 tokens (…)\n", nil},
		{"no timer lines", "main: model loaded\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := LlamaLogRequests([]byte(c.log)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestLogRequestsByDialect: llama-server's log is read; the simulator's
// (which prints no timer lines) and an unknown engine's are not.
func TestLogRequestsByDialect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    Dialect
		want bool
	}{
		{Dialect{Engine: LlamaCpp}, true},
		{Dialect{Engine: LlamaCpp, Simulated: true}, false},
		{Dialect{Engine: Unknown}, false},
		{Dialect{Engine: VLLM}, false},
	} {
		reqs, ok := c.d.LogRequests([]byte(b10470))
		if ok != c.want || ok && len(reqs) != 1 {
			t.Errorf("%s (simulated %v): ok %v with %d requests, want ok %v", c.d.Engine, c.d.Simulated, ok, len(reqs), c.want)
		}
	}
}
