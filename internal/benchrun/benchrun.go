// Package benchrun is the run use case: `strata bench run` and `strata
// bench check` as functions of their options and one injected process
// state. It checks what can be checked before anything is sent (the result
// location, the profile, the fixtures), brings the engine up (or finds it
// serving), probes the machine and hashes the model files (while the
// engine loads them, when it starts the engine), runs the preflight, keeps
// the journal while the runner runs the schedule, stops the engine, and
// has the result folder written (Finish: the command layer gives the
// folder writer, which Recover, a killed run's tail, calls alike).
//
// Nothing here reads the process's own state: the streams, the working
// folder, the environment, the machine's file system, the programs the
// probes run, the cache folder, the wall clock and this binary's path all
// come in the injected procstate.State. Everything the run says to the
// operator goes through a Printer. The command layer (internal/cli) maps
// flags to Options.
package benchrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/journal"
	"github.com/strata-bench/strata/internal/liveline"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/version"
)

// session is a run's process state and the screen its messages go to.
type session struct {
	procstate.State
	// scr is the status line on Stderr.
	scr *liveline.Screen
	// out is how the run speaks to the operator.
	out Printer
}

// newSession is st with its status line: Stderr then writes through it,
// so every message keeps the status line intact and fitted.
func newSession(st procstate.State) (session, error) {
	p := session{State: st}
	// The cache folder is settled once: the hash cache and the simulator's
	// stand-in model live there.
	cache, err := st.Cache()
	if err != nil {
		return p, err
	}
	p.CacheDir = cache
	if scr, ok := liveline.Of(st.Stderr); ok {
		p.scr = scr
	} else {
		p.scr = liveline.New(st.Stderr, st.TTY, st.Width, nil)
	}
	p.Stderr = p.scr
	p.out = screenPrinter{p.scr}
	return p, nil
}

// clearStatus removes the status line (a phase it showed is over).
func (p session) clearStatus() { p.scr.Clear() }

// Options are what the operator chose.
type Options struct {
	Target
	Optional, Rehash bool
	// ResultsDir is where the result folder goes ("": bench/results when the
	// working folder has one, else ./bench-results).
	ResultsDir string
	// Declared is the identity given on the command line; the profile's
	// [identity] fills what it leaves unset.
	Declared Declared
	// Command is the sanitized command line, as the result records it.
	Command string
	// Finish writes the result folder (internal/folder.Finish).
	Finish Finish
}

// Finish writes a run's record as its result folder under root and
// returns the folder and its result; check, when set, must accept the
// complete folder first. It is internal/folder.Finish, given by the
// command layer: the use case maps and runs, the writer above it writes,
// and `bench run` and `bench recover` end in the same one.
type Finish func(root string, rec *record.Run, id record.Identity, facts record.Facts, b *fixtures.Bundle, red *redact.Redactor,
	check func(dir string) error) (string, *contract.Results, error)

// Outcome is a written result.
type Outcome struct {
	Dir     string
	Results *contract.Results
}

// Run runs the protocol and writes the result folder. A run a signal ended
// early still writes its folder and returns it with an
// exitcode.InterruptedError.
func Run(ctx context.Context, st procstate.State, o Options) (*Outcome, error) {
	if o.Finish == nil {
		return nil, fmt.Errorf("benchrun.Run: no Finish to write the result folder with")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	logFile, err := o.logFile(st)
	if err != nil {
		return nil, err
	}
	p, err := newSession(st)
	if err != nil {
		return nil, err
	}
	defer p.scr.Clear()
	b := &bench{p: p, o: o, logFile: logFile}
	if err := b.prepare(); err != nil {
		return nil, err
	}
	if b.t, err = connect(ctx, p, o.Target, b.prof, b.bundle, b.hashes, b.root); err != nil {
		return nil, err
	}
	defer b.t.close()
	if err := b.beforeWarmup(ctx); err != nil {
		return nil, err
	}
	out, err := b.execute(ctx)
	if out != nil && ctx.Err() != nil {
		return out, exitcode.InterruptedError{Msg: fmt.Sprintf("the run was interrupted (%s); the partial result above was written", runner.Interruption(ctx))}
	}
	return out, err
}

// bench is one run while Run goes through its stages.
type bench struct {
	p      session
	o      Options
	root   string
	prof   *engine.Profile
	id     record.Identity
	bundle *fixtures.Bundle
	inst   install.Info
	hashes *prehash
	t      *target
	srv    record.Server
	facts  record.Facts
	// logFile is the log file of an engine already serving (--engine-log;
	// nil: none).
	logFile *engine.LogFile
	// red redacts everything the run writes (target.redactor), from the
	// preflight on.
	red *redact.Redactor
}

// prepare checks everything that can be checked before an engine is
// touched: where the result goes (a run whose folder cannot be written is
// not started), the profile, the declared identity, and the fixtures.
func (b *bench) prepare() error {
	p, o := b.p, b.o
	b.inst = p.Install()
	sayInstall(p.out, b.inst)
	b.root = ResultsRoot(p.Dir)
	if o.ResultsDir != "" {
		b.root = p.Path(o.ResultsDir)
	}
	if err := checkResultsRoot(b.root, o.ResultsDir != ""); err != nil {
		return err
	}
	for _, pend := range journal.Pending(b.root) {
		p.out.Note("%s holds the journal of a run that did not finish; `strata bench recover` turns it into a partial result", pend)
	}
	var err error
	if b.prof, err = o.loadProfile(p); err != nil {
		return err
	}
	if b.id, err = o.Declared.merge(b.prof); err != nil {
		return err
	}
	b.id.Command = o.Command
	if b.bundle, err = o.bundle(p); err != nil {
		return fmt.Errorf("refusing to run: %w", err)
	}
	p.out.Line("protocol: %s", protocolLine(b.bundle))
	b.hashes = newPrehash(p, b.prof, o.Rehash)
	// A server off loopback makes the run nonconforming: said before
	// anything is sent, with the result's own words, so the user can stop.
	if u := o.URL; u != "" || b.prof != nil {
		if b.prof != nil {
			u = b.prof.URL
		}
		if r := derive.Remote(u); r != nil {
			p.out.Warn(*r)
		}
	}
	return nil
}

// beforeWarmup identifies the engine and gathers the run's facts:
// probing the machine and hashing the model files come before the warm-up
// and outside required_duration_s, and everything that already makes the
// run nonconforming is said now, in the words the result will use.
func (b *bench) beforeWarmup(ctx context.Context) error {
	p, t := b.p, b.t
	b.srv = runner.ProbeServer(ctx, t.client)
	if err := t.checkKey(b.srv, b.bundle); err != nil {
		return err
	}
	view, lp := t.engineView(p)
	d := dialect.Of(b.srv.Dialect)
	p.out.Line("engine: %s (%s)", d.Name(), displayLine(d.IdentifiedBy))
	if ref := d.Refuses(); ref != nil {
		return fmt.Errorf("refusing to run, before the warm-up: %s; upgrade the engine", displayLine(ref.Text()))
	}
	if why := d.CannotRun(); why != "" {
		return fmt.Errorf("refusing to run, before the warm-up: %s", displayLine(why))
	}
	b.facts = gatherFacts(ctx, p, t, b.srv, view, lp, b.hashes, b.inst)
	b.facts.Protocol = b.bundle.Protocol
	b.facts.Engine = view
	budget := d.CheckBudget(view)
	for _, r := range derive.BeforeRun(result.Preview(b.srv, b.facts), b.srv.Evidence(), d.NotTakenIn(b.srv.Evidence()), budget.Nonconforming) {
		if r.Kind != contract.NoCommit { // said on the run's first lines
			p.out.Warn(r)
		}
	}
	if budget.Nonconforming == "" && budget.State == "not verifiable" {
		p.out.Note("the reasoning budget is not verifiable: %s", budget.Detail)
	}
	// Preflight: the engine's own template and tokenizer against the bundle.
	b.red = t.redactor(p, b.bundle)
	pf, err := preflightCheck(ctx, t.client, b.srv, b.bundle, b.red, nil)
	if err != nil {
		return err
	}
	b.facts.Extensions.Preflight = pf
	reportPreflight(p.out, pf, false)
	for _, r := range derive.Workload(pf, d) {
		p.out.Warn(r)
	}
	b.facts.Extensions.Engine = engineInfo(t, b.prof, view, lp)
	if b.prof != nil {
		b.facts.EngineConfig = map[string]any{"profile": b.prof.Sanitized()}
		if t.proc != nil {
			b.facts.EngineConfig["started_command"] = b.prof.Command
		}
	}
	return nil
}

// execute runs the schedule with its journal (each request's record on
// disk before the next is sent, so even a killed runner leaves its work
// recoverable), stops the engine and writes the result folder.
func (b *bench) execute(ctx context.Context) (*Outcome, error) {
	p, t := b.p, b.t
	red := b.red
	// One reading starts the run: its wall time names the run and the
	// folder, and the runner takes every dispatch's wall time from it.
	origin := p.Clock()
	started := origin.UTC()
	runID := runner.NewID(started)
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", b.root, err)
	}
	if b.logFile != nil {
		if err := b.logFile.Mark(); err != nil {
			return nil, err
		}
	}
	jw, err := journal.Create(b.root, journal.Header{RunID: runID, Folder: contract.FolderName(started, b.facts.Hardware, runID), StartedAt: started,
		Optional: b.o.Optional, Identity: b.id, Facts: b.facts, Server: b.srv, BaseURL: t.baseURL, EngineGroup: t.group()}, red)
	if err != nil {
		return nil, err
	}
	// Every journal line was synced to disk as it was written: closing it
	// (after Remove closed it already, or when the result could not be
	// written) loses nothing.
	defer func() { _ = jw.Close() }()
	if err := t.adoptLog(jw.Dir()); err != nil {
		p.out.Line("warning: %v; a killed run would lose the engine's log", err)
	}
	sampler := b.startPower(ctx)
	progress := newProgress(p.scr, p.Clock, b.bundle.MaxShared(), b.srv)
	rec := runner.Execute(ctx, runner.Config{Client: t.client, Bundle: b.bundle, Optional: b.o.Optional, Progress: progress, Server: &b.srv,
		Journal: redacting{jw, red}, ID: runID, StartedAt: origin, Now: p.Clock})
	rec.Power = sampler.stop(ctx, p.Clock())
	progress.finish()
	if err := jw.Err(); err != nil {
		p.out.Line("warning: the run's journal could not be kept (%v); the result is written from memory", err)
	}
	t.stop()
	b.keepLog()
	dir, res, err := b.o.Finish(b.root, rec, b.id, b.facts, b.bundle, red, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (the run's journal stays in %s; `strata bench recover` writes the result from it)", err, jw.Dir())
	}
	if err := jw.Remove(); err != nil {
		p.out.Line("warning: the pending folder %s was not removed: %v", jw.Dir(), err)
	}
	warnForeign(p.out, res)
	out := &Outcome{Dir: dir, Results: res}
	if ref := rec.Refusal; ref != "" {
		return out, fmt.Errorf("the run stopped after the warm-up: %s (the result in %s records it)", displayLine(ref), dir)
	}
	if why := measuredNothing(rec, res.RequestCounts); why != "" && ctx.Err() == nil {
		return out, fmt.Errorf("the run measured nothing: %s (the result in %s records it)", displayLine(why), dir)
	}
	// The folder is kept whatever rule the run broke; one whose evidence
	// disagrees with itself (an engine log that is not this run's) is
	// said to fail here, not first by bench report.
	if err := passesReport(dir, b.bundle); err != nil {
		return out, fmt.Errorf("the result in %s does not pass bench report: it %w", dir, err)
	}
	return out, nil
}

// warnForeign says that the engine answered requests strata did not send,
// which only the engine log read after the run shows (derive.Foreign): the
// other reasons were warned of as they showed.
func warnForeign(out Printer, res *contract.Results) {
	for _, r := range res.Extensions.StatusReasons.Nonconforming {
		if r.Kind == contract.ForeignRequests {
			out.Line("warning: the run is nonconforming: %s", escape.Line(r.Text))
		}
	}
}

// measuredNothing says why a run that was not interrupted failed although
// its folder was written: no required measured request (performance or
// sanity) completed or reached its cap, so the folder holds no speed and
// no answer to score. It is "" for a run that measured something, even
// one that skipped the rest (a partial result is still a result).
func measuredNothing(rec *record.Run, c contract.RequestCounts) string {
	if c.Performance.Completed+c.Performance.Truncated+c.Sanity.Completed+c.Sanity.Truncated > 0 {
		return ""
	}
	if rec.Aborted != "" {
		return rec.Aborted
	}
	return "every required request failed"
}

// keepLog keeps the engine's log for the result: the output of the engine
// the runner started, or the log file --engine-log names, read now that
// the run is over. A log that cannot be read is null with why.
func (b *bench) keepLog() {
	var err error
	switch {
	case b.t.proc != nil:
		b.facts.EngineLog, err = b.t.proc.Log()
	case b.logFile != nil:
		b.facts.EngineLog, err = b.logFile.Read()
	}
	if err != nil {
		b.facts.EngineLog = nil
		b.p.out.Line("warning: the engine's log could not be kept: %v", err)
		if b.facts.Missing == nil {
			b.facts.Missing = map[string]string{}
		}
		b.facts.Missing[contract.PtrEngineLog] = "the engine's log could not be read after the run: " + err.Error()
	}
}

// redacting is the journal the runner hears: it redacts each finished
// request's evidence in the record itself, as the result will hold it
// (result.RedactOutcome, which Assemble repeats), before the journal keeps
// it; the live line's warnings, which come after, read it redacted too.
type redacting struct {
	*journal.Writer
	red *redact.Redactor
}

// Done implements runner.Journal.
func (j redacting) Done(rec *record.Run, e *record.Request) {
	if e.Outcome == nil {
		return
	}
	result.RedactOutcome(e, j.red)
	j.Writer.Done(rec, e)
}

// ResultsRoot is where result folders go: bench/results when the working
// folder has one (a Strata checkout), otherwise ./bench-results.
func ResultsRoot(workdir string) string {
	if st, err := os.Stat(filepath.Join(workdir, "bench", "results")); err == nil && st.IsDir() {
		return filepath.Join(workdir, "bench", "results")
	}
	return filepath.Join(workdir, "bench-results")
}

// sayInstall is the run's first line: this strata's version, its commit
// and where that was read; then, before anything is sent, what the
// checkout around the working folder says and, without a commit, that the
// run will be nonconforming and how to get an install that has one.
func sayInstall(out Printer, inst install.Info) {
	out.Line("strata %s: %s", version.Version, inst.Line())
	for _, w := range inst.Warnings {
		out.Line("warning: %s", w)
	}
	if inst.Commit == "" {
		out.Warn(contract.StatusReason{Kind: contract.NoCommit, Text: "this install has no commit (strata_commit will be null: " + inst.Reason + "); to get one, " + install.Conforming})
	}
}

// protocolLine names the protocol a run follows and its bundle, on the
// run's first line.
func protocolLine(b *fixtures.Bundle) string {
	d := b.Protocol
	return fmt.Sprintf("%s (profile %s; corpus %s…; bundle %s)", d.ID, d.Profile, b.SHA256[:12], b.Where)
}

// checkResultsRoot makes sure a result can be written under root before
// any work is spent: root (or, when it does not exist yet, its nearest
// existing parent) is a writable folder with room for the evidence. A bad
// --results-dir is a usage error.
func checkResultsRoot(root string, flag bool) error {
	name := root
	if flag {
		name = "--results-dir " + root
	}
	dir, st := existing(root)
	switch {
	case st == nil:
		return fmt.Errorf("%s: no folder of it exists", name)
	case !st.IsDir() && flag:
		return exitcode.Usagef("%s: %s is a file, not a folder for results", name, dir)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is a file, not a folder for results", name, dir)
	}
	probe, err := os.CreateTemp(dir, ".strata-write-check-")
	if err != nil {
		return fmt.Errorf("%s: %s is not writable: %w", name, dir, err)
	}
	// The probe is empty and only proved the folder writable: its cleanup
	// is best effort and no reason to refuse the run.
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	if free, ok := freeBytes(dir); ok && free < minFreeBytes {
		return fmt.Errorf("%s: only %d MiB free on the file system of %s; a result needs up to %d MiB", name, free>>20, dir, minFreeBytes>>20)
	}
	return nil
}

// existing is path or the nearest of its parents that exists, and what it
// is (nil: none exists).
func existing(path string) (string, os.FileInfo) {
	for {
		if st, err := os.Stat(path); err == nil {
			return path, st
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path, nil
		}
		path = parent
	}
}

// minFreeBytes is the room a result folder may need: its journal and its
// files (a normal run writes about 1 MiB; outputs.jsonl is bounded at 512
// MiB, but a bounded request fails long before).
const minFreeBytes = 64 << 20
