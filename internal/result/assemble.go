// Package result maps a run's record to the result contract: each
// request's record and outputs.jsonl line (RequestRecord) and the reasons
// it gives as it ends (RequestReasons), the whole result (Assemble), the
// part known before the first request (Preview), and first of all the
// redaction of the server's evidence in the record. It is a function of
// the record and does no I/O: internal/folder writes what it assembles,
// and internal/validate reads a saved folder.
package result

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engineconfig"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/modelfiles"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/score"
)

// Assembled is everything a result folder holds, before redaction.
type Assembled struct {
	Results   contract.Results
	Outputs   []contract.Output
	Template  []byte // nil when the server revealed no template
	Config    []byte
	EngineLog []byte
	// Power is the samples artifact (nil: the run sampled no power).
	Power []byte
	Dir   string // the folder name
}

func ptr[T any](v T) *T { return &v }

// Assemble builds the result contract from a run record. It first redacts
// what the server sent in the record itself (RedactEvidence), so every
// verdict and reason is derived from exactly the evidence outputs.jsonl
// keeps and report derives the same again; the folder writer redacts the
// rest. red may be nil (nothing is redacted).
func Assemble(rec *record.Run, id record.Identity, facts record.Facts, maxShared map[string]int, red *redact.Redactor) (*Assembled, error) {
	if facts.Protocol.ID == "" {
		return nil, fmt.Errorf("the run names no protocol")
	}
	if red != nil {
		RedactEvidence(rec, red)
	}
	as := &assembler{rec: rec, id: id, facts: facts, maxShared: maxShared, missing: contract.Missing{}, srv: rec.Server}
	// The log as the folder keeps it, which the validator pairs with the
	// records as the assembly does.
	kept := facts.EngineLog
	if red != nil && kept != nil {
		kept = red.Bytes(kept)
	}
	as.logSplit, as.keptLog = measure.NewLogSplit(dialect.Of(rec.Server.Dialect), kept), kept
	// The facts' reasons first: they are the most precise (Missing keeps
	// the first reason given).
	for k, v := range facts.Missing {
		as.missing.Add(k, v)
	}
	as.protocol()
	as.requests()
	as.derived()
	as.run()
	as.software()
	as.model()
	if err := as.configuration(); err != nil {
		return nil, err
	}
	as.extensions()
	as.status()
	as.res.Missing = as.missing
	as.a.Results, as.a.Outputs = as.res, as.outs
	as.a.Dir = contract.FolderName(rec.StartedAt, facts.Hardware, as.res.Run.ID)
	return &as.a, nil
}

// assembler holds a result while Assemble builds it, step by step.
type assembler struct {
	rec       *record.Run
	id        record.Identity
	facts     record.Facts
	maxShared map[string]int
	srv       record.Server
	res       contract.Results
	missing   contract.Missing
	outs      []contract.Output
	byID      map[string]contract.Output
	// logSplit splits each prompt by the engine log where the answers do
	// not (nil: they do, or no log says).
	logSplit *measure.LogSplit
	// keptLog is the engine log as the folder keeps it (nil: none).
	keptLog []byte
	// nulls are the reasons of each request record's nulls, by request ID
	// (pointers relative to the record): what the summaries say of a
	// request whose metric is null.
	nulls     measure.Nulls
	derive    derive.Derived
	budget    contract.BudgetCheck
	engineCfg *contract.EngineConfig
	a         Assembled
	// first is the warm-up's dispatch: the origin of offset_s and of the
	// power readings' times.
	first time.Time
}

func (as *assembler) protocol() {
	f := as.facts
	as.res = contract.Results{
		Format:        protocol.ResultFormat,
		SchemaVersion: protocol.SchemaVersion,
		Protocol: contract.Protocol{
			ID: f.Protocol.ID, GitCommit: f.StrataCommit, Profile: f.Protocol.Profile,
			CorpusSHA256: f.Protocol.CorpusSHA256,
		},
	}
	as.missing.Add(contract.PtrProtocolModelCardRevision, "not pinned yet: the draft protocol pins the model-card revision before activation (activation checklist)")
	if f.StrataCommit == nil {
		as.missing.Add(contract.PtrProtocolGitCommit, noCommit)
	}
}

// noCommit is assembly's reason for a missing commit when the install gave
// none of its own.
const noCommit = "this install has no commit (no VCS stamp in the binary, no source checkout, no COMMIT file)"

// requests are the request records and their outputs, each dispatch with
// its offset from the run's first dispatch (and from its round's).
func (as *assembler) requests() {
	rec := as.rec
	roundStart := map[int]time.Time{}
	var first time.Time // the warm-up's dispatch: durations are rebuilt from offsets to it
	for _, e := range rec.Requests {
		if e.Outcome == nil {
			continue
		}
		if first.IsZero() || e.Start.Before(first) {
			first = e.Start
		}
		if t, ok := roundStart[e.Req.Round]; e.Req.Phase == protocol.PhaseConcurrency && (!ok || e.Start.Before(t)) {
			roundStart[e.Req.Round] = e.Start
		}
	}
	as.first = first
	as.byID, as.nulls = map[string]contract.Output{}, measure.Nulls{}
	for i, e := range rec.Requests {
		r, o, m := recordOf(e, dialect.Of(rec.Server.Dialect), as.logSplit)
		for k, v := range m {
			as.missing.Add(contract.Pointer("requests", i)+k, v)
		}
		as.nulls[r.ID] = m
		if e.Outcome != nil {
			o.OffsetS = ptr(e.Start.Sub(first).Seconds())
		}
		if e.Req.Phase == protocol.PhaseConcurrency && e.Outcome != nil {
			o.RoundOffsetS = ptr(e.Start.Sub(roundStart[e.Req.Round]).Seconds())
		}
		as.res.Requests = append(as.res.Requests, r)
		as.outs = append(as.outs, o)
		as.byID[o.RequestID] = o
	}
	as.res.Run.OptionalConcurrency = rec.Optional
}

// derived are the summaries, rounds, counts and quality: functions of the
// records.
func (as *assembler) derived() {
	as.derive = derive.FromRecords(&as.res, as.byID, as.maxShared, as.nulls)
	d := as.derive
	as.res.Summaries, as.res.ConcurrencyRounds, as.res.RequestCounts, as.res.Quality = d.Summaries, d.Rounds, d.Counts, d.Quality
	for k, v := range d.Missing {
		as.missing.Add(k, v)
	}
}

func (as *assembler) run() {
	rec := as.rec
	as.res.Run = contract.Run{
		ID: rec.ID, StartedAt: rec.StartedAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
		OptionalConcurrency: rec.Optional, Command: as.id.Command,
	}
	var durMissing map[string]string
	as.res.Run.RequiredDurationS, as.res.Run.OptionalDurationS, durMissing = derive.Durations(as.res.Requests, as.byID, rec.Optional)
	for k, v := range durMissing {
		as.missing.Add(k, v)
	}
}

// software is the hardware and software blocks.
func (as *assembler) software() {
	f, id := as.facts, as.id
	as.res.Hardware = f.Hardware
	as.res.Hardware.BackgroundWorkloads = id.Background
	if id.Background == nil {
		as.missing.Add(contract.PtrHardwareBackgroundWorkloads, contract.NotDeclared("pass --background (repeatable) to record other workloads on the machine, or an empty profile list for none"))
	}
	as.res.Software = contract.Software{
		OS: f.OS, Drivers: f.Drivers, Runtime: f.Runtime,
		StrataCommit: f.StrataCommit, RunnerCommit: f.RunnerCommit, BuildKind: f.BuildKind,
		BuildOptions: id.BuildOptions,
	}
	if id.BuildOptions == nil {
		as.missing.Add(contract.PtrSoftwareBuildOptions, contract.NotDeclared("the runner cannot read build options from a server; pass --build-options for a source build"))
	}
	if f.StrataCommit == nil {
		as.missing.Add(contract.PtrSoftwareStrataCommit, noCommit)
	}
	if f.RunnerCommit == nil {
		as.missing.Add(contract.PtrSoftwareRunnerCommit, noCommit)
	}
	var why string
	if as.res.Software.EngineVersion, why = engineVersion(as.srv); why != "" {
		as.missing.Add(contract.PtrSoftwareEngineVersion, why)
	}
}

func (as *assembler) model() {
	f, id := as.facts, as.id
	as.res.Model = contract.Model{Revision: id.ModelRevision, SourceRevision: id.SourceRevision,
		Quantization: id.Quantization, TokenizerRevision: id.TokenizerRevision, CustomPack: id.CustomPack,
		Files: f.ModelFiles}
	if name := modelName(as.srv); name != "" {
		as.res.Model.ID = ptr(name)
	} else {
		as.missing.Add(contract.PtrModelID, "the server named no model (/props model_alias and /v1/models are absent)")
	}
	for _, d := range []struct {
		v         *string
		ptr, flag string
	}{
		{id.ModelRevision, contract.PtrModelRevision, "--model-revision"},
		{id.SourceRevision, contract.PtrModelSourceRevision, "--source-revision"},
		{id.Quantization, contract.PtrModelQuantization, "--quantization"},
		{id.TokenizerRevision, contract.PtrModelTokenizerRevision, "--tokenizer-revision"},
		{id.CustomPack, contract.PtrModelCustomPack, "--custom-pack"},
	} {
		if d.v == nil {
			as.missing.Add(d.ptr, contract.NotDeclared("the runner never guesses it; pass "+d.flag))
		}
	}
	if f.ModelFiles == nil {
		as.missing.Add(contract.PtrModelFiles, "no model file was found to hash")
	}
	for i, mf := range f.ModelFiles {
		if mf.SHA256 == nil {
			as.missing.Add(contract.Pointer("model", "files", i, "sha256"), "the file could not be read")
		}
	}
}

// configuration is the configuration block, the template and the config
// artifact.
func (as *assembler) configuration() error {
	srv, id := as.srv, as.id
	as.res.Configuration = contract.Configuration{
		Track: id.Track, TrackNotes: id.TrackNotes, ContextTokens: srv.ContextSize, ServerCapacity: srv.Slots,
		Sampling: protocol.ProfileSampling(), ChatTemplateKwargs: as.templateKwargs(),
	}
	if id.TrackNotes == nil {
		as.missing.Add(contract.PtrConfigurationTrackNotes, contract.NotDeclared("pass --track-notes with the setup choices (default track) or the modifications (custom track)"))
	}
	if f := as.facts.StrataFile; srv.ContextSize == nil && f != nil {
		// Strata's /props says 503 while its engine is down; the config
		// file's --max-context is the context it was told to serve.
		if n := engineconfig.StrataContext(f.Args); n > 0 {
			as.res.Configuration.ContextTokens = &n
		}
	}
	noContext, noSlots := dialect.Of(srv.Dialect).Unrevealed()
	if as.res.Configuration.ContextTokens == nil {
		as.missing.Add(contract.PtrConfigurationContextTokens, orElse(noContext, "the server's /props has no default_generation_settings.n_ctx: "+orElse(srv.PropsErr, "field absent")))
	}
	if srv.Slots == nil {
		as.missing.Add(contract.PtrConfigurationServerCapacity, orElse(noSlots, "the server's /props has no total_slots: "+orElse(srv.PropsErr, "field absent")))
	}
	view := as.facts.Engine
	opts := engineconfig.Capture(engineconfig.Sources{Props: srv.Props, Slots: srv.SlotsRaw, Status: srv.StatusRaw,
		Args: view.Args, Env: view.Env, EnvUnreadable: view.EnvUnreadable, ArgsFrom: view.Where, Engine: dialect.Of(srv.Dialect).ConfigFrom(),
		StrataFile: as.facts.StrataFile, StrataFileErr: as.facts.StrataFileErr})
	for _, name := range contract.EngineOptionObjects() {
		v := opts.Objects[name]
		if v == nil {
			as.missing.Add("/configuration/"+name, opts.Missing[name])
		}
		*as.res.Configuration.EngineOption(name) = v
	}
	as.engineConfig(opts)
	as.a.EngineLog = as.facts.EngineLog
	if as.res.Configuration.Template = templateOf(srv); as.res.Configuration.Template != nil {
		as.a.Template = []byte(srv.Template)
	} else {
		as.missing.Add(contract.PtrConfigurationTemplate, orElse(srv.NoTemplate, "the server revealed no chat template ("+dialect.Of(srv.Dialect).TemplateRoute()+"): "+orElse(srv.PropsErr, "field absent")))
	}
	return as.configArtifact(opts.Source)
}

// templateKwargs is configuration.chat_template_kwargs: what the request
// bodies carried in chat_template_kwargs, as sent (the warm-up's: one
// dialect builds every body alike), or null with why none did.
func (as *assembler) templateKwargs() json.RawMessage {
	for _, o := range as.outs {
		if len(o.Request) == 0 || string(o.Request) == "null" {
			continue
		}
		if kw := contract.SentKwargs(o.Request); kw != nil {
			return kw
		}
		why := "no request carried chat_template_kwargs"
		d := dialect.Of(as.srv.Dialect)
		if own := d.NoKwargs(); own != "" {
			why += ": " + own
		}
		const setting = "chat_template_kwargs: "
		for _, n := range d.NotTaken() {
			if strings.HasPrefix(n, setting) {
				why += ": the engine cannot take it (" + strings.TrimPrefix(n, setting) + ")"
			}
		}
		as.missing.Add(contract.PtrConfigurationChatTemplateKwargs, why)
		return nil
	}
	as.missing.Add(contract.PtrConfigurationChatTemplateKwargs, "no request was sent, so none carried chat_template_kwargs")
	return nil
}

// engineConfig is extensions.engine_config: where each configuration
// value came from, what the engine reported of its configuration (its
// defaults among it) and what its process was given.
func (as *assembler) engineConfig(opts engineconfig.Options) {
	srv, view, cfg := as.srv, as.facts.Engine, as.res.Configuration
	ec := &contract.EngineConfig{Sources: map[string]string{},
		Reported: engineconfig.Reported(srv.Props, srv.SlotsRaw, srv.StatusRaw)}
	for name, src := range opts.Sources {
		ec.Sources[name] = src
	}
	props := func(field string) bool {
		var p struct {
			Default map[string]json.RawMessage `json:"default_generation_settings"`
			Slots   json.RawMessage            `json:"total_slots"`
		}
		if json.Unmarshal(srv.Props, &p) != nil {
			return false
		}
		if field == "total_slots" {
			return len(p.Slots) > 0
		}
		return len(p.Default["n_ctx"]) > 0
	}
	switch {
	case srv.ContextSize != nil && props("n_ctx"):
		ec.Sources["context_tokens"] = "reported by the engine: GET /props default_generation_settings.n_ctx"
	case srv.ContextSize != nil:
		ec.Sources["context_tokens"] = "reported by the engine: GET /v1/status context.native"
	case cfg.ContextTokens != nil:
		ec.Sources["context_tokens"] = "inferred by strata from --max-context in Strata's config file (the context the server was told to serve; the server reported none)"
	}
	switch {
	case srv.Slots != nil && props("total_slots"):
		ec.Sources["server_capacity"] = "reported by the engine: GET /props total_slots"
	case srv.Slots != nil:
		ec.Sources["server_capacity"] = "reported by the engine: GET /v1/status concurrency.serving"
	}
	if view.Args != nil {
		g := &contract.EngineGiven{From: view.Where, CommandLine: strings.Join(view.Args, " ")}
		if dialect.Of(srv.Dialect).ConfigFrom() == dialect.ConfigLlamaArgs {
			if view.EnvUnreadable != "" {
				g.EnvNote = "the environment could not be read: " + view.EnvUnreadable
			} else {
				g.LlamaArgEnv = engineconfig.LlamaEnv(view.Env)
				g.EnvNote = fmt.Sprintf("%d LLAMA_ARG_* variables", len(g.LlamaArgEnv))
			}
		}
		ec.Given = g
	} else {
		as.missing.Add(contract.PtrEngineConfigGiven, "the runner neither started the engine nor found it listening on a local port, so its command line and environment are not visible; run with --profile, or on the engine's machine")
	}
	as.engineCfg = ec
}

// configArtifact is config.json: what the runner learned of the engine's
// configuration, and everything the server served about itself under
// contract.ServerEvidence's names (the validator identifies the engine
// again from it, and looks for the simulator's traces in it).
func (as *assembler) configArtifact(source string) error {
	srv := as.srv
	cfg := map[string]any{"server_url": "loopback", "slots": json.RawMessage(orNull(srv.SlotsRaw)), "configuration_source": source}
	for k, v := range as.facts.EngineConfig {
		cfg[k] = v
	}
	evFields, err := json.Marshal(srv.Evidence())
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(evFields, &fields); err != nil {
		return err
	}
	for k, v := range fields {
		cfg[k] = v
	}
	if as.a.Config, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		return err
	}
	as.a.Config = append(as.a.Config, '\n')
	return nil
}

// extensions are the blocks gathered before the run (provenance, the
// engine, the preflight, a recovery), then the run's own. They come before
// the status: the reasons read them (the simulator's traces, the model's
// metadata), as the validator reads the saved ones.
func (as *assembler) extensions() {
	srv := as.srv
	d := dialect.Of(srv.Dialect)
	// The reasoning budget: the spec's "no budget", said in the engine's
	// words, and what the runner could see of a server-level one.
	as.budget = d.CheckBudget(as.facts.Engine)
	ext := as.facts.Extensions
	ext.Fixtures = &contract.FixturesInfo{Bundle: as.facts.Protocol.BundleName, MaxSharedPrefixTokens: as.maxShared}
	ext.EngineConfig = as.engineCfg
	ext.Engine = as.engineLog(ext.Engine)
	ext.Limitations = limitations(as.rec, as.budget, ext.Engine, as.missing)
	ext.EngineDialect = &contract.EngineDialect{Dialect: srv.Dialect, ReasoningBudget: d.ReasoningBudget(), BudgetCheck: as.budget,
		SettingNames: nonNilMap(d.SettingNames())}
	if ext.EngineDialect.ReasoningBudget.Field == nil {
		as.missing.Add(contract.PtrEngineDialectBudgetField, contract.NotApplicable("strata sends this engine no reasoning-budget field (reasoning_budget.meaning says why)"))
		as.missing.Add(contract.PtrEngineDialectBudgetValue, contract.NotApplicable("no reasoning-budget field is sent, so no value"))
	}
	ext.Thinking = thinkingEvidence(as.rec)
	ext.CacheReuse = derive.ReuseList(as.derive.Reuse)
	ext.SettingsCheck = settingsSummary(as.outs)
	ext.Aborted = as.rec.Aborted
	ext.Energy = as.energy()
	as.res.Extensions = ext
	if mc, ok := derive.ModelOf(&as.res); ok {
		as.res.Extensions.ModelCheck = &mc
	}
}

// energy is the energy block from the run's power trace, and the samples
// artifact (nil: the run was not sampled, and the block is absent).
func (as *assembler) energy() *contract.Energy {
	tr := as.rec.Power
	if tr == nil {
		return nil
	}
	head := derive.EnergyNotMeasured(tr.NotMeasured)
	head.GPUs = append(head.GPUs, tr.GPUs...)
	var readings []power.Reading
	if tr.NotMeasured == "" {
		origin := as.first
		if origin.IsZero() {
			origin = as.rec.Origin
		}
		readings = power.Readings(*tr, origin)
		head.Source, head.IntervalS, head.Stopped, head.SampleCount = ptr(tr.Source), ptr(tr.Interval.Seconds()), tr.Stopped, len(readings)
		head.Dropped = tr.Dropped
		if len(readings) > 0 {
			head.Samples = contract.PowerFile
			as.a.Power = power.FormatCSV(readings)
		}
	}
	e, missing := derive.Energy(head, readings, &as.res, as.byID, as.derive.Reuse)
	for k, v := range missing {
		as.missing.Add(k, v)
	}
	return &e
}

// status is the run's status, with the spec's precedence, from the one
// list of reasons: the server's place (only the runner saw its URL), what
// the records show, and an interruption.
func (as *assembler) status() {
	var reasons []contract.StatusReason
	if r := derive.Remote(as.rec.BaseURL); r != nil {
		reasons = append(reasons, *r)
	}
	reasons = append(reasons, derive.Reasons(derive.Evidence{Results: &as.res, Outputs: as.byID, MaxShared: as.maxShared, Budget: as.budget.Nonconforming,
		NotTaken: dialect.Of(as.srv.Dialect).NotTakenIn(as.srv.Evidence()), Server: as.srv.Evidence(), EngineLog: as.keptLog})...)
	if as.rec.Interrupted {
		reasons = append(reasons, derive.Interruption(as.rec.Interruption))
	}
	as.res.Run.Status = measure.Status(reasons)
	as.res.Extensions.StatusReasons = derive.Split(reasons)
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func nonEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func modelName(s record.Server) string {
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(s.Models, &m) == nil && len(m.Data) > 0 && m.Data[0].ID != "" {
		return modelfiles.FileName(m.Data[0].ID)
	}
	if s.ModelAlias != "" {
		return modelfiles.FileName(s.ModelAlias)
	}
	return ""
}

// RequestRecord maps one executed request to its record, its outputs line,
// and the reasons of its nulls (pointers relative to the record, as
// measure.Accounting.Missing's).
func RequestRecord(e *record.Request, d dialect.Dialect) (contract.Request, contract.Output, map[string]string) {
	return recordOf(e, d, nil)
}

// recordOf is RequestRecord with the engine log's split of the prompt
// where the dialect's answers give none (nil: none known yet).
func recordOf(e *record.Request, d dialect.Dialect, logSplit *measure.LogSplit) (contract.Request, contract.Output, map[string]string) {
	req := e.Req
	rr := requestRecord{
		r: contract.Request{
			ID: req.ID, Phase: string(req.Phase), CaseID: req.CaseID, Repetition: req.Repetition,
			Seed: req.Seed, MaxOutputTokens: req.Cap, Concurrency: req.Concurrency,
		},
		o:    contract.Output{RequestID: req.ID, Events: json.RawMessage("[]")},
		miss: map[string]string{},
	}
	if req.Phase == protocol.PhaseConcurrency {
		rr.r.Round = ptr(req.Round)
	} else {
		rr.miss[contract.Pointer("round")] = contract.NotApplicable("only concurrency requests belong to a round")
	}
	if e.Outcome == nil {
		rr.skipped(e)
	} else {
		rr.dispatched(e)
	}
	rr.o.Status = rr.r.Status
	if rr.r.Error != nil {
		rr.o.Error = rr.r.Error
	}
	rr.ev.Timers, rr.ev.NoTimers, rr.ev.Cap = d.Timers(), d.NoTimers(), req.Cap
	if e.Fixture != nil {
		rr.ev.FrozenInput = e.Fixture.InputTokens
	}
	rr.ev.Split = logSplit.Of(rr.ev.Timings)
	acc := measure.Account(rr.ev)
	r := &rr.r
	r.Tokens, r.Timings, r.Metrics, r.Sources, r.TokenAccountingNote = acc.Tokens, acc.Timings, acc.Metrics, acc.Sources, acc.Note
	for k, v := range acc.Missing {
		rr.miss[k] = v
	}
	// Verdicts for sanity cases.
	if req.Phase == protocol.PhaseSanity && e.Fixture != nil && e.Fixture.Expected != nil {
		v := derive.Evaluate(e.Fixture.Expected, r, rr.o)
		r.Evaluation = &contract.Evaluation{Category: string(v.Category), Passed: v.Passed, Reason: v.Reason}
	} else {
		rr.miss[contract.Pointer("evaluation")] = contract.NotApplicable("only sanity requests are evaluated")
	}
	return rr.r, rr.o, rr.miss
}

// RequestReasons are the reasons a finished request makes the run
// nonconforming, from its record as RequestRecord maps it and by the rule
// the result's status applies to every request (derive.RequestReasons):
// the live line says them as each request ends.
func RequestReasons(e *record.Request, d dialect.Dialect, maxShared map[string]int) []contract.StatusReason {
	q, o, _ := RequestRecord(e, d)
	return derive.RequestReasons(q, o, maxShared)
}

// requestRecord is one request's record while RequestRecord builds it.
type requestRecord struct {
	r    contract.Request
	o    contract.Output
	ev   measure.Evidence
	miss map[string]string
}

// skipped records a request that was never dispatched.
func (rr *requestRecord) skipped(e *record.Request) {
	why := "the request was skipped: " + e.SkipReason
	rr.r.Status = contract.Skipped
	rr.r.Error = &contract.ErrorInfo{Kind: "skipped", Message: e.SkipReason}
	rr.ev.NoDataReason, rr.ev.Status, rr.ev.FirstAnswerReason = why, contract.Skipped, why
	rr.o.SkipReason = ptr(e.SkipReason)
	rr.o.Request = json.RawMessage("null")
	rr.o.Usage, rr.o.Timings = json.RawMessage("null"), json.RawMessage("null")
	rr.o.ToolCalls = []contract.OutputCall{}
	rr.miss[contract.Pointer("finish_reason")] = why
	rr.miss[contract.Pointer("first_delta_kind")] = why
}

// dispatched records a request that was sent: its status, what the
// measurements read, and the evidence outputs.jsonl keeps.
func (rr *requestRecord) dispatched(e *record.Request) {
	out, r := e.Outcome, &rr.r
	errKind := ""
	if out.Error != nil {
		errKind = out.Error.Kind
		r.Error = &contract.ErrorInfo{Kind: out.Error.Kind, Message: out.Error.Message}
		rr.ev.NoDataReason = "the request failed (" + out.Error.Kind + ") before the engine reported it"
	}
	r.Status = derive.RequestStatus(true, errKind, out.FinishReason)
	rr.ev.Status = r.Status
	r.FinishReason = out.FinishReason
	if r.FinishReason == nil {
		rr.miss[contract.Pointer("finish_reason")] = "no finish reason arrived: " + errorText(out)
	}
	if r.Error == nil {
		rr.miss[contract.Pointer("error")] = contract.NotApplicable("the request " + r.Status + " normally")
	}
	if out.FirstDeltaKind != "" {
		r.FirstDeltaKind = ptr(out.FirstDeltaKind)
	} else {
		rr.miss[contract.Pointer("first_delta_kind")] = "no nonempty reasoning, answer or tool-call delta arrived"
	}
	ev := &rr.ev
	ev.Usage, ev.Timings = out.Usage, out.Timings
	ev.TTFT, ev.FirstAnswer, ev.Total = out.TTFT, out.FirstAnswer, ptr(out.Total)
	if e.Lost {
		ev.Total, ev.TotalReason = nil, "the runner stopped while the request was in flight: its end was not recorded"
	}
	switch {
	case out.FirstAnswer != nil:
	case r.Status == contract.Truncated && out.TTFT != nil:
		ev.FirstAnswerReason = truncatedReasoning(out.Usage, e.Req.Cap)
	case r.Status == contract.Failed:
		ev.FirstAnswerReason = "no answer text or tool call arrived before the request failed"
	}
	rr.evidence(e)
}

// evidence fills the output line of a dispatched request.
func (rr *requestRecord) evidence(e *record.Request) {
	out, o := e.Outcome, &rr.o
	o.Request = json.RawMessage(e.Body)
	o.Answer, o.Reasoning = ptr(out.Answer), ptr(out.Reasoning)
	o.FinishReason = out.FinishReason
	if out.HTTPStatus != 0 {
		o.HTTPStatus = ptr(out.HTTPStatus)
	}
	o.Usage, o.Timings = orNull(out.Usage), orNull(out.Timings)
	if out.ErrorBody != "" {
		o.ErrorBody = ptr(out.ErrorBody)
	}
	o.Malformed = out.Malformed
	o.DispatchedAt = ptr(e.DispatchedAt.Format("2006-01-02T15:04:05.000000Z"))
	o.FirstDeltaKind = rr.r.FirstDeltaKind
	o.Events, _ = json.Marshal(out.Events)
	o.ToolCalls = []contract.OutputCall{}
	for _, tc := range out.ToolCalls {
		o.ToolCalls = append(o.ToolCalls, contract.OutputCall(tc))
	}
	if e.Settings != nil {
		chk := *e.Settings
		chk.Mismatches = derive.Mismatches(e.Req, chk.SeenFor(e.Req.ID))
		o.SettingsCheck = &chk
	}
}

// truncatedReasoning is the first-answer reason of a request that stopped
// with finish_reason length while still reasoning.
func truncatedReasoning(usage json.RawMessage, limit int) string {
	var u struct {
		CompletionTokens *int64 `json:"completion_tokens"`
	}
	_ = json.Unmarshal(usage, &u)
	return score.TruncationCause(u.CompletionTokens, limit) + " while still reasoning: no answer text or tool call arrived"
}

func errorText(o *record.Outcome) string {
	if o.Error != nil {
		return o.Error.Kind + ": " + o.Error.Message
	}
	return "the stream ended without one"
}

func settingsSummary(outs []contract.Output) *contract.SettingsSummary {
	checked, revealed := 0, 0
	var mismatches []string
	reason := ""
	for _, o := range outs {
		if o.SettingsCheck == nil {
			continue
		}
		checked++
		if o.SettingsCheck.Revealed {
			revealed++
		} else if reason == "" {
			reason = o.SettingsCheck.Reason
		}
		mismatches = append(mismatches, o.SettingsCheck.Mismatches...)
	}
	out := &contract.SettingsSummary{Source: "GET /slots after each request (the last task's params)", Checked: checked,
		Revealed: revealed, Mismatches: nonEmpty(mismatches)}
	if revealed == 0 {
		out.NotRevealedReason = orElse(reason, "no request was checked")
	}
	return out
}

// engineLog fills extensions.engine's log: the artifact, or null with why
// there is none; and the reason an already-serving engine's count of
// answered requests is null. It returns a copy: the facts' block is not
// changed.
func (as *assembler) engineLog(e *contract.Engine) *contract.Engine {
	if e == nil {
		return nil
	}
	c := *e
	switch {
	case as.facts.EngineLog != nil:
		c.Log = ptr(contract.EngineLog)
	case c.StartedByRunner:
		as.missing.Add(contract.PtrEngineLog, "the runner started the engine, but its output was not kept")
	case as.facts.Extensions.Recovered != nil:
		as.missing.Add(contract.PtrEngineLog, "the run was recovered from its journal: "+noEngineLog(&c)+" (strata reads that file after the run, which a killed run never reached)")
	default:
		as.missing.Add(contract.PtrEngineLog, noEngineLog(&c))
	}
	if sb := c.ServedBeforeRun; sb != nil && sb.Answered == nil {
		as.missing.Add(contract.PtrEngineServedAnswered, orElse(sb.Reason, "the engine does not say how many requests it had answered"))
	}
	return &c
}

// noEngineLog is why a run against an engine strata did not start has no
// engine log: it was already serving (at --url, or at the URL of a profile
// whose engine strata would otherwise start), so its output went where
// whoever started it sent it.
func noEngineLog(e *contract.Engine) string {
	who := "the engine at --url"
	if e.Profile != "" {
		who = "profile " + e.Profile + "'s engine"
	}
	return who + " was already serving when the run began, not started by strata, so strata could not keep its output: there is no engine log; name the log file the server writes (llama-server --log-file FILE) with --engine-log FILE"
}

// limitations are the report's standing caveats for this run: the
// protocol's own, then what a run against an engine the runner did not
// start could not see, then the identified engine's (what only some
// engines have, such as an expert cache or switches that end a reply, is
// named there), then the budget check's.
func limitations(rec *record.Run, budget contract.BudgetCheck, e *contract.Engine, missing contract.Missing) []string {
	out := []string{
		"These are not zero-cache or cold-model measurements: the warm-up runs first, and whatever the engine caches stays as it is. Shared template-prefix reuse is allowed and reported per request.",
	}
	out = append(out, unseen(e, missing)...)
	out = append(out, dialect.Of(rec.Server.Dialect).Limitations()...)
	out = append(out, "Reasoning budget: "+budget.State+": "+budget.Detail+".")
	return out
}

// unseen says plainly what a run against an engine the runner did not
// start could not see: its log, its past work, its configuration.
func unseen(e *contract.Engine, missing contract.Missing) []string {
	if e == nil || e.StartedByRunner {
		return nil
	}
	var out []string
	if why, ok := missing[contract.PtrEngineLog]; ok {
		out = append(out, "No engine log: "+why+".")
	}
	if sb := e.ServedBeforeRun; sb != nil {
		out = append(out, "Requests the server had answered before this run: "+derive.Served(*sb)+".")
	}
	var hidden []string
	for _, name := range contract.EngineOptionObjects() {
		if _, ok := missing["/configuration/"+name]; ok {
			hidden = append(hidden, name)
		}
	}
	if why, ok := missing[contract.PtrEngineConfigGiven]; ok {
		line := "Configuration not visible: " + why
		if len(hidden) > 0 {
			line += "; so " + strings.Join(hidden, ", ") + " are null"
		}
		out = append(out, line+".")
	}
	return out
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// thinkingEvidence says, per dispatched request, whether reasoning arrived:
// the evidence that thinking ran (the profile thinks, so a request without
// any reasoning is worth a look).
func thinkingEvidence(rec *record.Run) *contract.Thinking {
	with, dispatched := 0, 0
	without := []string{}
	for _, e := range rec.Requests {
		if e.Outcome == nil {
			continue
		}
		dispatched++
		switch {
		case e.Outcome.Reasoning != "":
			with++
		case e.Outcome.FirstDeltaKind != "":
			without = append(without, e.Req.ID)
		default:
			// It streamed nothing (failed, cancelled or stopped before its
			// first delta): it shows nothing of the model's thinking.
		}
	}
	return &contract.Thinking{EnableThinking: protocol.ProfileTemplateKwargs().EnableThinking, Dispatched: dispatched,
		WithReasoning: with, WithoutReasoning: without,
		Source: "nonempty reasoning deltas (outputs.jsonl reasoning) per request; one that streamed nothing (failed or stopped before its first delta) is neither"}
}

// engineVersion is the result's software.engine_version, or why it is null.
func engineVersion(srv record.Server) (*string, string) {
	switch {
	case srv.Dialect.Simulated && dialect.IsSimulatorVersion(srv.BuildInfo):
		// The engine's version source already names the simulator (as
		// Strata's server it says "Strata strata-simulator-…").
		return ptr(srv.BuildInfo), ""
	case srv.Dialect.Simulated:
		// The simulator's own name, so no reader takes it for the engine it
		// speaks as.
		return ptr(orElse(srv.SimulatorVersion, "strata-simulator") + " (speaking as " + dialect.Of(srv.Dialect).Name() + ")"), ""
	case srv.BuildInfo != "":
		return ptr(srv.BuildInfo), ""
	}
	why := "neither /props build_info nor /v1/status names the engine's version: " + orElse(srv.PropsErr, "fields absent")
	if dialect.Of(srv.Dialect).OwnVersion() {
		why = fmt.Sprintf("%s names no version on any route strata reads (identified by %s)", srv.Dialect.Engine, srv.Dialect.IdentifiedBy)
	}
	return nil, why
}

// templateOf is the result's configuration.template: the chat template the
// server revealed, or nil.
func templateOf(srv record.Server) *contract.PathSHA {
	if srv.Template == "" {
		return nil
	}
	return &contract.PathSHA{Path: contract.TemplateFile, SHA256: sha256Hex([]byte(srv.Template))}
}

// Preview is the part of a result known before the first request, built
// by the same rules as Assemble: what derive.BeforeRun reads to say, before
// the warm-up, why the run will be nonconforming.
func Preview(srv record.Server, facts record.Facts) *contract.Results {
	res := &contract.Results{}
	res.Protocol.ID, res.Protocol.Profile = facts.Protocol.ID, facts.Protocol.Profile
	res.Software.EngineVersion, _ = engineVersion(srv)
	res.Software.StrataCommit = facts.StrataCommit
	res.Model.Files = facts.ModelFiles
	res.Configuration.Template = templateOf(srv)
	res.Extensions = facts.Extensions
	return res
}
