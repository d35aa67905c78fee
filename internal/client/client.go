// Package client sends one streaming chat completion and records what came
// back as it came: the dispatch (offset zero of a monotonic trace), every
// SSE event with its offset, the deltas of reasoning, answer and tool calls,
// the final usage and timings exactly as the engine sent them, and an error
// of a named kind when the stream did not end normally (a status, a
// redirect, a malformed or cut stream, a bound reached, a timeout, a
// cancel). It derives nothing: rates, verdicts and statuses are computed
// from its record elsewhere. Small GETs and POSTs (probes, the preflight)
// carry the same API key and never follow a redirect.
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
)

// Client sends chat completions and small GETs to one server.
type Client struct {
	base   string
	apiKey string
	// keys redacts what the client cuts short of a server's text (the key
	// and the secret forms the redactor knows) before it is cut.
	keys *redact.Keyring
	// timeout is the per-request limit from dispatch. The CLI always uses
	// protocol.RequestTimeout; tests shorten it through Options.
	timeout time.Duration
	http    *http.Client
	// now is the clock the trace is read from.
	now clock.Func
}

// Options configure a Client.
type Options struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8080.
	BaseURL string
	// APIKey, when set, is sent as a bearer token. It is never recorded.
	APIKey string
	// Timeout overrides protocol.RequestTimeout (tests only).
	Timeout time.Duration
	// Now is the clock the latencies are read from (nil: the runtime's).
	Now clock.Func
}

// New returns a client. Every request uses a fresh connection: llama.cpp's
// server closes idle keep-alive connections after 5 s and a POST on a stale
// one is not retried, and a fresh dial keeps one request's socket state out
// of the next one's latency.
func New(o Options) *Client {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = protocol.RequestTimeout
	}
	tr := &http.Transport{
		Proxy:              nil, // loopback measurements never go through a proxy
		DialContext:        (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		DisableKeepAlives:  true,
		DisableCompression: true, // no gzip layer between the stream and the clock
		ForceAttemptHTTP2:  false,
	}
	keys := &redact.Keyring{}
	keys.Add(o.APIKey)
	return &Client{
		base:    strings.TrimRight(o.BaseURL, "/"),
		apiKey:  o.APIKey,
		keys:    keys,
		timeout: timeout,
		now:     clock.Or(o.Now),
		// A redirect is never followed: the body and the key go only to
		// the configured server, and a 3xx is an answer to record, not a
		// detour (a 302 would turn the POST into a GET without a body).
		http: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// BaseURL returns the server's root URL.
func (c *Client) BaseURL() string { return c.base }

func (c *Client) authorize(req *http.Request) {
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
}

// Chat sends one streaming chat completion with body on the dialect's
// wire (the zero Wire is the OpenAI-compatible one) and records its
// outcome. It never retries. The timeout counts from dispatch (queueing
// included) and closes the connection; a cancelled ctx ends the request the
// same way, as a failure of kind "cancelled".
//
// onEvent, when set, is called with each event's kind as it arrives (for a
// live display; it must not block).
func (c *Client) Chat(ctx context.Context, wire dialect.Wire, body []byte, onEvent func(kind string)) (*record.Outcome, time.Time, time.Time) {
	o := &record.Outcome{}
	reqCtx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()
	route, accept, read := dialect.ChatRoute, sseType, readStream
	if wire.Route != "" {
		route = wire.Route
	}
	if wire.NDJSON {
		accept, read = ndjsonType, readNDJSON
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.base+route, bytes.NewReader(body))
	if err != nil {
		o.Error = &record.Error{Kind: record.ErrInvalidRequest, Message: err.Error()}
		now := c.now()
		return o, now, now
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	c.authorize(req)

	start := c.now() // dispatch: offset zero of the trace
	since := func() float64 { return c.now().Sub(start).Seconds() }
	resp, err := c.http.Do(req)
	if err != nil {
		o.Error = classify(reqCtx, ctx, err, c.timeout)
		o.Total = since()
		o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
		return o, start, start.Add(time.Duration(o.Total * float64(time.Second)))
	}
	defer resp.Body.Close()
	o.HTTPStatus = resp.StatusCode
	o.Events = append(o.Events, record.Event{T: since(), Kind: record.EvHeaders})
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		o.Error = &record.Error{Kind: record.ErrRedirect, Message: fmt.Sprintf("HTTP %d redirect to %q: strata never follows a redirect (the request and the key go only to the configured server)",
			resp.StatusCode, resp.Header.Get("Location"))}
		o.Total = since()
		o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
		return o, start, c.now()
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		o.Error = &record.Error{Kind: record.ErrMalformed, Message: fmt.Sprintf("the answer came with Content-Encoding %q, which the client did not ask for (it sends no Accept-Encoding): the stream is not read", enc)}
		o.Total = since()
		o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
		return o, start, c.now()
	}
	if resp.StatusCode != http.StatusOK {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		o.ErrorBody = evidence(data)
		msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if m := errorMessage(bytes.TrimSpace(data), c.keys.Redact); m != "" && len(data) > 0 {
			msg += ": " + m
		}
		if rerr != nil && reqCtx.Err() != nil {
			o.Error = classify(reqCtx, ctx, rerr, c.timeout)
		} else {
			o.Error = &record.Error{Kind: record.ErrHTTPStatus, Message: msg}
		}
		o.Total = since()
		o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
		return o, start, c.now()
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, accept) {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		o.ErrorBody = evidence(data)
		o.Error = &record.Error{Kind: record.ErrMalformed, Message: fmt.Sprintf("expected a %s answer, got Content-Type %q", accept, ct)}
		o.Total = since()
		o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
		return o, start, c.now()
	}
	readErr := read(resp.Body, o, since, onEvent, c.keys.Redact)
	if readErr != nil {
		// A timeout or a cancel is the cause of whatever the stream showed;
		// otherwise an error event the server sent before the cut says more.
		cause := classify(reqCtx, ctx, readErr, c.timeout)
		if o.Error == nil || cause.Kind == record.ErrTimeout || cause.Kind == record.ErrCancelled {
			o.Error = cause
		}
		o.Normal = false
	}
	o.Total = since()
	o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
	return o, start, c.now()
}

var errTimeout = errors.New("request timeout")

// The answers' media types: Server-Sent Events, and Ollama's one JSON
// object per line (server/routes.go @96fb6d2fa l.2080).
const (
	sseType    = "text/event-stream"
	ndjsonType = "application/x-ndjson"
)

// classify names why a request ended without a normal stream.
func classify(reqCtx, parent context.Context, err error, timeout time.Duration) *record.Error {
	switch {
	case parent.Err() != nil:
		why := "an interrupt"
		if cause := context.Cause(parent); cause != nil && cause != context.Canceled {
			why = cause.Error()
		}
		return &record.Error{Kind: record.ErrCancelled, Message: "the run was interrupted (" + why + ") while the request was in flight"}
	case errors.Is(context.Cause(reqCtx), errTimeout):
		return &record.Error{Kind: record.ErrTimeout, Message: fmt.Sprintf("no complete answer within %s of dispatch; the connection was closed", timeout)}
	}
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Op == "dial" {
		return &record.Error{Kind: record.ErrConnection, Message: err.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset") {
		return &record.Error{Kind: record.ErrTruncated, Message: "the connection was cut before the stream ended: " + err.Error()}
	}
	if strings.Contains(err.Error(), "EOF") {
		return &record.Error{Kind: record.ErrConnection, Message: "the server closed the connection without an answer: " + err.Error()}
	}
	return &record.Error{Kind: record.ErrRead, Message: err.Error()}
}

// Get fetches a small JSON endpoint (health, props, slots, models) with a
// short timeout. It returns the status and body; an error means no answer.
func (c *Client) Get(ctx context.Context, path string, timeout time.Duration) (int, []byte, error) {
	status, _, body, err := c.small(ctx, http.MethodGet, path, nil, timeout)
	return status, body, err
}

// GetHeader is Get with the answer's headers (an engine's Server header
// identifies it).
func (c *Client) GetHeader(ctx context.Context, path string, timeout time.Duration) (int, http.Header, []byte, error) {
	return c.small(ctx, http.MethodGet, path, nil, timeout)
}

// Post sends a small JSON request (the preflight's /apply-template and
// /tokenize) with a short timeout and returns the status and body.
func (c *Client) Post(ctx context.Context, path string, body []byte, timeout time.Duration) (int, []byte, error) {
	status, _, data, err := c.small(ctx, http.MethodPost, path, body, timeout)
	return status, data, err
}

func (c *Client) small(ctx context.Context, method, path string, body []byte, timeout time.Duration) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, resp.Header, data, err
	}
	return resp.StatusCode, resp.Header, data, nil
}
