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
	reqCtx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()
	route, w := wireOf(wire)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.base+route, bytes.NewReader(body))
	if err != nil {
		// Never dispatched: there is no trace to end.
		now := c.now()
		return &record.Outcome{Error: &record.Error{Kind: record.ErrInvalidRequest, Message: err.Error()}}, now, now
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", w.accept)
	c.authorize(req)

	o := &record.Outcome{}
	start := c.now() // dispatch: offset zero of the trace
	since := func() float64 { return c.now().Sub(start).Seconds() }
	resp, err := c.http.Do(req)
	if err != nil {
		return c.end(o, classify(reqCtx, ctx, err, c.timeout), start, since)
	}
	// The body is closed once the outcome is complete: an answer read to
	// its end or cut short has nothing left to say, and closing it only
	// drops the connection.
	defer func() { _ = resp.Body.Close() }()
	return c.end(o, c.answer(reqCtx, ctx, w, resp, o, since, onEvent), start, since)
}

// streamWire is how an answer on one wire is read: the media type asked
// for and the reader of its stream.
type streamWire struct {
	accept string
	read   func(body io.Reader, o *record.Outcome, since func() float64, onEvent func(string), red func(string) string) error
}

// wireOf is the route a dialect's wire posts to and how its answer is
// read: Server-Sent Events from the OpenAI-compatible route unless the
// wire says otherwise.
func wireOf(wire dialect.Wire) (string, streamWire) {
	route, w := dialect.ChatRoute, streamWire{accept: sseType, read: readStream}
	if wire.Route != "" {
		route = wire.Route
	}
	if wire.NDJSON {
		w = streamWire{accept: ndjsonType, read: readNDJSON}
	}
	return route, w
}

// end is where every dispatched request ends: its error (nil for a normal
// stream), its total from dispatch and the trace's end event, then the
// instants of dispatch and end.
func (c *Client) end(o *record.Outcome, e *record.Error, start time.Time, since func() float64) (*record.Outcome, time.Time, time.Time) {
	o.Error = e
	o.Total = since()
	o.Events = append(o.Events, record.Event{T: o.Total, Kind: record.EvEnd})
	return o, start, c.now()
}

// answer records what the server answered into o (its status, the
// instant of its headers, its stream) and returns why the request did not
// end normally: why there is no stream to read (a redirect, an unasked
// encoding, a status other than 200, a content type other than the
// wire's), or how the stream ended.
func (c *Client) answer(reqCtx, ctx context.Context, w streamWire, resp *http.Response, o *record.Outcome, since func() float64, onEvent func(string)) *record.Error {
	o.HTTPStatus = resp.StatusCode
	o.Events = append(o.Events, record.Event{T: since(), Kind: record.EvHeaders})
	if e := c.refused(reqCtx, ctx, w.accept, resp, o); e != nil {
		return e
	}
	readErr := w.read(resp.Body, o, since, onEvent, c.keys.Redact)
	if readErr == nil {
		return o.Error
	}
	o.Normal = false
	// A timeout or a cancel is the cause of whatever the stream showed;
	// otherwise an error event the server sent before the cut says more.
	if cause := classify(reqCtx, ctx, readErr, c.timeout); o.Error == nil || cause.Kind == record.ErrTimeout || cause.Kind == record.ErrCancelled {
		return cause
	}
	return o.Error
}

// refused is why an answer is not a stream to read, with its body kept as
// evidence where it has one, or nil for a 200 answer of the accepted type.
func (c *Client) refused(reqCtx, ctx context.Context, accept string, resp *http.Response, o *record.Outcome) *record.Error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return &record.Error{Kind: record.ErrRedirect, Message: fmt.Sprintf("HTTP %d redirect to %q: strata never follows a redirect (the request and the key go only to the configured server)",
			resp.StatusCode, resp.Header.Get("Location"))}
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return &record.Error{Kind: record.ErrMalformed, Message: fmt.Sprintf("the answer came with Content-Encoding %q, which the client did not ask for (it sends no Accept-Encoding): the stream is not read", enc)}
	}
	if resp.StatusCode != http.StatusOK {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		o.ErrorBody = evidence(data)
		if rerr != nil && reqCtx.Err() != nil {
			return classify(reqCtx, ctx, rerr, c.timeout)
		}
		msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if m := errorMessage(bytes.TrimSpace(data), c.keys.Redact); m != "" && len(data) > 0 {
			msg += ": " + m
		}
		return &record.Error{Kind: record.ErrHTTPStatus, Message: msg}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, accept) {
		// What arrived of a body that is not the stream is evidence as far
		// as it goes; a read cut short keeps the part that came.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		o.ErrorBody = evidence(data)
		return &record.Error{Kind: record.ErrMalformed, Message: fmt.Sprintf("expected a %s answer, got Content-Type %q", accept, ct)}
	}
	return nil
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
		if cause := context.Cause(parent); cause != nil && !errors.Is(cause, context.Canceled) {
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
	// The body is read as far as it is taken; closing it only drops the
	// connection.
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, resp.Header, data, err
}
