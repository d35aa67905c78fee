// Package validate checks a saved result folder strictly, as `strata bench
// report` and the approved manifest do: the schema and the contract's types,
// the records against the protocol and its fixtures, and everything that is
// a function of the records derived again (internal/derive) and compared.
// It reads the folder and the bundle only: it imports neither the runner
// nor the client.
package validate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
	"github.com/strata-bench/strata/schema"
)

// Violation is one broken rule, at a JSON Pointer of results.json (or a
// file name for other files of the folder).
type Violation struct {
	Pointer string
	Message string
}

// String is the violation on one line, with anything the folder's text
// could do to a terminal escaped.
func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return escape.Line(p + ": " + v.Message)
}

// Validation is the outcome of checking a result folder.
type Validation struct {
	Results    *contract.Results
	Violations []Violation
}

type checker struct {
	fsys fs.FS
	raw  []byte
	// logSplit pairs the records with the engine log's timer lines, in
	// record order, as the assembly did (logRead: it was built).
	logSplit *measure.LogSplit
	logRead  bool
	// doc is results.json decoded once, generically (numbers as
	// json.Number), for the format, the schema and the nulls.
	doc  any
	res  *contract.Results
	outs map[string]contract.Output
	bad  []Violation
	fx   *fixtures.Bundle
	// noDialect is set once the missing dialect has been reported.
	noDialect bool
	// derived is what the records give (derive.Run), made once.
	derived *derive.Derived
	// server is what the server served about itself (config.json).
	server contract.ServerEvidence
	// outOrder is the request ID of each line of outputs.jsonl, in order.
	outOrder []string
}

// maxShared is each fixture's max_shared_prefix_tokens by request ID.
func (c *checker) maxShared() map[string]int {
	if c.fx == nil {
		return map[string]int{}
	}
	return c.fx.MaxShared()
}

// derive is what the records give, derived once.
func (c *checker) derive() *derive.Derived {
	if c.derived == nil {
		d := derive.FromRecords(c.res, c.outs, c.maxShared(), nil)
		c.derived = &d
	}
	return c.derived
}

func (c *checker) add(ptr, format string, a ...any) {
	c.bad = append(c.bad, Violation{ptr, fmt.Sprintf(format, a...)})
}

// Dir checks a result folder strictly: the format and schema version,
// strict JSON (no duplicate names, valid UTF-8, bounded sizes, no
// symlinks), the JSON Schema, exact types and no unknown keys, every null
// covered by missing, request records against the protocol, the request
// bodies against the fixtures and the profile, count identities, token
// accounting and metrics re-derived from the raw usage and timings,
// latencies against the client trace, timestamps, summaries and rounds
// rebuilt from the records, verdicts and their reasons re-scored from
// outputs.jsonl, artifact paths, hashes and unlisted files. bundle supplies
// the fixtures.
func Dir(dir string, bundle *fixtures.Bundle) (*Validation, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("result folder %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("result folder %s: not a folder", dir)
	}
	if err := ResultFolder(dir, dir); err != nil {
		return nil, err
	}
	return FS(os.DirFS(dir), bundle), nil
}

// FS is Dir over a folder's files in fsys (its root is the
// folder).
func FS(fsys fs.FS, bundle *fixtures.Bundle) *Validation {
	c := &checker{fsys: fsys, fx: bundle}
	var err error
	c.raw, err = strictjson.ReadFile(fsys, contract.ResultsFile, contract.MaxResultsBytes)
	if err != nil {
		c.add(contract.ResultsFile, "cannot be read: %v", err)
		return &Validation{Violations: c.bad}
	}
	if err := strictjson.Check(c.raw); err != nil {
		c.add(contract.ResultsFile, "is not strict JSON: %v", err)
		return &Validation{Violations: c.bad}
	}
	dec := json.NewDecoder(bytes.NewReader(c.raw))
	dec.UseNumber()
	if err := dec.Decode(&c.doc); err != nil {
		c.add(contract.ResultsFile, "does not decode: %v", err)
		return &Validation{Violations: c.bad}
	}
	if !c.checkFormat() || !c.checkArtifactPaths() || !c.checkSchema() || !c.decode() {
		return &Validation{Violations: c.bad}
	}
	c.checkNulls()
	c.checkEmptyStrings()
	c.readOutputs()
	c.readServer()
	c.checkIdentity()
	c.checkKwargs()
	c.checkCorpus()
	c.checkEngineDialect()
	c.checkRequests()
	c.checkDurations()
	c.checkCounts()
	c.checkSummaries()
	c.checkRounds()
	c.checkEnergy()
	c.checkQuality()
	c.checkArtifacts()
	c.checkCharts()
	c.checkEngineLog()
	c.checkStatus()
	sort.SliceStable(c.bad, func(i, j int) bool { return c.bad[i].Pointer < c.bad[j].Pointer })
	return &Validation{Results: c.res, Violations: c.bad}
}

// checkFormat rejects unknown formats and versions before anything else is
// interpreted: a consumer must never combine them silently.
func (c *checker) checkFormat() bool {
	top, isObject := c.doc.(map[string]any)
	if !isObject {
		c.add("", "results.json is not a JSON object")
		return false
	}
	var head struct {
		Format        any
		SchemaVersion any
		Protocol      struct{ ID any }
	}
	head.Format, head.SchemaVersion = top["format"], top["schema_version"]
	if p, ok := top["protocol"].(map[string]any); ok {
		head.Protocol.ID = p["id"]
	}
	ok := true
	if head.Format != protocol.ResultFormat {
		c.add("/format", "unknown format %v; expected %q (refusing to interpret it)", head.Format, protocol.ResultFormat)
		ok = false
	}
	if n, isNum := head.SchemaVersion.(json.Number); !isNum || n.String() != strconv.Itoa(protocol.SchemaVersion) {
		c.add("/schema_version", "unknown schema version %v; expected %d (refusing to interpret it)", head.SchemaVersion, protocol.SchemaVersion)
		ok = false
	}
	if def := c.fx.Protocol; ok && head.Protocol.ID != def.ID {
		if _, known := protocol.Known().Lookup(fmt.Sprint(head.Protocol.ID)); known {
			c.add(contract.PtrProtocolID, "is %v, but the folder is checked with the bundle of %s (%s)", head.Protocol.ID, def.ID, c.fx.Where)
		} else {
			c.add(contract.PtrProtocolID, "unknown protocol ID %v; this strata implements %s", head.Protocol.ID, strings.Join(protocol.Known().IDs(), " and "))
		}
		ok = false
	}
	return ok
}

// resultsSchema is the compiled JSON Schema, compiled once: it is
// immutable, and compiling it cost more than validating a folder.
var resultsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	comp := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.ResultsV1))
	if err != nil {
		return nil, fmt.Errorf("the schema does not parse: %w", err)
	}
	if err := comp.AddResource(schema.ResultsV1Name, doc); err != nil {
		return nil, err
	}
	return comp.Compile(schema.ResultsV1Name)
})

func (c *checker) checkSchema() bool {
	sch, err := resultsSchema()
	if err != nil {
		c.add("", "internal: %v", err)
		return false
	}
	err = sch.Validate(c.doc)
	var ve *jsonschema.ValidationError
	printer := message.NewPrinter(language.English)
	if errors.As(err, &ve) {
		for _, leaf := range leaves(ve) {
			c.add("/"+strings.Join(leaf.InstanceLocation, "/"), "%s", leaf.ErrorKind.LocalizedString(printer))
		}
		return false
	}
	return err == nil
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// decode reads results.json into the contract types, rejecting unknown keys
// and integers written as floats (3.0), which JSON Schema accepts.
func (c *checker) decode() bool {
	var r contract.Results
	dec := json.NewDecoder(bytes.NewReader(c.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		ptr := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			ptr = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		c.add(ptr, "%v", err)
		return false
	}
	c.res = &r
	return true
}

// checkNulls: every null has a reason in missing, and every entry of missing
// points at a null.
func (c *checker) checkNulls() {
	doc := c.doc
	nulls := map[string]bool{}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case nil:
			nulls[ptr] = true
		case map[string]any:
			for k, child := range x {
				if ptr == "" && k == "missing" {
					continue
				}
				walk(ptr+contract.Pointer(k), child)
			}
		case []any:
			for i, child := range x {
				walk(ptr+contract.Pointer(i), child)
			}
		}
	}
	walk("", doc)
	for p := range nulls {
		if _, ok := c.res.Missing[p]; !ok {
			c.add(p, "null without a reason in missing")
		}
	}
	for _, p := range c.res.Missing.SortedKeys() {
		if !nulls[p] {
			c.add("/missing"+contract.Pointer(p), "explains %s, which is not null", p)
		}
	}
}

// checkEmptyStrings: an unavailable value is null with a reason, "not
// zero, empty strings, or "N/A"", so no string of results.json is empty
// but a value another party gave as one, kept as given (contract.Verbatim:
// an engine's own answer, a model file's metadata).
func (c *checker) checkEmptyStrings() {
	for _, p := range contract.EmptyStrings(c.doc) {
		c.add(p, "is an empty string; a value that is unknown or does not apply is null, with its reason in missing")
	}
}

func (c *checker) readOutputs() {
	c.outs = map[string]contract.Output{}
	data, err := strictjson.ReadFile(c.fsys, contract.OutputsFile, contract.MaxOutputsBytes)
	if err != nil {
		c.add(contract.OutputsFile, "cannot be read: %v", err)
		return
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		c.add(contract.OutputsFile, "does not end with a line feed; strata ends each line with one")
	}
	for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		where := fmt.Sprintf("%s:%d", contract.OutputsFile, n+1)
		if err := strictjson.Check(line); err != nil {
			c.add(where, "is not strict JSON: %v", err)
			continue
		}
		// json v2, its names matched exactly: the line is strict JSON
		// already, and encoding/json's decoder scanned it twice more (a
		// quarter of a validation's time).
		var o contract.Output
		if err := jsonv2.Unmarshal(line, &o, jsonv2.RejectUnknownMembers(true)); err != nil {
			c.add(where, "not a valid outputs line: %v", err)
			continue
		}
		if _, dup := c.outs[o.RequestID]; dup {
			c.add(where, "a second line for %s", o.RequestID)
		}
		if canon, err := o.Line(); err != nil || !bytes.Equal(canon, line) {
			c.add(where, "is not the line strata writes for %s (its one form: the record's JSON without spaces, in the contract's key order, shortest escapes, LF line ends)", o.RequestID)
		}
		c.outs[o.RequestID] = o
		c.outOrder = append(c.outOrder, o.RequestID)
	}
}

const relTol = 1e-9

func near(a, b float64) bool {
	return math.Abs(a-b) <= relTol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func eqF(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return near(*a, *b)
}

func (c *checker) checkRequests() {
	r := c.res
	sched := protocol.Schedule(r.Run.OptionalConcurrency)
	d, known := c.recordedDialect()
	var started, warmup *time.Time
	if t, err := time.Parse(timeLayout, r.Run.StartedAt); err == nil {
		started = &t
	}
	if o, ok := c.outs[protocol.WarmupID()]; ok && o.DispatchedAt != nil {
		if t, err := time.Parse(timeLayout, *o.DispatchedAt); err == nil {
			warmup = &t
		}
	}
	if len(r.Requests) != len(sched) {
		c.add("/requests", "%d records; the schedule has %d (optional_concurrency %v)", len(r.Requests), len(sched), r.Run.OptionalConcurrency)
	}
	for i := range r.Requests {
		q := &r.Requests[i]
		p := func(s ...any) string { return contract.Pointer(append([]any{"requests", i}, s...)...) }
		if i < len(sched) {
			c.checkScheduled(p, q, sched[i], i)
		}
		c.checkOutcome(p, q)
		c.checkMeasures(p, q)
		if o, ok := c.outs[q.ID]; ok {
			if o.Status != q.Status {
				c.add(p("status"), "is %s but outputs.jsonl says %s", q.Status, o.Status)
			}
			c.checkOutputTiming(p, q, o)
			c.checkSettings(p, i, q, o)
			c.checkBody(p, q, o, d, known)
			c.checkAccounting(p, q, o)
			c.checkDispatch(p, q, o, started, warmup)
			c.checkOffset(p, q, o)
		} else if c.outs != nil {
			c.add(p(), "outputs.jsonl has no line for %s", q.ID)
		}
	}
	if len(c.outs) > len(r.Requests) {
		c.add(contract.OutputsFile, "has %d lines for %d requests", len(c.outs), len(r.Requests))
	}
	for n, id := range c.outOrder {
		if n < len(r.Requests) && id != r.Requests[n].ID {
			c.add(fmt.Sprintf("%s:%d", contract.OutputsFile, n+1), "is the line of %s; strata writes the line of %s here (the lines follow the requests)", id, r.Requests[n].ID)
			break
		}
	}
}

// checkScheduled: the record is the protocol's request at its place.
func (c *checker) checkScheduled(p func(...any) string, q *contract.Request, s protocol.Request, i int) {
	round := (*int)(nil)
	if s.Phase == protocol.PhaseConcurrency {
		round = &s.Round
	}
	if q.ID != s.ID || q.Phase != string(s.Phase) || q.CaseID != s.CaseID || q.Repetition != s.Repetition ||
		q.Seed != s.Seed || q.MaxOutputTokens != s.Cap || q.Concurrency != s.Concurrency ||
		(q.Round == nil) != (round == nil) || (round != nil && *q.Round != *round) {
		c.add(p(), "record %s does not match the protocol's request %d (%s: phase %s, case %s, repetition %d, seed %d, cap %d, concurrency %d)",
			q.ID, i, s.ID, s.Phase, s.CaseID, s.Repetition, s.Seed, s.Cap, s.Concurrency)
	}
}

// checkOutcome: the status, finish reason, error and verdict agree.
func (c *checker) checkOutcome(p func(...any) string, q *contract.Request) {
	switch q.Status {
	case contract.Completed, contract.Truncated:
		if q.FinishReason == nil {
			c.add(p("finish_reason"), "a %s request has a finish reason", q.Status)
		} else if _, known := protocol.FinishStatus(*q.FinishReason); !known || derive.RequestStatus(true, "", q.FinishReason) != q.Status {
			c.add(p("finish_reason"), "is %q, which does not end a request %s (stop and tool_calls end it completed, length truncated)", *q.FinishReason, q.Status)
		}
	case contract.Skipped:
		if q.Tokens.InputTokens != nil || q.Timings.TotalS != nil || q.FinishReason != nil {
			c.add(p(), "a skipped request has no tokens, timings or finish reason")
		}
	}
	if (q.Status == contract.Completed || q.Status == contract.Truncated) != (q.Error == nil) {
		c.add(p("error"), "error is null exactly for completed and truncated requests")
	}
	isSanity := q.Phase == string(protocol.PhaseSanity)
	if isSanity != (q.Evaluation != nil) {
		c.add(p("evaluation"), "evaluation is set exactly for sanity requests")
	}
	if q.Evaluation != nil {
		cat, _ := protocol.SanityCategory(q.CaseID)
		if q.Evaluation.Category != string(cat) {
			c.add(p("evaluation", "category"), "%s is a %s case", q.CaseID, cat)
		}
		if q.Evaluation.Passed && q.Status != contract.Completed {
			c.add(p("evaluation", "passed"), "only a completed response passes")
		}
	}
}

// checkMeasures: the rates are functions of tokens and timings, a count
// has a source exactly when it is known, and the latencies are in order.
func (c *checker) checkMeasures(p func(...any) string, q *contract.Request) {
	wantPrompt, _ := measure.Rate(q.Tokens.ReadTokens, q.Timings.PromptS, "read_tokens", "prompt_s", "prompt time")
	wantDecode, _ := measure.Rate(q.Tokens.DecodeTokens, q.Timings.DecodeS, "decode_tokens", "decode_s", "decode time")
	if !eqF(q.Metrics.PromptTPS, wantPrompt) {
		c.add(p("metrics", "prompt_tps"), "is %s; read_tokens / prompt_s gives %s", show(q.Metrics.PromptTPS), show(wantPrompt))
	}
	if !eqF(q.Metrics.DecodeTPS, wantDecode) {
		c.add(p("metrics", "decode_tps"), "is %s; decode_tokens / decode_s gives %s", show(q.Metrics.DecodeTPS), show(wantDecode))
	}
	c.checkBounds(p, q)
	for _, pr := range []struct {
		name  string
		value bool
		src   *string
	}{
		{"input_tokens", q.Tokens.InputTokens != nil, q.Sources.InputTokens},
		{"cached_tokens", q.Tokens.CachedTokens != nil, q.Sources.CachedTokens},
		{"read_tokens", q.Tokens.ReadTokens != nil, q.Sources.ReadTokens},
		{"output_tokens", q.Tokens.OutputTokens != nil, q.Sources.OutputTokens},
		{"decode_tokens", q.Tokens.DecodeTokens != nil, q.Sources.DecodeTokens},
		{"client_timings", q.Timings.TotalS != nil, q.Sources.ClientTimings},
	} {
		if pr.value != (pr.src != nil) {
			c.add(p("sources", pr.name), "a count has a source exactly when it is known (claimed counts need traceable sources)")
		}
	}
	if (q.FirstDeltaKind == nil) != (q.Timings.TTFTS == nil) {
		c.add(p("first_delta_kind"), "is set exactly when ttft_s is")
	}
	if q.Timings.TTFTS != nil && q.Timings.TotalS != nil && *q.Timings.TTFTS > *q.Timings.TotalS+1e-9 {
		c.add(p("timings", "ttft_s"), "is after total_s")
	}
	if q.Timings.FirstAnswerS != nil && q.Timings.TTFTS != nil && *q.Timings.FirstAnswerS+1e-9 < *q.Timings.TTFTS {
		c.add(p("timings", "first_answer_s"), "is before ttft_s")
	}
}

// checkBounds: no engine number of the record is one no engine can give
// (measure.CountBound, measure.InputBound, measure.TimerBound), whatever
// outputs.jsonl says.
func (c *checker) checkBounds(p func(...any) string, q *contract.Request) {
	if n := q.Tokens.InputTokens; n != nil {
		if why := measure.InputBound(*n, c.frozenInput(q.ID), "input_tokens"); why != "" {
			c.add(p("tokens", "input_tokens"), "%s", why)
		}
	}
	for _, n := range []struct {
		field string
		v     *int64
	}{{"output_tokens", q.Tokens.OutputTokens}, {"decode_tokens", q.Tokens.DecodeTokens}} {
		if n.v != nil {
			if why := measure.CountBound(*n.v, q.MaxOutputTokens, n.field); why != "" {
				c.add(p("tokens", n.field), "%s", why)
			}
		}
	}
	for _, d := range []struct {
		field, timer string
		tokens       *int64
		seconds      *float64
	}{{"prompt_s", "prompt time", q.Tokens.ReadTokens, q.Timings.PromptS}, {"decode_s", "decode time", q.Tokens.DecodeTokens, q.Timings.DecodeS}} {
		if d.tokens != nil && d.seconds != nil {
			if why := measure.TimerBound(*d.tokens, *d.seconds, d.timer); why != "" {
				c.add(p("timings", d.field), "%s", why)
			}
		}
	}
}

// frozenInput is the frozen input_tokens of the bundle's fixture for a
// request (0: no bundle, or no such fixture).
func (c *checker) frozenInput(id string) int {
	if c.fx == nil {
		return 0
	}
	f, err := c.fx.Fixture(id)
	if err != nil {
		return 0
	}
	return f.InputTokens
}

// checkOutputTiming: the client trace in outputs.jsonl supports the record's
// latencies (dispatch at zero, the first qualifying delta, the end).
func (c *checker) checkOutputTiming(p func(...any) string, q *contract.Request, o contract.Output) {
	var ttft, first, end *float64
	err := eachEvent(o.Events, func(t float64, kind string) {
		switch kind {
		case "reasoning", "answer", "tool_call":
			if ttft == nil {
				ttft = &t
			}
			if kind != "reasoning" && first == nil {
				first = &t
			}
		case "end":
			end = &t
		}
	})
	if err != nil {
		c.add(p(), "outputs.jsonl events of %s are not [seconds, kind] pairs: %v", q.ID, err)
		return
	}
	const tol = 2e-6 // events are written to the microsecond
	check := func(name string, got, want *float64) {
		if (got == nil) != (want == nil) || got != nil && math.Abs(*got-*want) > tol {
			c.add(p("timings", name), "is %s; the client trace in outputs.jsonl gives %s", show(got), show(want))
		}
	}
	check("ttft_s", q.Timings.TTFTS, ttft)
	check("first_answer_s", q.Timings.FirstAnswerS, first)
	check("total_s", q.Timings.TotalS, end)
}

// eachEvent calls fn on each [seconds, kind] pair of a trace, read token by
// token (a run's traces are thousands of pairs; decoded into [][2]any they
// were a tenth of a validation's time). null is no events; anything but an
// array of exact pairs is an error.
func eachEvent(events []byte, fn func(t float64, kind string)) error {
	if len(events) == 0 {
		return errors.New("absent")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(events))
	if list, err := strictjson.OpenList(dec); !list {
		return err
	}
	for n := 0; dec.PeekKind() != ']'; n++ {
		t, kind, err := readEvent(dec)
		if err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		fn(t, kind)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return nil
}

// errNotPair is an event that is not a [seconds, kind] pair.
var errNotPair = errors.New("not [seconds, kind]")

// readEvent reads one [seconds, kind] pair (a token is read before the next
// is, as the decoder reuses its buffer).
func readEvent(dec *jsontext.Decoder) (t float64, kind string, err error) {
	notPair := errNotPair
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '[' {
		return 0, "", notPair
	}
	if tok, err = dec.ReadToken(); err != nil || tok.Kind() != '0' {
		return 0, "", notPair
	}
	if t, err = tok.Float(); err != nil {
		return 0, "", err
	}
	if tok, err = dec.ReadToken(); err != nil || tok.Kind() != '"' {
		return 0, "", notPair
	}
	kind = tok.String()
	if tok, err = dec.ReadToken(); err != nil || tok.Kind() != ']' {
		return 0, "", notPair
	}
	return t, kind, nil
}

func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', 10, 64)
}

func (c *checker) checkCounts() {
	r := c.res
	want := c.derive().Counts
	for _, ph := range protocol.Phases() {
		got, exp := r.RequestCounts.Phase(string(ph)), want.Phase(string(ph))
		if *got != *exp {
			c.add("/request_counts/"+string(ph), "is %+v; the request records give %+v", *got, *exp)
		}
		if got.Attempted != got.Completed+got.Truncated+got.Failed || got.Planned != got.Attempted+got.Skipped {
			c.add("/request_counts/"+string(ph), "breaks attempted = completed + truncated + failed or planned = attempted + skipped")
		}
	}
}

func (c *checker) checkSummaries() {
	r := c.res
	want := c.derive().Summaries
	if len(r.Summaries) != len(want) {
		c.add("/summaries", "%d summaries; the records give %d (five metrics per selected case)", len(r.Summaries), len(want))
		return
	}
	for i := range want {
		g, w := r.Summaries[i], want[i]
		p := contract.Pointer("summaries", i)
		if g.Phase != w.Phase || g.CaseID != w.CaseID || g.Metric != w.Metric || g.Concurrency != w.Concurrency || g.Unit != w.Unit {
			c.add(p, "is %s/%s/%s; expected %s/%s/%s in this place", g.Phase, g.CaseID, g.Metric, w.Phase, w.CaseID, w.Metric)
			continue
		}
		if g.N != w.N || !eqF(g.Median, w.Median) || !eqF(g.Min, w.Min) || !eqF(g.Max, w.Max) ||
			strings.Join(g.IncludedRequestIDs, ",") != strings.Join(w.IncludedRequestIDs, ",") {
			c.add(p, "does not match the request records: n=%d median=%s (rebuilt: n=%d median=%s, included %v)",
				g.N, show(g.Median), w.N, show(w.Median), w.IncludedRequestIDs)
		}
		var gx, wx []string
		for _, e := range g.Excluded {
			gx = append(gx, e.RequestID)
		}
		for _, e := range w.Excluded {
			wx = append(wx, e.RequestID)
		}
		if strings.Join(gx, ",") != strings.Join(wx, ",") {
			c.add(p+"/excluded", "lists %v; the records give %v", gx, wx)
		}
	}
}

func (c *checker) checkRounds() {
	r := c.res
	if !r.Run.OptionalConcurrency {
		if len(r.ConcurrencyRounds) != 0 {
			c.add("/concurrency_rounds", "must be empty when the optional stage was not selected")
		}
		return
	}
	want := c.derive().Rounds
	if len(want) != len(r.ConcurrencyRounds) {
		c.add("/concurrency_rounds", "%d rounds; the records give %d", len(r.ConcurrencyRounds), len(want))
		return
	}
	for i, w := range want {
		g := r.ConcurrencyRounds[i]
		eqI := (g.OutputTokens == nil) == (w.OutputTokens == nil) && (g.OutputTokens == nil || *g.OutputTokens == *w.OutputTokens)
		wallOK := (g.WallS == nil) == (w.WallS == nil) && (g.WallS == nil || math.Abs(*g.WallS-*w.WallS) <= 1e-5)
		rateOK := (g.AggregateTPS == nil) == (w.AggregateTPS == nil) && (g.AggregateTPS == nil || near(*g.AggregateTPS, *w.AggregateTPS))
		if g.Round != w.Round || !eqI || !wallOK || !rateOK || g.Failed != w.Failed || strings.Join(g.RequestIDs, ",") != strings.Join(w.RequestIDs, ",") {
			c.add(contract.Pointer("concurrency_rounds", i), "does not match the records and outputs.jsonl (rebuilt: wall %s s, output tokens %v, failed %d)",
				show(w.WallS), w.OutputTokens, w.Failed)
		}
	}
}

func (c *checker) checkQuality() {
	r := c.res
	want := c.derive().Quality
	if r.Quality != want {
		c.add("/quality", "is %+v; the verdicts give %+v", r.Quality, want)
	}
	if c.fx == nil {
		return
	}
	// Re-score every sanity case from the saved final answers and tool calls.
	for i, q := range r.Requests {
		if q.Evaluation == nil {
			continue
		}
		f, err := c.fx.Fixture(q.ID)
		o, ok := c.outs[q.ID]
		if err != nil || !ok || f.Expected == nil {
			continue
		}
		v := derive.Evaluate(f.Expected, &r.Requests[i], o)
		switch {
		case v.Passed != q.Evaluation.Passed:
			c.add(contract.Pointer("requests", i, "evaluation", "passed"),
				"%s is stored as passed=%v, but re-scoring the saved output gives passed=%v (%s)", q.CaseID, q.Evaluation.Passed, v.Passed, v.Reason)
		case v.Reason != q.Evaluation.Reason:
			c.add(contract.Pointer("requests", i, "evaluation", "reason"),
				"%s says %q, but re-scoring the saved output says %q", q.CaseID, q.Evaluation.Reason, v.Reason)
		}
	}
}

// checkArtifactPaths runs before the schema, so a path that escapes the
// folder is named in plain words: a relative, canonical file path inside
// the folder (no absolute path, drive, backslash, "." or ".." element, no
// control character), each listed once.
func (c *checker) checkArtifactPaths() bool {
	top, _ := c.doc.(map[string]any)
	arts, _ := top["artifacts"].([]any)
	ok := true
	seen := map[string]int{}
	for i, a := range arts {
		obj, _ := a.(map[string]any)
		p, isString := obj["path"].(string)
		if !isString {
			continue
		}
		ptr := contract.Pointer("artifacts", i, "path")
		if why := badArtifactPath(p); why != "" {
			c.add(ptr, "%q is not a file path inside the folder: %s", p, why)
			ok = false
			continue
		}
		if j, dup := seen[p]; dup {
			c.add(ptr, "%q is listed twice (also /artifacts/%d)", p, j)
			ok = false
		}
		seen[p] = i
	}
	return ok
}

func badArtifactPath(p string) string {
	switch {
	case p == "":
		return "it is empty"
	case strings.ContainsAny(p, "\\"):
		return "it has a backslash"
	case path.IsAbs(p) || len(p) > 1 && p[1] == ':':
		return "it is absolute"
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return "it has a control character"
	case !fs.ValidPath(p) || path.Clean(p) != p:
		return "it is not canonical (a \".\" or \"..\" element, a doubled or trailing slash)"
	}
	return ""
}

func (c *checker) checkArtifacts() {
	r := c.res
	kinds := map[string]int{}
	listed := map[string]bool{contract.ResultsFile: true, contract.ReadmeFile: true}
	for i, a := range r.Artifacts {
		p := contract.Pointer("artifacts", i)
		kinds[a.Kind]++
		listed[a.Path] = true
		limit := int64(contract.MaxArtifactBytes)
		switch {
		case a.Kind == contract.ArtifactOutputs:
			limit = contract.MaxOutputsBytes
		case a.Path == contract.PowerFile:
			limit = c.samplesLimit()
		}
		data, err := strictjson.ReadFile(c.fsys, a.Path, limit)
		if err != nil {
			c.add(p, "%s cannot be read: %v", a.Path, err)
			continue
		}
		if got := sha256Hex(data); got != a.SHA256 {
			c.add(p+"/sha256", "%s hashes to %s, not %s (changed after the run)", a.Path, got, a.SHA256)
		}
	}
	switch {
	case kinds[contract.ArtifactOutputs] == 0:
		c.add("/artifacts", "no outputs artifact (outputs.jsonl)")
	case kinds[contract.ArtifactOutputs] > 1:
		c.add("/artifacts", "%d outputs artifacts; the folder has one outputs.jsonl", kinds[contract.ArtifactOutputs])
	}
	if kinds[contract.ArtifactConfig] == 0 {
		c.add("/artifacts", "no config artifact (the sanitized configuration)")
	}
	outputsListed := false
	for _, a := range r.Artifacts {
		outputsListed = outputsListed || (a.Kind == contract.ArtifactOutputs && a.Path == contract.OutputsFile)
	}
	if kinds[contract.ArtifactOutputs] > 0 && !outputsListed {
		c.add("/artifacts", "the outputs artifact is not %s, the file the evidence is read from", contract.OutputsFile)
	}
	if t := r.Configuration.Template; t != nil {
		found := false
		for _, a := range r.Artifacts {
			found = found || (a.Path == t.Path && a.SHA256 == t.SHA256)
		}
		if !found {
			c.add(contract.PtrConfigurationTemplate, "points to %s, which is not an attached artifact with that hash", t.Path)
		}
	}
	if _, err := strictjson.ReadFile(c.fsys, contract.ReadmeFile, contract.MaxReadmeBytes); err != nil {
		c.add(contract.ReadmeFile, "the folder needs its plain report: %v", err)
	}
	// Every file of the folder is evidence someone listed: an unlisted one
	// (a stray copy, a page) is not part of the reviewed result.
	// What cannot be listed may hold such a file: it is a violation, and
	// the rest of the folder is still walked.
	_ = fs.WalkDir(c.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			c.add(name, "cannot be listed, so its files cannot be held to the artifacts: %v", err)
			return nil
		}
		if name == "." || d.IsDir() {
			return nil
		}
		if !listed[name] {
			c.add(name, "is in the folder, but no artifact lists it (list it as provenance with its SHA-256, or remove it)")
		}
		return nil
	})
}

// checkStatus derives the reasons again from what the folder shows: each
// must be among the recorded ones, and the status must be the one the
// recorded reasons give (reasons only the runner could see, such as a
// server off loopback or an interruption, are taken as recorded).
func (c *checker) checkStatus() {
	r := c.res
	ext := r.Extensions
	if want, ok := derive.ModelOf(r); ok && (ext.ModelCheck == nil || !reflect.DeepEqual(*ext.ModelCheck, want)) {
		c.add("/extensions/model_check", "is not what the GGUF metadata of extensions.gguf gives under %s's model rule (%s: %s)", r.Protocol.Profile, want.State, want.Reason)
	}
	recorded := map[string]bool{}
	var all []contract.StatusReason
	for i, why := range ext.StatusReasons.Nonconforming {
		recorded[why.Text] = true
		if why.Kind.Partial() {
			c.add(contract.Pointer("extensions", "status_reasons", "nonconforming", i, "kind"), "is %s, which makes a run partial, not nonconforming", why.Kind)
		}
		all = append(all, why)
	}
	for i, why := range ext.StatusReasons.Partial {
		recorded[why.Text] = true
		if !why.Kind.Partial() {
			c.add(contract.Pointer("extensions", "status_reasons", "partial", i, "kind"), "is %s, which makes a run nonconforming, not partial", why.Kind)
		}
		all = append(all, why)
	}
	d, _ := c.recordedDialect()
	c.checkOffChatPath(d)
	c.checkRecovered(contract.Texts(ext.StatusReasons.Partial))
	budget := ""
	if ext.EngineDialect != nil {
		budget = ext.EngineDialect.BudgetCheck.Nonconforming
	}
	_, log := c.engineLog()
	ev := derive.Evidence{Results: r, Outputs: c.outs, MaxShared: c.maxShared(), Budget: budget,
		NotTaken: d.NotTakenIn(c.server), Server: c.server, EngineLog: log}
	var unlisted []string
	derived := map[string]bool{}
	for _, why := range derive.Reasons(ev) {
		derived[why.Text] = true
		if !recorded[why.Text] {
			unlisted = append(unlisted, why.Text)
			all = append(all, why)
		}
	}
	if len(unlisted) > 0 {
		c.add("/extensions/status_reasons", "leaves out what the records show: %s", strings.Join(unlisted, "; "))
	}
	c.checkForeignRecorded(derived)
	if want := measure.Status(all); r.Run.Status != want {
		c.add(contract.PtrRunStatus, "is %s, but the reasons give %s", r.Run.Status, want)
	}
}

// checkForeignRecorded: a recorded reason that the engine answered
// requests strata did not send is the one its engine log gives
// (derive.Foreign); a run cannot be made nonconforming for requests its
// log does not show.
func (c *checker) checkForeignRecorded(derived map[string]bool) {
	for i, why := range c.res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.ForeignRequests && !derived[why.Text] {
			c.add(contract.Pointer("extensions", "status_reasons", "nonconforming", i), "says %q, but %s shows no request strata did not send, or not these, below the line where the run's part begins",
				why.Text, contract.EngineLog)
		}
	}
}

// checkOffChatPath: a preflight that says its route renders otherwise than
// the chat path (and so shows nothing of the workload) is the recorded
// engine's check of that kind, by its source, with a bundle template that
// route renders otherwise.
func (c *checker) checkOffChatPath(d dialect.Dialect) {
	pf := c.res.Extensions.Preflight
	if pf == nil || !pf.OffChatPath || c.fx == nil {
		return
	}
	src, _, err := prompts.Template(c.fx)
	if err != nil {
		return // the bundle's own checks say why
	}
	if fb := d.Preflight().Fallback; fb == nil || fb.Source != pf.Source || !fb.OffChatPathFor(string(src)) {
		c.add("/extensions/preflight/off_chat_path", "is true, but %s's preflight by %q renders the bundle's template as its chat path does", d.Name(), pf.Source)
	}
}

// checkSettings: the mismatches a settings check lists are what its seen
// values give.
func (c *checker) checkSettings(p func(...any) string, i int, q *contract.Request, o contract.Output) {
	if o.SettingsCheck == nil {
		return
	}
	sched := protocol.Schedule(c.res.Run.OptionalConcurrency)
	if i >= len(sched) || sched[i].ID != q.ID {
		return // the record is out of place, reported already
	}
	want := derive.Mismatches(sched[i], o.SettingsCheck.SeenFor(q.ID))
	if strings.Join(want, "\n") != strings.Join(o.SettingsCheck.Mismatches, "\n") {
		c.add(p(), "outputs.jsonl settings_check of %s lists mismatches %q; its seen values give %q", q.ID, o.SettingsCheck.Mismatches, want)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
