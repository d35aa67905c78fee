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
	// ollama0_32_11 is what Ollama 0.32.11 (../shared/engines/ollama)
	// printed for two /api/chat requests: its llama-server helper's lines
	// (b10353) among its own.
	ollama0_32_11 = `slot print_timing: id  0 | task 0 | prompt eval time =     242.93 ms /     9 tokens (   26.99 ms per token,    37.05 tokens per second)
slot print_timing: id  0 | task 0 |        eval time =      25.68 ms /     5 tokens (    5.13 ms per token,   194.74 tokens per second)
slot print_timing: id  0 | task 0 |       total time =     268.61 ms /    14 tokens
[GIN] 2026/12/06 - 07:37:56 | 200 |  1.505083842s |       127.0.0.1 | POST     "/api/chat"
slot print_timing: id  0 | task 0 |    graphs reused =          4
slot      release: id  0 | task 0 | stop processing: n_tokens = 13, truncated = 0
slot   operator(): id  0 | task 6 | cached n_tokens = 8, memory_seq_rm [8, end)
slot print_timing: id  0 | task 6 | prompt eval time =      52.36 ms /     1 tokens (   52.36 ms per token,    19.10 tokens per second)
slot print_timing: id  0 | task 6 |        eval time =      40.38 ms /     7 tokens (    5.77 ms per token,   173.33 tokens per second)
slot print_timing: id  0 | task 6 |       total time =      92.75 ms /     8 tokens
[GIN] 2026/12/06 - 07:37:56 | 200 |  364.618786ms |       127.0.0.1 | POST     "/api/chat"
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
			if got := llamaLogRequests([]byte(c.log)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestLogRequestsByDialect: llama-server's log is read, and Ollama's,
// which holds its llama-server helper's timer lines whichever API strata
// speaks; the simulator's (which prints no timer lines) and an unknown
// engine's are not.
func TestLogRequestsByDialect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    Dialect
		log  string
		want int // requests read, -1: not read
	}{
		{Dialect{Engine: LlamaCpp}, b10470, 1},
		{Dialect{Engine: LlamaCpp, Simulated: true}, b10470, -1},
		{Dialect{Engine: Unknown}, b10470, -1},
		{Dialect{Engine: VLLM}, b10470, -1},
		{Dialect{Engine: Ollama, API: APINative}, ollama0_32_11, 2},
		{Dialect{Engine: Ollama}, ollama0_32_11, 2},
		{Dialect{Engine: Ollama, API: APINative, Simulated: true}, ollama0_32_11, -1},
	} {
		reqs, ok := c.d.LogRequests([]byte(c.log))
		if got := len(reqs); !ok {
			got = -1
		} else if got != c.want {
			t.Errorf("%s %s (simulated %v): %d requests %+v, want %d", c.d.Engine, c.d.API, c.d.Simulated, got, reqs, c.want)
		}
		if ok != (c.want >= 0) {
			t.Errorf("%s %s (simulated %v): read %v, want %v", c.d.Engine, c.d.API, c.d.Simulated, ok, c.want >= 0)
		}
	}
}
