// Package record is the raw record of a run, below both the code that
// makes it (the client and the runner) and the code that reads it (the
// result writer, the journal, provenance): what was sent, every event of
// each stream with its monotonic offset, usage, timings and errors as they
// came, what the server said of itself, and the identity and facts
// gathered before the first request. It holds data, not rules: verdicts,
// rates and statuses are derived from it elsewhere (internal/derive,
// internal/measure).
package record

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Event kinds in the client trace.
const (
	EvHeaders   = "headers"
	EvRole      = "role"
	EvReasoning = "reasoning"
	EvAnswer    = "answer"
	EvToolCall  = "tool_call"
	EvEmpty     = "empty"   // a chunk with no nonempty delta (role-less, empty strings)
	EvFinish    = "finish"  // the chunk carrying finish_reason
	EvUsage     = "usage"   // a chunk carrying usage and/or timings
	EvComment   = "comment" // SSE comment / keep-alive
	EvError     = "error"   // an error event inside the stream
	EvMalformed = "malformed"
	EvDone      = "done" // data: [DONE]
	EvEnd       = "end"  // the stream closed, timed out or was cancelled
)

// Error kinds of a failed request.
const (
	ErrConnection     = "connection_error"
	ErrHTTPStatus     = "http_status"
	ErrRedirect       = "redirect"
	ErrStreamError    = "stream_error"
	ErrMalformed      = "malformed_stream"
	ErrTruncated      = "truncated_stream"
	ErrNoFinish       = "no_finish_reason"
	ErrFinishReason   = "unexpected_finish_reason"
	ErrTimeout        = "timeout"
	ErrCancelled      = "cancelled"
	ErrRead           = "read_error"
	ErrAfterDone      = "data_after_done"
	ErrInvalidRequest = "invalid_request"
	ErrLimit          = "limit_exceeded"
)

// Event is one entry of the client trace: seconds since dispatch and
// what arrived.
type Event struct {
	T    float64
	Kind string
}

// MarshalJSON writes [t, kind], compact because a request has thousands.
func (e Event) MarshalJSON() ([]byte, error) { return e.appendJSON(nil), nil }

func (e Event) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendFloat(b, e.T, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendQuote(b, e.Kind)
	return append(b, ']')
}

// Events is a request's client trace, in the order it arrived.
type Events []Event

// MarshalJSON writes the whole trace in one pass: called for each event,
// Event's MarshalJSON (and the check of its output that follows every
// call) was most of the cost of writing a request's record.
func (es Events) MarshalJSON() ([]byte, error) {
	if es == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+len(es)*24)
	b = append(b, '[')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendJSON(b)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads [t, kind].
func (e *Event) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("event: want [seconds, kind], got %s", b)
	}
	if err := json.Unmarshal(pair[0], &e.T); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &e.Kind)
}

// ToolCall is one structured tool call assembled from its deltas.
type ToolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Error is why a request failed.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Kind + ": " + e.Message }

// Outcome is everything one request produced, as raw as it came.
type Outcome struct {
	HTTPStatus   int
	Events       Events
	Answer       string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason *string
	Usage        json.RawMessage
	Timings      json.RawMessage
	// ErrorBody is the body of a non-200 answer or the error event's data.
	ErrorBody string
	// Malformed keeps each malformed line (clipped), as evidence.
	Malformed []string
	Error     *Error
	// Client latencies in seconds from dispatch; nil when nothing qualifying
	// arrived.
	TTFT           *float64
	FirstAnswer    *float64
	Total          float64
	FirstDeltaKind string
	// Normal is true when the stream ended with [DONE] after a finish reason
	// (on Ollama's NDJSON, with its done line and a done_reason).
	Normal bool
}

// Failed reports whether the request failed (Error is set).
func (o *Outcome) Failed() bool { return o.Error != nil }

// Finish returns the finish reason or "".
func (o *Outcome) Finish() string {
	if o.FinishReason == nil {
		return ""
	}
	return *o.FinishReason
}
