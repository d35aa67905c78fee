package benchrun

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/journal"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/validate"
)

// recovered rebuilds a killed run's record from its journal: every request
// the journal finished exactly as it was, the one in flight failed ("the
// runner stopped"), the rest skipped.
func recovered(j *journal.Journal, b *fixtures.Bundle) *record.Run {
	h := j.Header
	origin := h.StartedAt // any fixed instant: only offsets from it matter
	rec := &record.Run{ID: h.RunID, StartedAt: h.StartedAt, Origin: origin, Optional: h.Optional, Server: h.Server,
		Interrupted: true, Interruption: derive.RunnerStopped, Aborted: derive.RunnerStopped, BaseURL: h.BaseURL}
	d := dialect.Of(h.Server.Dialect)
	for _, req := range protocol.Schedule(h.Optional) {
		f, err := b.Fixture(req.ID)
		e := &record.Request{Req: req, Fixture: f}
		if err != nil {
			e.SkipReason = err.Error()
		}
		rec.Requests = append(rec.Requests, e)
		if done, ok := j.Dones[req.ID]; ok {
			e.Body, e.Outcome, e.Settings, e.DispatchedAt = done.Body, done.Outcome, done.Settings, done.DispatchedAt
			e.Start, e.End = origin.Add(done.Start), origin.Add(done.End)
			if e.Outcome == nil {
				e.Outcome = &record.Outcome{}
			}
			continue
		}
		if begin, ok := j.Begins[req.ID]; ok && f != nil {
			// In flight: the body sent is the fixture in the run's dialect.
			e.Body, _ = d.Body(f)
			e.DispatchedAt, e.Lost = begin.DispatchedAt, true
			e.Start = origin.Add(begin.Offset)
			e.End = e.Start
			e.Outcome = &record.Outcome{Error: &record.Error{Kind: derive.RunnerStoppedKind,
				Message: "the runner stopped while this request was in flight; what the server sent was not recorded"}}
			continue
		}
		if e.SkipReason == "" {
			e.SkipReason = "the runner stopped before this request was sent"
		}
	}
	return rec
}

// recoverLog keeps the log the engine the runner started wrote into the
// pending folder up to the kill, and says what became of it.
func recoverLog(facts *record.Facts, dir string) string {
	if e := facts.Extensions.Engine; e == nil || !e.StartedByRunner {
		return "the runner did not start the engine, so the pending folder holds no engine log"
	}
	log, err := engine.ReadLog(filepath.Join(dir, contract.EngineLog))
	if err != nil {
		why := "the engine's output in the pending folder could not be read: " + err.Error()
		facts.Missing = maps.Clone(facts.Missing)
		if facts.Missing == nil {
			facts.Missing = map[string]string{}
		}
		facts.Missing[contract.PtrEngineLog] = "the run was recovered from its journal, and " + why
		return why
	}
	facts.EngineLog = log
	return "the engine log is what the engine wrote into the pending folder up to the kill"
}

// Bundles open the bundle of a protocol by its ID (the run's own, which
// its journal names) and give the redactor a run with it uses.
type Bundles struct {
	Open     func(id string) (*fixtures.Bundle, error)
	Redactor func(*fixtures.Bundle) *redact.Redactor
}

// Recover turns the journal of a pending folder into a result folder beside
// it, written by finish as `bench run` writes its own, and returns the
// folder written. The folder is written only when the same validation as
// `strata bench report` accepts it, and it appears complete (written
// aside, then renamed). Only then are the pending folder's own files
// removed; on any error nothing is removed. now is the wall clock; ctx
// ends the work early.
func Recover(ctx context.Context, dir string, bs Bundles, finish Finish, now time.Time) (string, error) {
	j, err := journal.Read(ctx, dir, now)
	if err != nil {
		return "", err
	}
	b, err := bs.Open(j.Header.Facts.Protocol.ID)
	if err != nil {
		return "", fmt.Errorf("the run followed %s: %w", j.Header.Facts.Protocol.ID, err)
	}
	red := bs.Redactor(b)
	// The journal's protocol is the bundle's, as verified now.
	j.Header.Facts.Protocol = b.Protocol
	rec := recovered(j, b)
	facts := j.Header.Facts
	facts.Extensions.Recovered = &contract.Recovered{From: "the run's journal (" + journal.Name + ")", FinishedRequests: len(j.Dones),
		TornLastLine: j.Torn, Note: recoverLog(&facts, dir)}
	valid := func(folder string) error {
		if err := passesReport(folder, b); err != nil {
			return fmt.Errorf("the folder it would become %w; nothing was changed", err)
		}
		return nil
	}
	out, _, err := finish(filepath.Dir(dir), rec, j.Header.Identity, facts, b, red, valid)
	if err != nil {
		return "", err
	}
	if err := j.Remove(); err != nil {
		return out, fmt.Errorf("the result was written to %s, but the pending folder was not removed: %w", out, err)
	}
	return out, nil
}

// passesReport is nil when the folder passes bench report (validate.Dir
// with the run's bundle), else says how it does not: its violations'
// count and the first.
func passesReport(folder string, b *fixtures.Bundle) error {
	v, err := validate.Dir(folder, b)
	if err != nil {
		return err
	}
	if n := len(v.Violations); n > 0 {
		return fmt.Errorf("is not valid (%s; the first: %s)", humanize.Count(n, "violation", "violations"), v.Violations[0])
	}
	return nil
}
