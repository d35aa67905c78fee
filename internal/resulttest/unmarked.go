package resulttest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/simengine"
)

// Marker is one of the simulator's own markers in what it serves.
type Marker string

// The markers Unmarked removes.
const (
	MarkHeader       Marker = "the X-Strata-Simulator header"
	MarkServer       Marker = "the Server header"
	MarkProps        Marker = "/props strata_simulator"
	MarkPropsVersion Marker = "/props strata_simulator_version"
	MarkOwnedBy      Marker = "/v1/models owned_by"
)

// Markers lists every marker Unmarked removes.
func Markers() []Marker {
	return []Marker{MarkHeader, MarkServer, MarkProps, MarkPropsVersion, MarkOwnedBy}
}

// Unmarked serves sim on loopback behind a front that removes its markers
// (but those in keep) from every answer, as a real engine would answer, and
// returns the front's URL. The simulator itself always says what it is, so
// no run against it is conforming; the tests of the status rules need one
// that can be, and this front is the only way to get it: test code, never
// reachable from a command. It is what an attacker's proxy would do, and
// the rules still see every trace it does not remove (the version strings
// of the dialects that report the simulator's own, the stand-in model).
func Unmarked(tb testing.TB, sim *simengine.Server, keep ...Marker) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	kept := map[Marker]bool{}
	for _, m := range keep {
		kept[m] = true
	}
	srv := &http.Server{Handler: front(sim.Handler(), kept), ReadHeaderTimeout: 10 * time.Second}
	// Serve ends when the front is closed; a front that failed otherwise
	// shows as the errors of the run that goes through it.
	go func() { _ = srv.Serve(ln) }()
	done := make(chan struct{})
	go func() {
		// A dead engine refuses connections, as the simulator does alone.
		select {
		case <-sim.Dead():
			_ = srv.Close() // the engine is gone on purpose; the cleanup reports a failed close
		case <-done:
		}
	}()
	tb.Cleanup(func() {
		close(done)
		if err := srv.Close(); err != nil {
			tb.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// front rewrites the simulator's answers: its headers on every answer,
// and the bodies of the routes that name it (read whole; they are small).
func front(h http.Handler, keep map[Marker]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/props", "/v1/models", "/models", "/v1/model/list", "/metrics":
			rec := &recorder{header: http.Header{}, code: http.StatusOK}
			h.ServeHTTP(rec, r)
			body := rewrite(r.URL.Path, rec.body.Bytes(), keep)
			for k, vs := range rec.header {
				w.Header()[k] = vs
			}
			w.Header().Del("Content-Length")
			unmarkHeader(w.Header(), keep)
			w.WriteHeader(rec.code)
			_, _ = w.Write(body)
		default:
			h.ServeHTTP(&unmarkedWriter{ResponseWriter: w, keep: keep}, r)
		}
	})
}

func unmarkHeader(h http.Header, keep map[Marker]bool) {
	if !keep[MarkHeader] {
		h.Del(dialect.SimulatorHeaderName)
	}
	if !keep[MarkServer] && h.Get("Server") == dialect.SimulatorOwner {
		h.Del("Server")
	}
}

func rewrite(path string, body []byte, keep map[Marker]bool) []byte {
	if path == "/metrics" {
		// The simulator's counter goes; a real llama.cpp counts tokens.
		var out []string
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if !strings.Contains(line, dialect.SimulatorMetricPrefix) {
				out = append(out, line)
			}
		}
		return []byte(strings.Join(out, ""))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if dec.Decode(&doc) != nil {
		return body // an error answer (loading, 404) has no marker
	}
	if path == "/props" {
		if !keep[MarkProps] {
			delete(doc, "strata_simulator")
		}
		if !keep[MarkPropsVersion] {
			delete(doc, "strata_simulator_version")
		}
	} else if !keep[MarkOwnedBy] {
		data, _ := doc["data"].([]any)
		for _, m := range data {
			if card, ok := m.(map[string]any); ok && card["owned_by"] == dialect.SimulatorOwner {
				card["owned_by"] = "llamacpp" // llama-server's own
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return append(out, '\n')
}

// recorder holds an answer to rewrite it.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// unmarkedWriter removes the markers from a streamed answer's headers.
type unmarkedWriter struct {
	http.ResponseWriter
	keep    map[Marker]bool
	written bool
}

func (u *unmarkedWriter) WriteHeader(code int) {
	if !u.written {
		u.written = true
		unmarkHeader(u.Header(), u.keep)
	}
	u.ResponseWriter.WriteHeader(code)
}

func (u *unmarkedWriter) Write(b []byte) (int, error) {
	if !u.written {
		u.WriteHeader(http.StatusOK)
	}
	return u.ResponseWriter.Write(b)
}

// Flush passes the simulator's flushes on: it streams event by event.
func (u *unmarkedWriter) Flush() {
	if !u.written {
		u.WriteHeader(http.StatusOK)
	}
	if f, ok := u.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
