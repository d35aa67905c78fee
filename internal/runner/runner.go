// Package runner executes the protocol's schedule against one server: the
// stages in order, one request at a time (four at once in the optional
// concurrency rounds), the abort and skip rules, cancellation, and the
// settings check where the server reveals its resolved parameters. It
// records what happened and derives nothing; the result package turns the
// record into results.json.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// Progress receives live progress. All methods may be called from several
// goroutines during the concurrency stage.
type Progress interface {
	// Planned hears the whole schedule before the first request.
	Planned(reqs []*record.Request)
	Stage(phase protocol.Phase, requests int)
	Begin(id string, index, total int)
	Event(id, kind string)
	End(id string, e *record.Request)
	// Checked hears a request once its record is final: the stream ended
	// and the resolved settings were checked.
	Checked(e *record.Request)
}

// Config is what a run needs.
type Config struct {
	Client   *client.Client
	Bundle   *fixtures.Bundle
	Optional bool
	Progress Progress
	// Now is the run's clock (nil: the runtime's); the client's latencies
	// come from the client's.
	Now clock.Func
	// HealthTimeout bounds the one /health probe after a failure.
	HealthTimeout time.Duration
	// Journal, when set, hears each request before it is dispatched and
	// after it has finished (and its settings were checked), before the
	// next one is sent.
	Journal Journal
	// ID and StartedAt, when set, are the run's (the caller wrote them to
	// the journal's header); otherwise Run makes them. StartedAt is the
	// caller's one reading of Now at the start, monotonic part and all: it
	// is the run's origin, so no dispatched_at can come before started_at
	// whatever the wall clock does meanwhile (record.Run.Wall).
	ID        string
	StartedAt time.Time
	// Server is what the server said of itself before the run (nil: Run
	// asks it). Its dialect decides how every request is said.
	Server *record.Server
}

// Journal keeps a run's record as it goes, so a killed runner's work is
// not lost. Its methods are called from the request's goroutine.
type Journal interface {
	Begin(rec *record.Run, e *record.Request)
	Done(rec *record.Run, e *record.Request)
}

// NewID makes a run ID from its start: unique per machine to the second
// with its random suffix.
func NewID(started time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return started.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Interruption names what ended a run early, from its context's cause.
func Interruption(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause.Error()
	}
	return "an interrupt"
}

// Execute executes the schedule. It returns when every request has an outcome
// or a skip reason; cancelling ctx ends the run the same way (the request in
// flight fails as cancelled, the rest are skipped) and Execute still returns the
// record.
func Execute(ctx context.Context, cfg Config) *record.Run {
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = 10 * time.Second
	}
	cfg.Now = clock.Or(cfg.Now)
	origin := cfg.StartedAt
	if origin.IsZero() {
		origin = cfg.Now()
	}
	rec := &record.Run{ID: cfg.ID, StartedAt: origin.UTC(), Origin: origin, Optional: cfg.Optional}
	if rec.ID == "" {
		rec.ID = NewID(rec.StartedAt)
	}
	if cfg.Server != nil {
		rec.Server = *cfg.Server
	} else {
		rec.Server = ProbeServer(ctx, cfg.Client)
	}
	rec.BaseURL = cfg.Client.BaseURL()
	for _, req := range protocol.Schedule(cfg.Optional) {
		f, err := cfg.Bundle.Fixture(req.ID)
		e := &record.Request{Req: req, Fixture: f}
		if err != nil {
			e.SkipReason = err.Error()
		}
		rec.Requests = append(rec.Requests, e)
	}
	r := &run{cfg: cfg, rec: rec, dialect: dialect.Of(rec.Server.Dialect)}
	if cfg.Progress != nil {
		cfg.Progress.Planned(rec.Requests)
	}
	r.stages(ctx)
	if ctx.Err() != nil {
		rec.Interrupted, rec.Interruption = true, Interruption(ctx)
	}
	return rec
}

type run struct {
	cfg Config
	rec *record.Run
	// dialect is the engine the record identifies, as the engine table
	// knows it.
	dialect dialect.Dialect
	skipAll string // once set, every request not yet dispatched is skipped with it
	mu      sync.Mutex
}

func (r *run) byPhase(p protocol.Phase) []*record.Request {
	var out []*record.Request
	for _, e := range r.rec.Requests {
		if e.Req.Phase == p {
			out = append(out, e)
		}
	}
	return out
}

func (r *run) stages(ctx context.Context) {
	for _, phase := range protocol.Phases() {
		list := r.byPhase(phase)
		if len(list) == 0 {
			continue
		}
		if r.cfg.Progress != nil && r.skipAll == "" && ctx.Err() == nil {
			r.cfg.Progress.Stage(phase, len(list))
		}
		if phase == protocol.PhaseConcurrency {
			r.concurrency(ctx, list)
			continue
		}
		for i, e := range list {
			r.one(ctx, e, i, len(list))
			if phase == protocol.PhaseWarmup && e.Outcome != nil && e.Outcome.Failed() && r.skipAll == "" {
				// An engine whose version could not tell that it refuses a
				// profile setting says so in its answer: the run stops
				// here, naming it, rather than sending 21 requests in vain.
				if ref := r.dialect.RefusedIn(e.Outcome.HTTPStatus, e.Outcome.ErrorBody); ref != nil {
					r.rec.Refusal = ref.Text()
					r.abort("the warm-up was refused: " + r.rec.Refusal + "; every request after it is skipped")
					continue
				}
				r.abort("the warm-up failed, so every request after it is skipped")
			}
		}
	}
}

func (r *run) abort(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.skipAll == "" {
		r.skipAll = reason
		r.rec.Aborted = reason
	}
}

func (r *run) skipReason(ctx context.Context) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil && r.skipAll == "" {
		r.skipAll = "the run was interrupted (" + Interruption(ctx) + ") before this request was sent"
		r.rec.Aborted = r.skipAll
	}
	return r.skipAll
}

// one sends a request at concurrency 1, then checks the resolved settings
// and, after a failure, whether the server still answers.
func (r *run) one(ctx context.Context, e *record.Request, i, n int) {
	if e.SkipReason != "" {
		return
	}
	if reason := r.skipReason(ctx); reason != "" {
		e.SkipReason = reason
		return
	}
	r.send(ctx, e, i, n)
	if ctx.Err() != nil {
		if j := r.cfg.Journal; j != nil && e.Outcome != nil {
			j.Done(r.rec, e)
		}
		return
	}
	e.Settings = checkSettings(ctx, r.cfg.Client, r.dialect.HiddenSettings(), []*record.Request{e})[0]
	if j := r.cfg.Journal; j != nil {
		j.Done(r.rec, e)
	}
	if p := r.cfg.Progress; p != nil {
		p.Checked(e)
	}
	if e.Outcome.Failed() {
		r.afterFailure(ctx, e.Req.ID)
	}
}

// afterFailure asks /health once; a server that does not answer ends the run.
func (r *run) afterFailure(ctx context.Context, id string) {
	if ctx.Err() != nil {
		return
	}
	status, _, err := r.cfg.Client.Get(ctx, "/health", r.cfg.HealthTimeout)
	if err != nil {
		r.abort(fmt.Sprintf("after %s failed, the server did not answer /health (%v), so the remaining requests are skipped", id, err))
		return
	}
	_ = status // any answer means the server is alive; a 503 is still an answer
}

func (r *run) send(ctx context.Context, e *record.Request, i, n int) {
	body, err := r.dialect.Body(e.Fixture)
	if err != nil {
		e.SkipReason = "could not build the request: " + err.Error()
		return
	}
	e.Body = body
	if p := r.cfg.Progress; p != nil {
		p.Begin(e.Req.ID, i+1, n)
	}
	if j := r.cfg.Journal; j != nil {
		// What the journal keeps of a request that may never end: its
		// dispatch, on the run's clock (the client's own reading follows).
		e.Start = r.cfg.Now()
		e.DispatchedAt = r.rec.Wall(e.Start)
		j.Begin(r.rec, e)
	}
	onEvent := func(kind string) {
		if p := r.cfg.Progress; p != nil {
			p.Event(e.Req.ID, kind)
		}
	}
	e.Outcome, e.Start, e.End = r.cfg.Client.Chat(ctx, r.dialect.Wire(), body, onEvent)
	// The recorded dispatch is the trace's own instant, on the run's one
	// clock: a dispatch and the durations never disagree by a scheduling
	// delay or by a step of the wall clock meanwhile.
	e.DispatchedAt = r.rec.Wall(e.Start)
	if p := r.cfg.Progress; p != nil {
		p.End(e.Req.ID, e)
	}
}

// concurrency runs the optional stage: each round releases its four
// requests together and waits for the whole round.
func (r *run) concurrency(ctx context.Context, list []*record.Request) {
	for round := 1; round <= protocol.ConcurrencyRounds; round++ {
		var batch []*record.Request
		for _, e := range list {
			if e.Req.Round == round {
				batch = append(batch, e)
			}
		}
		if reason := r.skipReason(ctx); reason != "" {
			for _, e := range batch {
				if e.SkipReason == "" {
					e.SkipReason = reason
				}
			}
			continue
		}
		r.release(ctx, batch, round, len(list))
		if ctx.Err() != nil {
			// Interrupted: what finished is journaled as it is, unchecked.
			if j := r.cfg.Journal; j != nil {
				for _, e := range batch {
					if e.Outcome != nil {
						j.Done(r.rec, e)
					}
				}
			}
			continue
		}
		r.checkRound(ctx, batch)
	}
}

// release sends a round's requests that are not skipped together and
// waits until every one has ended.
func (r *run) release(ctx context.Context, batch []*record.Request, round, total int) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i, e := range batch {
		if e.SkipReason != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			r.send(ctx, e, (round-1)*len(batch)+i, total)
		}()
	}
	close(release)
	wg.Wait()
}

// checkRound checks the settings of a round's sent requests, then
// journals and shows each; a failed request of the round is handled once
// the round is checked.
func (r *run) checkRound(ctx context.Context, batch []*record.Request) {
	var sent []*record.Request
	failed := ""
	for _, e := range batch {
		if e.Outcome == nil {
			continue
		}
		sent = append(sent, e)
		if e.Outcome.Failed() && failed == "" {
			failed = e.Req.ID
		}
	}
	checks := checkSettings(ctx, r.cfg.Client, r.dialect.HiddenSettings(), sent)
	for i, e := range sent {
		e.Settings = checks[i]
		if j := r.cfg.Journal; j != nil {
			j.Done(r.rec, e)
		}
		if p := r.cfg.Progress; p != nil {
			p.Checked(e)
		}
	}
	if failed != "" {
		r.afterFailure(ctx, failed)
	}
}

// ProbeServer asks the server about itself, on the routes dialect names
// (/health, /props, /v1/models, /slots, /v1/status and the routes only
// some engines serve), and identifies its dialect.
func ProbeServer(ctx context.Context, c *client.Client) record.Server {
	var s record.Server
	var ev contract.ServerEvidence
	// refused notes a route that asked for a key strata did not have (or
	// did not accept the one it sent).
	refused := func(path string, status int) {
		if status == 401 || status == 403 {
			s.Refused = append(s.Refused, fmt.Sprintf("GET %s answered HTTP %d", path, status))
		}
	}
	if status, h, body, err := c.GetHeader(ctx, dialect.HealthRoute, 10*time.Second); err == nil {
		s.Health = status
		dialect.ReadHeaders(&ev, h.Get)
		refused(dialect.HealthRoute, status)
		if status == 200 && json.Valid(body) {
			ev.Health = body
		}
	}
	status, body, err := c.Get(ctx, dialect.PropsRoute, 10*time.Second)
	switch {
	case err != nil:
		s.PropsErr = "GET " + dialect.PropsRoute + " did not answer: " + err.Error()
	case status != 200:
		s.PropsErr = fmt.Sprintf("GET %s answered HTTP %d", dialect.PropsRoute, status)
		refused(dialect.PropsRoute, status)
	case !json.Valid(body):
		s.PropsErr = "GET " + dialect.PropsRoute + " did not answer JSON"
	default:
		ev.Props = body
		if p, ok := dialect.ReadProps(body); ok {
			s.Template, s.ModelPath, s.ModelAlias = p.ChatTemplate, p.ModelPath, p.ModelAlias
			s.Slots, s.ContextSize, s.SimulatorVersion = p.TotalSlots, p.Default.NCtx, p.SimVersion
		}
	}
	status, body, err = c.Get(ctx, dialect.ModelsRoute, 10*time.Second)
	switch {
	case err != nil:
		s.ModelsErr = "GET " + dialect.ModelsRoute + " did not answer: " + err.Error()
	case status != 200 || !json.Valid(body):
		s.ModelsErr = fmt.Sprintf("GET %s answered HTTP %d", dialect.ModelsRoute, status)
		refused(dialect.ModelsRoute, status)
	default:
		ev.Models = body
	}
	// json200 is a route's answer when it is 200 with JSON, else nil.
	json200 := func(path string) json.RawMessage {
		status, body, err := c.Get(ctx, path, 10*time.Second)
		refused(path, status)
		if err != nil || status != 200 || !json.Valid(body) {
			return nil
		}
		return body
	}
	s.SlotsRaw = json200(dialect.SlotsRoute)
	ev.Status = json200(dialect.StatusRoute)
	dialect.AskIdentityRoutes(&ev, json200)
	s.SetEvidence(ev)
	d := dialect.Identify(ev)
	if route, body := d.ShowRequest(); route != "" {
		askShow(ctx, c, &s, route, body)
	}
	s.Dialect = d.Record()
	s.BuildInfo, s.VersionSource = dialect.EngineVersion(ev, d)
	if ctxSize, slots := dialect.StatusCapacity(ev); s.ContextSize == nil && s.Slots == nil {
		s.ContextSize, s.Slots = ctxSize, slots
	}
	if s.SimulatorVersion == "" {
		s.SimulatorVersion = ev.SimulatorHeader
	}
	return s
}

// askShow asks the engine's own route for the model's template and file
// (Ollama's POST /api/show), where /props says neither, and keeps its
// answer as evidence.
func askShow(ctx context.Context, c *client.Client, s *record.Server, route string, body []byte) {
	status, raw, err := c.Post(ctx, route, body, 10*time.Second)
	switch {
	case err != nil:
		s.NoTemplate = "POST " + route + " did not answer: " + err.Error()
		return
	case status != 200:
		s.NoTemplate = fmt.Sprintf("POST %s answered HTTP %d", route, status)
		return
	case !json.Valid(raw):
		s.NoTemplate = "POST " + route + " did not answer JSON"
		return
	}
	s.OllamaShowRaw = raw
	shown := dialect.ReadShow(raw)
	s.Template, s.NoTemplate = shown.Template, shown.NoTemplate
	s.ModelPath, s.ModelPathNote = shown.ModelPath, shown.ModelPathNote
}
