package measure

import (
	"encoding/json"
	"fmt"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// LogSplit pairs a run's records with the per-request timer lines of its
// engine log, for an engine whose answer counts the prompt whole
// (dialect.Counts.NoSplit) while its log prints the tokens it evaluated:
// Ollama's done line says prompt_eval_count, the llama-server helper's
// cache_n + prompt_n, and its log the helper's "prompt eval time = … ms /
// N tokens", prompt_n (llm/llama_server.go @96fb6d2fa l.1509–1511). The
// assembly and the validator read the same log, the folder's, in the
// same order, and so pair alike.
type LogSplit struct {
	d      dialect.Dialect
	logged []dialect.LogRequest
	used   []bool
	from   int
}

// NewLogSplit reads the run's part of an engine log for the splits it
// gives; nil when the dialect's answers split the prompt themselves or the
// log has no timer line of this engine.
func NewLogSplit(d dialect.Dialect, log []byte) *LogSplit {
	f := d.Timers().Fields()
	if len(log) == 0 || f.Counts == nil || f.Counts.NoSplit == "" {
		return nil
	}
	logged, from, _ := runLines(d, log)
	if len(logged) == 0 {
		return nil
	}
	return &LogSplit{d: d, logged: logged, used: make([]bool, len(logged)), from: from}
}

// Of is the split of the prompt of the record whose raw timings are
// given: the tokens the log line with its generated tokens and both times
// (dialect.MatchLog) says were evaluated, the rest of its prompt cached;
// nil when no line not yet paired is its.
func (s *LogSplit) Of(timings json.RawMessage) *Split {
	if s == nil {
		return nil
	}
	t, ok := s.d.LogTimersOf(timings)
	if !ok || t.Input == nil {
		return nil
	}
	j := dialect.MatchLog(s.logged, s.used, t)
	if j < 0 {
		return nil
	}
	s.used[j] = true
	l := s.logged[j]
	return &Split{Cached: *t.Input - l.PromptN, Read: l.PromptN,
		Source: fmt.Sprintf("%s line %d, the engine's prompt eval line of this request (paired by its eval_count and both durations): read_tokens the tokens it evaluated, cached_tokens prompt_eval_count less them", contract.EngineLog, s.from+l.Line-1)}
}
