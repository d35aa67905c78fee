// Package captures reads the raw HTTP captures of llama.cpp's server kept in
// ../shared/wire/llama-server/captures: the status, the headers, the body
// with its chunk framing removed, and the client-side arrival time of each
// SSE event. The simulated engine replays them and the tests feed them to
// the client, so both are checked against what a real server sent.
package captures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// Capture is one recorded exchange.
type Capture struct {
	Name    string
	Request json.RawMessage // the exact request body, when there was one
	Status  int
	Header  http.Header
	Body    []byte // without chunk framing
	// EventMS is the arrival of each SSE event in ms after dispatch, and
	// HeadersMS the arrival of the headers (from the capture's meta file).
	EventMS   []float64
	HeadersMS float64
}

type meta struct {
	TEventMS []float64 `json:"sse_event_t_ms"`
	THeaders float64   `json:"t_headers_ms"`
}

// Load reads capture name from dir.
func Load(dir, name string) (*Capture, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name+".resp.raw"))
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", name, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", name, err)
	}
	body, err := io.ReadAll(resp.Body) // net/http removes the chunk framing
	if err != nil && len(body) == 0 {
		return nil, fmt.Errorf("capture %s: body: %w", name, err)
	}
	c := &Capture{Name: name, Status: resp.StatusCode, Header: resp.Header, Body: body}
	if req, err := os.ReadFile(filepath.Join(dir, name+".req.json")); err == nil {
		c.Request = req
	}
	if m, err := os.ReadFile(filepath.Join(dir, name+".meta.json")); err == nil {
		var mt meta
		if err := json.Unmarshal(m, &mt); err != nil {
			return nil, fmt.Errorf("capture %s: meta: %w", name, err)
		}
		c.EventMS, c.HeadersMS = mt.TEventMS, mt.THeaders
	}
	return c, nil
}
