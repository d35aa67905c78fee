package measure

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// ollamaLog is an Ollama server log whose llama-server helper printed the
// timer lines of two requests before the run and two while it went (as
// the real 0.32.11 prints them).
const ollamaLog = `time=2026-12-06T09:00:00Z level=INFO source=server.go msg="starting runner"
slot print_timing: id  0 | task 0 | prompt eval time =       4.94 ms /    30 tokens (    0.16 ms per token,  6069.19 tokens per second)
slot print_timing: id  0 | task 0 |        eval time =      20.02 ms /     7 tokens (    2.86 ms per token,   349.70 tokens per second)
` + contract.EngineLogRunStart + `
slot print_timing: id  0 | task 8 | prompt eval time =       3.36 ms /    27 tokens (    0.12 ms per token,  8033.32 tokens per second)
slot print_timing: id  0 | task 8 |        eval time =      27.25 ms /     7 tokens (    3.89 ms per token,   256.83 tokens per second)
slot print_timing: id  0 | task 16 | prompt eval time =      98.74 ms /  4083 tokens (    0.02 ms per token, 41349.77 tokens per second)
slot print_timing: id  0 | task 16 |        eval time =      27.25 ms /     7 tokens (    3.89 ms per token,   256.83 tokens per second)
`

var ollamaNative = dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11", API: dialect.APINative, Model: "m"}

// doneLine is an Ollama done line of a request that generated 7 tokens,
// with its counts and durations (nanoseconds: the helper's milliseconds
// truncated).
func doneLine(input, promptNS, evalNS int64) json.RawMessage {
	b, _ := json.Marshal(map[string]int64{"prompt_eval_count": input, "prompt_eval_duration": promptNS, "eval_count": 7, "eval_duration": evalNS})
	return b
}

// TestLogSplitPairsByCountsAndTimes: each record's prompt is split by the
// log line of the run's part with its generated tokens and both times (not
// by order), a line is paired once, a record no line of the run matches
// (one before the run's start, or another request's times) has none.
func TestLogSplitPairsByCountsAndTimes(t *testing.T) {
	t.Parallel()
	s := NewLogSplit(ollamaNative, []byte(ollamaLog))
	if s == nil {
		t.Fatal("no split from a log with timer lines")
	}
	long := doneLine(4093, 98_741_234, 27_249_999)
	if sp := s.Of(long); sp == nil || sp.Read != 4083 || sp.Cached != 10 || !strings.HasPrefix(sp.Source, contract.EngineLog+" line 7, ") {
		t.Errorf("the 4K request: %+v, want 4083 read and 10 cached from line 7", sp)
	}
	if sp := s.Of(long); sp != nil {
		t.Errorf("a line paired twice: %+v", sp)
	}
	if sp := s.Of(doneLine(30, 4_940_000, 20_020_000)); sp != nil {
		t.Errorf("a line above the run's start paired: %+v", sp)
	}
	if sp := s.Of(doneLine(30, 3_360_000, 27_300_000)); sp != nil {
		t.Errorf("a decode time 0.05 ms off paired: %+v", sp)
	}
	if sp := s.Of(doneLine(20, 3_360_000, 27_250_000)); sp != nil {
		t.Errorf("a prompt shorter than the tokens evaluated paired: %+v", sp)
	}
	if sp := s.Of(doneLine(30, 3_359_999, 27_250_000)); sp == nil || sp.Read != 27 || sp.Cached != 3 {
		t.Errorf("the short request: %+v, want 27 read and 3 cached", sp)
	}
}

// TestLogSplitOnlyWhereAnswersDoNotSplit: llama-server's timings split
// the prompt themselves, Ollama's OpenAI-compatible endpoint has no
// timers to pair, and a log without timer lines gives nothing.
func TestLogSplitOnlyWhereAnswersDoNotSplit(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*LogSplit{
		"llama-server":              NewLogSplit(dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470}, []byte(ollamaLog)),
		"Ollama's OpenAI endpoint":  NewLogSplit(dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11"}, []byte(ollamaLog)),
		"a log without timer lines": NewLogSplit(ollamaNative, []byte("time=… level=INFO msg=\"listening\"\n")),
		"no log":                    NewLogSplit(ollamaNative, nil),
	} {
		if s != nil {
			t.Errorf("%s: a split", name)
		}
		if sp := s.Of(doneLine(4093, 98_740_000, 27_250_000)); sp != nil {
			t.Errorf("%s: %+v", name, sp)
		}
	}
}
