package simengine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/strata-bench/strata/internal/inputfile"
)

// Behaviour scripts what the engine does with one request. Zero values mean
// "as the model would"; a Scenario's Default applies first, then the
// request's own entry.
type Behaviour struct {
	// Output shape.
	ReasoningTokens *int    `json:"reasoning_tokens,omitempty"`
	AnswerTokens    *int    `json:"answer_tokens,omitempty"`
	Answer          *string `json:"answer,omitempty"`
	// ToolCall, when set, is emitted as a structured call: {"name", "arguments"}
	// (arguments as the exact string to stream).
	ToolCall *ToolCallSpec `json:"tool_call,omitempty"`
	// NoToolCall answers a tool case with text instead of a call.
	NoToolCall   bool    `json:"no_tool_call,omitempty"`
	FinishReason *string `json:"finish_reason,omitempty"`

	// Accounting.
	PromptTokens   *int `json:"prompt_tokens,omitempty"`
	CachedTokens   *int `json:"cached_tokens,omitempty"`
	PredictedNSkew *int `json:"predicted_n_skew,omitempty"` // added to timings.predicted_n only
	OmitUsage      bool `json:"omit_usage,omitempty"`
	OmitTimings    bool `json:"omit_timings,omitempty"`
	UsageOnFinish  bool `json:"usage_on_finish,omitempty"` // timings on the finish chunk, no usage chunk

	// Stream faults.
	HTTPStatus       int    `json:"http_status,omitempty"` // answer this status with an error body
	ErrorMessage     string `json:"error_message,omitempty"`
	HTML             bool   `json:"html,omitempty"`               // answer 200 with an HTML page
	ErrorEventAfter  *int   `json:"error_event_after,omitempty"`  // error event after N deltas, then EOF
	CutAfter         *int   `json:"cut_after,omitempty"`          // close the connection after N deltas
	NoDone           bool   `json:"no_done,omitempty"`            // finish and usage, but no [DONE]
	MalformedAfter   *int   `json:"malformed_after,omitempty"`    // a broken JSON line after N deltas
	DuplicateKeys    bool   `json:"duplicate_keys,omitempty"`     // the usage chunk repeats a key
	InvalidUTF8After *int   `json:"invalid_utf8_after,omitempty"` // raw invalid UTF-8 in a delta
	LongLine         bool   `json:"long_line,omitempty"`          // a data line over 1 MiB
	EmptyDeltas      int    `json:"empty_deltas,omitempty"`       // empty deltas before the first token
	KeepAlives       int    `json:"keep_alives,omitempty"`        // ":" comments before the first token
	StallBeforeMS    int    `json:"stall_before_ms,omitempty"`    // wait before headers (queueing)
	StallAfterMS     int    `json:"stall_after_headers_ms,omitempty"`
	Die              bool   `json:"die,omitempty"` // stop the whole server mid-stream
	// Flood sends a stream that never ends until the client leaves:
	// "lines" (data lines with no blank line, one event that never closes),
	// "deltas" (empty content deltas) or "content" (8,000 bytes of answer
	// per delta).
	Flood      string                     `json:"flood,omitempty"`
	SlotParams map[string]json.RawMessage `json:"slot_params,omitempty"` // override what /slots reports
	// Replay serves a recorded llama-server capture's body instead.
	Replay string `json:"replay,omitempty"`
}

// ToolCallSpec is a scripted tool call.
type ToolCallSpec struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Scenario scripts a run by request ID (the [case <id>] marker of the
// prompt).
type Scenario struct {
	Default  Behaviour            `json:"default"`
	Requests map[string]Behaviour `json:"requests"`
	// CapturesDir is where Replay captures are read from.
	CapturesDir string `json:"captures_dir,omitempty"`
	// Props overrides top-level /props fields (for example to hide the
	// template or the slots).
	Props map[string]json.RawMessage `json:"props,omitempty"`
	// NoSlots makes /slots answer 501, as a server without --slots does.
	NoSlots bool `json:"no_slots,omitempty"`
	// NoTemplateEndpoints makes /apply-template and /tokenize answer 404,
	// as an engine without them does.
	NoTemplateEndpoints bool `json:"no_template_endpoints,omitempty"`
	// TokenizeSkew adds tokens to /tokenize's count of a bundle prompt, by
	// request ID (a tokenizer that counts differently).
	TokenizeSkew map[string]int `json:"tokenize_skew,omitempty"`

	// Engine options of the other dialects (unset: the Config's value,
	// whose defaults describe the current engine).
	// VLLMPerRequestMetrics is vLLM's --enable-per-request-metrics (the
	// usage chunk's "metrics"); VLLMPromptTokensDetails its
	// --enable-prompt-tokens-details (usage.prompt_tokens_details).
	VLLMPerRequestMetrics   *bool `json:"vllm_per_request_metrics,omitempty"`
	VLLMPromptTokensDetails *bool `json:"vllm_prompt_tokens_details,omitempty"`
	// SGLangRejectXHigh speaks as an older SGLang whose reasoning_effort is
	// Literal["low","medium","high"]: other values get its HTTP 400.
	SGLangRejectXHigh *bool `json:"sglang_reject_xhigh,omitempty"`
	// TabbyAPINoTimings speaks as an older TabbyAPI whose usage has only
	// the three counts.
	TabbyAPINoTimings *bool `json:"tabbyapi_no_timings,omitempty"`
	// StrataPropsUnavailable makes Strata's /props answer 503 "the engine
	// is not running" throughout, as it does while its engine is down
	// (serve/server.py @452325a9 Handler._props).
	StrataPropsUnavailable bool `json:"strata_props_unavailable,omitempty"`
}

// MaxScenarioBytes bounds a scenario file (a few lines of JSON).
const MaxScenarioBytes = 4 << 20

// LoadScenario reads a scenario file; unknown fields are an error.
func LoadScenario(path string) (*Scenario, error) {
	data, err := inputfile.Read(path, MaxScenarioBytes)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	var s Scenario
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	check := func(where string, b Behaviour) error {
		switch b.Flood {
		case "", "lines", "deltas", "content":
			return nil
		}
		return fmt.Errorf("scenario %s: %s: flood %q: want lines, deltas or content", path, where, b.Flood)
	}
	if err := check("default", s.Default); err != nil {
		return nil, err
	}
	for id, b := range s.Requests {
		if err := check("requests."+id, b); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

// merge overlays b onto a (set fields of b win).
func merge(a, b Behaviour) Behaviour {
	data, _ := json.Marshal(b)
	out := a
	_ = json.Unmarshal(data, &out)
	return out
}

// For returns the behaviour of a request ID.
func (s *Scenario) For(id string) Behaviour {
	if s == nil {
		return Behaviour{}
	}
	b := s.Default
	if r, ok := s.Requests[id]; ok {
		b = merge(b, r)
	}
	return b
}
