package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/sse"
)

// Bounds on what one request may bring back, so nothing a server sends can
// exhaust the runner: a 2,048-token answer is about 8 KB in some 2,100
// deltas. A request that reaches a bound fails with it, the connection is
// closed, and what arrived until then stays evidence.
const (
	// MaxEvents is the most SSE events (deltas, keep-alives, [DONE]) of one
	// stream: the 65,536th is read, the 65,537th is not.
	MaxEvents = 1 << 16
	// MaxTextBytes is the most answer, reasoning and tool-call text of one
	// request together. Every string of a tool call counts (id, type, name,
	// arguments), as received: a server that repeats a call's id or type in
	// each delta is charged for each copy, so the count bounds what was
	// allocated, not only what is kept.
	MaxTextBytes = 4 << 20
	// MaxToolCalls is the most tool calls one response may carry. The
	// protocol's tool cases need exactly one; tiny calls in their
	// thousands would pass the text bound and still bloat outputs.jsonl.
	MaxToolCalls = 64
	// maxMalformed is how many malformed lines are kept as evidence.
	maxMalformed = 16
)

const clipLen = 1024

// clip is the start of b, redacted by red (the API key in use and the
// secret forms the redactor knows) before it is cut: a secret cut short is
// no longer one the rules know. The redacted window reaches past the cut
// by the longest secret (a private key block).
func clip(b []byte, red func(string) string) string {
	s := red(string(b[:min(len(b), clipLen+4096)]))
	if len(s) > clipLen || len(b) > clipLen+4096 {
		s = s[:min(len(s), clipLen)] + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// toolBuild assembles one tool call: name and arguments grow in builders,
// since appending to a string copies it and a call's arguments may come a
// byte a delta.
type toolBuild struct {
	id, typ    string
	name, args strings.Builder
}

// streamState interprets the events of one stream.
type streamState struct {
	o        *record.Outcome
	since    func() float64
	answer   strings.Builder
	reason   strings.Builder
	tools    map[int]*toolBuild
	order    []int
	doneSeen bool
	dec      *jsontext.Decoder
	rd       bytes.Reader
	onEvent  func(string)
	red      func(string) string // redacts what is clipped (see clip)
	text     int                 // answer, reasoning and tool-call bytes so far
	events   int                 // SSE events read so far
	stop     bool                // a bound was reached: read no further
}

// newStreamState is the state of one stream read into o. red redacts
// what is clipped (nil: the secret forms the redactor knows).
func newStreamState(o *record.Outcome, since func() float64, onEvent func(string), red func(string) string) *streamState {
	if red == nil {
		red = redact.SecretsOnly
	}
	s := &streamState{o: o, since: since, tools: map[int]*toolBuild{}, onEvent: onEvent, red: red}
	s.dec = jsontext.NewDecoder(&s.rd)
	return s
}

// collect puts what the stream gathered into the outcome.
func (s *streamState) collect() {
	s.o.Answer, s.o.Reasoning = s.answer.String(), s.reason.String()
	for _, i := range s.order {
		b := s.tools[i]
		s.o.ToolCalls = append(s.o.ToolCalls, record.ToolCall{Index: i, ID: b.id, Type: b.typ, Name: b.name.String(), Arguments: b.args.String()})
	}
}

func (s *streamState) add(kind string) {
	s.addAt(kind, s.since())
}

func (s *streamState) addAt(kind string, t float64) {
	s.o.Events = append(s.o.Events, record.Event{T: t, Kind: kind})
	if s.onEvent != nil {
		s.onEvent(kind)
	}
}

// fail records the first failure only: later problems are consequences.
func (s *streamState) fail(kind, msg string) {
	if s.o.Error == nil {
		s.o.Error = &record.Error{Kind: kind, Message: msg}
	}
}

// malformed keeps a bad line as evidence (the first few).
func (s *streamState) malformed(line string) {
	if len(s.o.Malformed) < maxMalformed {
		s.o.Malformed = append(s.o.Malformed, line)
	}
}

// limit ends the stream at a bound.
func (s *streamState) limit(msg string) {
	s.o.Error = &record.Error{Kind: record.ErrLimit, Message: msg}
	s.stop = true
}

// readStream consumes an SSE body. since returns seconds since dispatch on
// the monotonic clock. It returns when the stream ends; a read error (the
// timeout or a cancel closing the body) is returned for the caller to name.
func readStream(body io.Reader, o *record.Outcome, since func() float64, onEvent func(string), red func(string) string) error {
	s := newStreamState(o, since, onEvent, red)
	r := sse.NewReader(body, sse.MaxLine)
	var readErr error
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			switch {
			case errors.Is(err, sse.ErrLineTooLong) || errors.Is(err, sse.ErrEventTooLarge):
				// A bound of the runner, not a fault of the framing.
				s.add(record.EvMalformed)
				s.malformed(err.Error())
				s.fail(record.ErrLimit, err.Error()+"; the runner stopped reading the stream")
			case errors.Is(err, sse.ErrUnterminated):
				s.add(record.EvMalformed)
				s.malformed(err.Error())
				s.fail(record.ErrMalformed, err.Error())
			default:
				readErr = err
			}
			break
		}
		// Counted apart from the trace, which has the headers and may give
		// one event two entries (a token and its finish).
		if s.events++; s.events > MaxEvents {
			s.limit(fmt.Sprintf("the stream sent more than %d events; the runner stopped reading it", MaxEvents))
			break
		}
		if ev.Kind == sse.Comment {
			s.add(record.EvComment)
			continue
		}
		s.handle(ev.Data)
		if s.stop {
			break
		}
	}
	s.collect()
	if readErr == nil && !s.stop {
		switch {
		case !s.doneSeen && o.FinishReason != nil:
			s.fail(record.ErrTruncated, "the stream ended after the finish reason without data: [DONE]")
		case !s.doneSeen:
			s.fail(record.ErrTruncated, "the stream ended before a finish reason and data: [DONE]")
		case o.FinishReason == nil:
			s.fail(record.ErrNoFinish, "data: [DONE] arrived without a finish reason")
		}
		if o.Error == nil {
			o.Normal = true
			if _, known := protocol.FinishStatus(*o.FinishReason); !known {
				s.fail(record.ErrFinishReason, fmt.Sprintf("finish_reason %q is neither stop, tool_calls nor length", *o.FinishReason))
			}
		}
	}
	return readErr
}

// handle interprets one data event.
func (s *streamState) handle(data []byte) {
	if s.doneSeen {
		s.add(record.EvMalformed)
		s.malformed(clip(data, s.red))
		s.fail(record.ErrAfterDone, "data arrived after data: [DONE]")
		return
	}
	if string(data) == "[DONE]" {
		s.add(record.EvDone)
		s.doneSeen = true
		return
	}
	c, err := s.parseChunk(data)
	if err != nil {
		s.add(record.EvMalformed)
		s.malformed(clip(data, s.red))
		s.fail(record.ErrMalformed, "a stream line is not a valid chunk: "+err.Error())
		return
	}
	if c.errorValue != nil {
		s.add(record.EvError)
		s.o.ErrorBody = evidence(c.errorValue)
		s.fail(record.ErrStreamError, errorMessage(c.errorValue, s.red))
		return
	}
	t := s.trace(&c)
	if !s.keep(&c) {
		return
	}
	s.firsts(&c, t)
	if c.finish != nil {
		if s.o.FinishReason != nil {
			s.fail(record.ErrMalformed, "a second finish_reason arrived")
		}
		s.o.FinishReason = c.finish
	}
	if c.usage != nil {
		s.o.Usage = c.usage
	}
	if c.timings != nil {
		s.o.Timings = c.timings
	}
}

// trace adds the chunk's events to the client trace and returns their
// instant.
func (s *streamState) trace(c *chunk) float64 {
	kind := record.EvEmpty
	switch {
	case c.role && c.reasoning == "" && c.content == "" && len(c.tools) == 0:
		kind = record.EvRole
	case c.reasoning != "":
		kind = record.EvReasoning
	case len(c.tools) > 0 && c.toolHasText:
		kind = record.EvToolCall
	case c.content != "":
		kind = record.EvAnswer
	}
	delta := kind
	if c.finish != nil {
		kind = record.EvFinish
	}
	if c.usage != nil || c.timings != nil {
		kind = record.EvUsage
	}
	t := s.since()
	// A chunk that carries a token and the finish or usage too (ik_llama.cpp
	// sends usage on every chunk, TabbyAPI a finish with its last text) is
	// two events at one instant: the trace keeps the token.
	if delta != kind && (delta == record.EvReasoning || delta == record.EvAnswer || delta == record.EvToolCall) {
		s.addAt(delta, t)
	}
	s.addAt(kind, t)
	return t
}

// keep adds the chunk's text and tool-call fragments to the outcome, or
// ends the stream at a bound (false) with what arrived before.
func (s *streamState) keep(c *chunk) bool {
	n := len(c.reasoning) + len(c.content)
	var added []int // calls this chunk opens: at most MaxToolCalls+1 are looked through
	for _, d := range c.tools {
		n += len(d.id) + len(d.typ) + len(d.name) + len(d.args)
		if _, ok := s.tools[d.index]; !ok && len(s.tools)+len(added) <= MaxToolCalls && !slices.Contains(added, d.index) {
			added = append(added, d.index)
		}
	}
	if s.text+n > MaxTextBytes {
		s.limit(fmt.Sprintf("the answer, reasoning and tool calls (id, type, name and arguments) grew past %d bytes; the runner stopped reading the stream", MaxTextBytes))
		return false
	}
	if len(s.tools)+len(added) > MaxToolCalls {
		s.limit(fmt.Sprintf("the response carried more than %d tool calls; the runner stopped reading the stream", MaxToolCalls))
		return false
	}
	s.text += n
	s.reason.WriteString(c.reasoning)
	s.answer.WriteString(c.content)
	for _, d := range c.tools {
		tc, ok := s.tools[d.index]
		if !ok {
			tc = &toolBuild{}
			s.tools[d.index] = tc
			s.order = append(s.order, d.index)
		}
		if d.id != "" {
			tc.id = d.id
		}
		if d.typ != "" {
			tc.typ = d.typ
		}
		tc.name.WriteString(d.name)
		tc.args.WriteString(d.args)
	}
	return true
}

// firsts records TTFT (the first nonempty reasoning, answer or generated
// tool-call delta) and the first answer (the first nonempty answer text or
// tool-call delta).
func (s *streamState) firsts(c *chunk, t float64) {
	first := ""
	switch {
	case c.reasoning != "":
		first = record.EvReasoning
	case c.toolHasText:
		first = record.EvToolCall
	case c.content != "":
		first = record.EvAnswer
	}
	if first != "" && s.o.TTFT == nil {
		s.o.TTFT = ptr(t)
		s.o.FirstDeltaKind = first
	}
	if (c.content != "" || c.toolHasText) && s.o.FirstAnswer == nil {
		s.o.FirstAnswer = ptr(t)
	}
}

func ptr(f float64) *float64 { return &f }

// evidence keeps an error body whole (the caller read at most 64 KiB), as
// valid UTF-8: it is evidence, and cutting it short would cut its JSON.
func evidence(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// errorMessage extracts the message of an error object ({"message", "code",
// "type"}), also wrapped as an HTTP error body ({"error": {...}}), or the
// raw text (clipped, see clip).
func errorMessage(v []byte, red func(string) string) string {
	var e struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Type    string `json:"type"`
	}
	var wrapped struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(v, &wrapped) == nil && len(wrapped.Error) > 0 && wrapped.Error[0] == '{' {
		v = wrapped.Error
	}
	if json.Unmarshal(v, &e) == nil && e.Message != "" {
		if e.Type != "" {
			return e.Type + ": " + e.Message
		}
		return e.Message
	}
	return clip(v, red)
}

type toolDelta struct {
	index               int
	id, typ, name, args string
}

type chunk struct {
	role               bool
	content, reasoning string
	tools              []toolDelta
	toolHasText        bool
	finish             *string
	usage, timings     json.RawMessage
	errorValue         json.RawMessage
}

// parseChunk reads one chunk with a validating token decoder (duplicate
// names are rejected, like everything malformed). Only the fields the
// protocol reads are decoded; the rest is validated and skipped.
//
// The object loops below are written out on purpose: a shared helper taking
// a callback makes its closures escape to the heap, an allocation for each
// object of every chunk, on the path the client-overhead benchmark measures.
func (s *streamState) parseChunk(data []byte) (chunk, error) {
	var c chunk
	s.rd.Reset(data)
	s.dec.Reset(&s.rd)
	tok, err := s.dec.ReadToken()
	if err != nil {
		return c, err
	}
	if tok.Kind() != '{' {
		return c, fmt.Errorf("expected a JSON object, got %v", tok.Kind())
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return c, err
		}
		key := name.String()
		// Any engine's timer object (dialect.IsTimerObject: llama-server's
		// timings, vLLM's per-request metrics) is kept as the request's
		// timings, the evidence its rates are read from.
		timer := dialect.IsTimerObject(key)
		switch {
		case key == "choices":
			if err := s.parseChoices(&c); err != nil {
				return c, err
			}
		case key == "usage" || key == "error" || timer:
			v, err := s.dec.ReadValue()
			if err != nil {
				return c, err
			}
			if v.Kind() == 'n' {
				continue
			}
			raw := json.RawMessage(bytes.Clone(v))
			switch {
			case key == "usage":
				c.usage = raw
			case timer:
				c.timings = raw
			default:
				c.errorValue = raw
			}
		default:
			if err := s.dec.SkipValue(); err != nil {
				return c, err
			}
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return c, err
	}
	if _, err := s.dec.ReadToken(); !errors.Is(err, io.EOF) {
		return c, errors.New("data after the JSON object")
	}
	return c, nil
}

func (s *streamState) expect(kind jsontext.Kind) error {
	tok, err := s.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != kind {
		return fmt.Errorf("expected %v, got %v", kind, tok.Kind())
	}
	return nil
}

// readIndex reads a tool call's index: a nonnegative integer (a token of
// another kind is malformed; jsontext's Int would panic on it).
func (s *streamState) readIndex() (int, error) {
	tok, err := s.dec.ReadToken()
	if err != nil {
		return 0, err
	}
	if tok.Kind() != '0' {
		return 0, fmt.Errorf("tool_calls index: a %v, not a number", tok.Kind())
	}
	i, err := tok.Int()
	if err != nil || i < 0 {
		return 0, fmt.Errorf("tool_calls index: %v", tok)
	}
	return int(i), nil
}

// readString reads a string or null ("" for null).
func (s *streamState) readString() (string, bool, error) {
	tok, err := s.dec.ReadToken()
	if err != nil {
		return "", false, err
	}
	switch tok.Kind() {
	case '"':
		return tok.String(), true, nil
	case 'n':
		return "", false, nil
	}
	return "", false, fmt.Errorf("expected a string or null, got %v", tok.Kind())
}

func (s *streamState) parseChoices(c *chunk) error {
	if s.dec.PeekKind() == 'n' {
		_, err := s.dec.ReadToken()
		return err
	}
	if err := s.expect('['); err != nil {
		return err
	}
	for n := 0; s.dec.PeekKind() != ']'; n++ {
		if n > 0 { // n=1 is what we ask for; a second choice is not ours to read
			if err := s.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if err := s.parseChoice(c); err != nil {
			return err
		}
	}
	return s.expect(']')
}

// parseChoice reads the first choice: its delta and finish reason.
func (s *streamState) parseChoice(c *chunk) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "delta":
			if err := s.parseDelta(c, false); err != nil {
				return err
			}
		case "finish_reason":
			fr, ok, err := s.readString()
			if err != nil {
				return err
			}
			if ok {
				c.finish = &fr
			}
		default:
			if err := s.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	return s.expect('}')
}

// parseDelta reads a delta, or with native an Ollama message (its
// reasoning is "thinking", its tool calls whole: parseToolCalls).
func (s *streamState) parseDelta(c *chunk, native bool) error {
	if s.dec.PeekKind() == 'n' {
		_, err := s.dec.ReadToken()
		return err
	}
	if err := s.expect('{'); err != nil {
		return err
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return err
		}
		switch key := name.String(); {
		case key == "role":
			if _, ok, err := s.readString(); err != nil {
				return err
			} else if ok {
				c.role = true
			}
		case key == "content":
			if c.content, _, err = s.readString(); err != nil {
				return err
			}
		case dialect.IsReasoningField(key) || native && key == "thinking":
			// Every engine's name for it is read (dialect's table says
			// which engine streams which). A delta may carry two of them (a
			// gateway passing both on, one of them null or empty): the
			// text is whichever has one.
			var text string
			if text, _, err = s.readString(); err != nil {
				return err
			}
			if text != "" {
				c.reasoning = text
			}
		case key == "tool_calls":
			if err := s.parseToolCalls(c, native); err != nil {
				return err
			}
		default:
			if err := s.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	return s.expect('}')
}

// parseToolCalls reads tool calls: OpenAI's deltas, or with native
// Ollama's whole calls (api.ToolCall, api/types.go @96fb6d2fa: the index
// inside function, the arguments a JSON object, sent on the done line:
// llm/llama_server.go l.2020–2024).
func (s *streamState) parseToolCalls(c *chunk, native bool) error {
	if s.dec.PeekKind() == 'n' {
		_, err := s.dec.ReadToken()
		return err
	}
	if err := s.expect('['); err != nil {
		return err
	}
	for s.dec.PeekKind() != ']' {
		d, err := s.parseToolCall(native)
		if err != nil {
			return err
		}
		if d.index < 0 {
			d.index = len(c.tools) // servers that omit index send one call per delta
		}
		if d.name != "" || d.args != "" {
			c.toolHasText = true
		}
		c.tools = append(c.tools, d)
	}
	return s.expect(']')
}

// parseToolCall reads one call of a tool_calls array (index -1: none
// given).
func (s *streamState) parseToolCall(native bool) (toolDelta, error) {
	d := toolDelta{index: -1}
	if err := s.expect('{'); err != nil {
		return d, err
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return d, err
		}
		switch name.String() {
		case "index":
			d.index, err = s.readIndex()
		case "id":
			d.id, _, err = s.readString()
		case "type":
			d.typ, _, err = s.readString()
		case "function":
			err = s.parseFunction(&d, native)
		default:
			err = s.dec.SkipValue()
		}
		if err != nil {
			return d, err
		}
	}
	return d, s.expect('}')
}

// parseFunction reads a call's function: its name and arguments, a string
// of JSON text (OpenAI's), or with native a JSON object (Ollama's), whose
// text is kept as it came, and Ollama's index.
func (s *streamState) parseFunction(d *toolDelta, native bool) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return err
		}
		switch key := name.String(); {
		case key == "name":
			if d.name, _, err = s.readString(); err != nil {
				return err
			}
		case key == "arguments" && native:
			v, err := s.dec.ReadValue()
			if err != nil {
				return err
			}
			if v.Kind() != 'n' {
				d.args = string(v)
			}
		case key == "arguments":
			if d.args, _, err = s.readString(); err != nil {
				return err
			}
		case key == "index" && native:
			if d.index, err = s.readIndex(); err != nil {
				return err
			}
		default:
			if err := s.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	return s.expect('}')
}
