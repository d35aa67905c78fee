package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/sse"
)

// Ollama's /api/chat answers one JSON object per line
// (application/x-ndjson: server/routes.go @96fb6d2fa streamResponse
// l.2079–2126), each an api.ChatResponse (api/types.go l.520–564):
// message {role, content, thinking, tool_calls}, done, and on the last
// line done_reason and the request's counts and durations. An error after
// the answer began is one more line, {"error": "..."}, and the stream
// ends there with the HTTP status still 200 (l.2098–2107). The line with
// done true is the normal end, as data: [DONE] is on the SSE wire.

// readNDJSON consumes an NDJSON chat answer as readStream consumes an SSE
// one: the same trace, deltas, bounds and end rules. The done line's
// fields but its message are kept as the request's timings (the counts
// and durations are there); its message's parts are the answer,
// reasoning and tool calls like any line's.
func readNDJSON(body io.Reader, o *record.Outcome, since func() float64, onEvent func(string), red func(string) string) error {
	s := newStreamState(o, since, onEvent, red)
	r := bufio.NewReaderSize(body, 64<<10)
	var readErr error
	for !s.stop {
		line, err := readLine(r, sse.MaxLine)
		if len(bytes.TrimSpace(line)) > 0 {
			if s.events++; s.events > MaxEvents {
				s.limit(fmt.Sprintf("the stream sent more than %d lines; the runner stopped reading it", MaxEvents))
				break
			}
			s.handleLine(bytes.TrimSpace(line))
		}
		if errors.Is(err, sse.ErrLineTooLong) {
			s.add(record.EvMalformed)
			s.malformed(err.Error())
			s.fail(record.ErrLimit, err.Error()+"; the runner stopped reading the stream")
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	s.collect()
	if readErr == nil && !s.stop && s.o.Error == nil {
		switch {
		case !s.doneSeen:
			s.fail(record.ErrTruncated, "the stream ended before its done line")
		case o.FinishReason == nil:
			s.fail(record.ErrNoFinish, "the done line carried no done_reason")
		}
		if o.Error == nil {
			o.Normal = true
			if _, known := protocol.FinishStatus(*o.FinishReason); !known {
				s.fail(record.ErrFinishReason, fmt.Sprintf("done_reason %q is neither stop nor length", *o.FinishReason))
			}
		}
	}
	return readErr
}

// readLine reads one line of at most max bytes (its newline dropped).
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > max {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", sse.ErrLineTooLong, max)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), err
		}
	}
}

// handleLine interprets one line of an NDJSON answer.
func (s *streamState) handleLine(line []byte) {
	if s.doneSeen {
		s.add(record.EvMalformed)
		s.malformed(clip(line, s.red))
		s.fail(record.ErrAfterDone, "a line arrived after the done line")
		return
	}
	c, done, err := s.parseLine(line)
	if err != nil {
		s.add(record.EvMalformed)
		s.malformed(clip(line, s.red))
		s.fail(record.ErrMalformed, "a stream line is not a valid chat response: "+err.Error())
		return
	}
	if c.errorValue != nil {
		s.add(record.EvError)
		s.o.ErrorBody = evidence(line)
		msg := errorMessage(c.errorValue, s.red)
		var text string
		if json.Unmarshal(c.errorValue, &text) == nil {
			msg = clip([]byte(text), s.red)
		}
		s.fail(record.ErrStreamError, msg)
		return
	}
	t := s.trace(&c)
	if !s.keep(&c) {
		return
	}
	s.firsts(&c, t)
	if done {
		s.o.FinishReason, s.o.Timings = c.finish, c.timings
		s.addAt(record.EvDone, t)
		s.doneSeen = true
	}
}

// parseLine reads one api.ChatResponse with the validating decoder
// (duplicate names are malformed). An {"error": ...} line is an error;
// done true makes the line's other fields but message its timings.
func (s *streamState) parseLine(data []byte) (c chunk, done bool, err error) {
	s.rd.Reset(data)
	s.dec.Reset(&s.rd)
	if err := s.expect('{'); err != nil {
		return c, false, err
	}
	var rest bytes.Buffer // the line's fields but message
	rest.WriteByte('{')
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return c, false, err
		}
		key := name.String()
		if key == "message" {
			if err := s.parseDelta(&c, true); err != nil {
				return c, false, err
			}
			continue
		}
		v, err := s.dec.ReadValue()
		if err != nil {
			return c, false, err
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		q, _ := jsontext.AppendQuote(nil, key)
		rest.Write(q)
		rest.WriteByte(':')
		rest.Write(v)
		switch key {
		case "error":
			c.errorValue = json.RawMessage(bytes.Clone(v))
		case "done":
			done = string(v) == "true"
		case "done_reason":
			var fr string
			if json.Unmarshal(v, &fr) == nil {
				c.finish = &fr
			}
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return c, false, err
	}
	if _, err := s.dec.ReadToken(); !errors.Is(err, io.EOF) {
		return c, false, errors.New("data after the JSON object")
	}
	rest.WriteByte('}')
	if done {
		c.timings = rest.Bytes()
	} else {
		c.finish = nil
	}
	return c, done, nil
}
