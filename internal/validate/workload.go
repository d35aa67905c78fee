package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

// The workload is checked from the evidence: what was sent is what the
// fixtures and the profile say, said in the dialect the result records;
// every count, timer and source follows from the raw usage and timings kept
// in outputs.jsonl; and the timestamps lie inside the run.

// timeLayout is how strata writes UTC timestamps.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// checkIdentity: the run's ID and start are strata's own forms (UTC, no
// control or bidirectional characters), and the recorded sampling is
// exactly the profile's.
func (c *checker) checkIdentity() {
	r := c.res
	started, err := time.Parse(timeLayout, r.Run.StartedAt)
	switch {
	case err != nil:
		c.add(contract.PtrRunStartedAt, "%q is not a UTC timestamp of the form %s", r.Run.StartedAt, timeLayout)
	case !contract.ValidRunID(r.Run.ID):
		c.add(contract.PtrRunID, "%q is not a run ID of the form <UTC start>-<6 hex digits>", r.Run.ID)
	case !strings.HasPrefix(r.Run.ID, started.Format("20060102T150405Z")):
		c.add(contract.PtrRunID, "%q does not begin with the run's start %s", r.Run.ID, r.Run.StartedAt)
	}
	if r.Configuration.Sampling != protocol.ProfileSampling() {
		c.add(contract.PtrConfigurationSampling, "is %+v; the profile requires %+v", r.Configuration.Sampling, protocol.ProfileSampling())
	}
	for _, f := range []struct{ ptr, v string }{{contract.PtrRunID, r.Run.ID}, {contract.PtrRunCommand, r.Run.Command}, {contract.PtrConfigurationTrack, r.Configuration.Track}} {
		if i := strings.IndexFunc(f.v, escape.Hidden); i >= 0 {
			c.add(f.ptr, "has the control or bidirectional character %U at byte %d", []rune(f.v[i:])[0], i)
		}
	}
}

// checkKwargs: configuration.chat_template_kwargs is what every request
// body carried in chat_template_kwargs, names and JSON values as sent
// ("configuration objects preserve effective engine option names and JSON
// values"), and null when none carried it. The bodies themselves are held
// to the fixtures and the profile (checkBody).
func (c *checker) checkKwargs() {
	recorded := c.res.Configuration.ChatTemplateKwargs
	var sent json.RawMessage // none, when no request was sent
	said := "no request was sent"
	for _, q := range c.res.Requests {
		o, ok := c.outs[q.ID]
		if !ok || len(bytes.TrimSpace(o.Request)) == 0 || string(bytes.TrimSpace(o.Request)) == "null" {
			continue
		}
		sent = contract.SentKwargs(o.Request)
		said = "the body of " + q.ID + " carried " + orNull(sent)
		if !sameJSON(sent, recorded) {
			break
		}
	}
	if !sameJSON(sent, recorded) {
		c.add(contract.PtrConfigurationChatTemplateKwargs, "is %s, but %s: it is what every request body carried in chat_template_kwargs (null when none did)",
			orNull(recorded), said)
	}
}

// sameJSON reports whether two JSON values are equal as values (nil and
// null alike); one that does not parse equals nothing.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if len(a) > 0 && json.Unmarshal(a, &x) != nil || len(b) > 0 && json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// orNull shows a JSON value compactly, "null" for none.
func orNull(v json.RawMessage) string {
	var b bytes.Buffer
	if len(v) == 0 || json.Compact(&b, v) != nil {
		return "null"
	}
	return b.String()
}

// recordedDialect is the dialect the result says its bodies were built for.
func (c *checker) recordedDialect() (dialect.Dialect, bool) {
	if d := c.res.Extensions.EngineDialect; d != nil {
		return dialect.Of(d.Dialect), true
	}
	return dialect.Dialect{}, false
}

// checkBody: the exact body sent is the fixture and the profile's settings
// in the recorded dialect, byte for byte after compaction (the writer
// re-encodes JSON compactly, keeping number literals).
func (c *checker) checkBody(p func(...any) string, q *contract.Request, o contract.Output, d dialect.Dialect, known bool) {
	sent := bytes.TrimSpace(o.Request)
	if len(sent) == 0 || string(sent) == "null" {
		if q.Status != contract.Skipped {
			c.add(p(), "outputs.jsonl has no request body for %s, which was dispatched", q.ID)
		}
		return
	}
	if q.Status == contract.Skipped {
		c.add(p(), "outputs.jsonl has a request body for %s, which was skipped", q.ID)
		return
	}
	if c.fx == nil {
		return
	}
	if !known {
		if !c.noDialect {
			c.noDialect = true
			c.add("/extensions/engine_dialect", "does not record the dialect the request bodies were built for, so they cannot be checked")
		}
		return
	}
	f, err := c.fx.Fixture(q.ID)
	if err != nil {
		return
	}
	// The body is compared compacted. A run writes it compact, so it is
	// compacted only when it differs as read (the 16K prompt's body is
	// some 60 KB, and each compaction a scan of it).
	var b, first bytes.Buffer
	okSent, compacted := true, false
	i := 0
	for want, err := range d.BodyForms(f) {
		if err != nil {
			c.add(p(), "cannot rebuild the body of %s: %v", q.ID, err)
			return
		}
		var a bytes.Buffer
		if json.Compact(&a, want) == nil {
			if bytes.Equal(a.Bytes(), sent) {
				return
			}
			if !compacted {
				okSent, compacted = json.Compact(&b, sent) == nil, true
			}
			if okSent && bytes.Equal(a.Bytes(), b.Bytes()) {
				return
			}
		}
		if i == 0 {
			first = a
		}
		i++
	}
	if !compacted {
		// A body that is not JSON compacts to nothing: it then differs from
		// the fixture at its first byte, which is what the message says.
		_ = json.Compact(&b, sent)
	}
	at := firstDiff(first.Bytes(), b.Bytes())
	c.add(p(), "the body sent for %s (outputs.jsonl) is not the fixture with the profile's settings for %s: they differ at byte %d (%q, want %q)",
		q.ID, d.Name(), at, around(b.Bytes(), at), around(first.Bytes(), at))
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// around is the text of b about at, cut at whole UTF-8 characters.
func around(b []byte, at int) string {
	lo, hi := max(0, at-12), min(len(b), at+20)
	for lo > 0 && !utf8.RuneStart(b[lo]) {
		lo--
	}
	for hi < len(b) && !utf8.RuneStart(b[hi]) {
		hi++
	}
	if lo >= hi {
		return ""
	}
	return string(b[lo:hi])
}

// checkAccounting: the record's counts, engine timers, rates, sources and
// note are what the protocol's source table gives for the raw usage and
// timings in outputs.jsonl.
func (c *checker) checkAccounting(p func(...any) string, q *contract.Request, o contract.Output) {
	d, _ := c.recordedDialect()
	if !c.logRead {
		_, log := c.engineLog()
		c.logSplit, c.logRead = measure.NewLogSplit(d, log), true
	}
	acc := measure.Account(measure.Evidence{Usage: o.Usage, Timings: o.Timings, TTFT: q.Timings.TTFTS,
		FirstAnswer: q.Timings.FirstAnswerS, Total: q.Timings.TotalS, Status: q.Status, Timers: d.Timers(), NoTimers: d.NoTimers(), Cap: q.MaxOutputTokens,
		FrozenInput: c.frozenInput(q.ID), Split: c.logSplit.Of(o.Timings)})
	eqI := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqS := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for _, f := range []struct {
		name      string
		got, want *int64
	}{
		{"input_tokens", q.Tokens.InputTokens, acc.Tokens.InputTokens}, {"cached_tokens", q.Tokens.CachedTokens, acc.Tokens.CachedTokens},
		{"read_tokens", q.Tokens.ReadTokens, acc.Tokens.ReadTokens}, {"output_tokens", q.Tokens.OutputTokens, acc.Tokens.OutputTokens},
		{"decode_tokens", q.Tokens.DecodeTokens, acc.Tokens.DecodeTokens},
	} {
		if !eqI(f.got, f.want) {
			c.add(p("tokens", f.name), "is %s; the raw usage and timings in outputs.jsonl give %s", showI(f.got), showI(f.want))
		}
	}
	if !eqF(q.Timings.PromptS, acc.Timings.PromptS) {
		c.add(p("timings", "prompt_s"), "is %s; timings.prompt_ms in outputs.jsonl gives %s", show(q.Timings.PromptS), show(acc.Timings.PromptS))
	}
	if !eqF(q.Timings.DecodeS, acc.Timings.DecodeS) {
		c.add(p("timings", "decode_s"), "is %s; timings.predicted_ms in outputs.jsonl gives %s", show(q.Timings.DecodeS), show(acc.Timings.DecodeS))
	}
	for _, f := range []struct {
		name      string
		got, want *string
	}{
		{"input_tokens", q.Sources.InputTokens, acc.Sources.InputTokens}, {"cached_tokens", q.Sources.CachedTokens, acc.Sources.CachedTokens},
		{"read_tokens", q.Sources.ReadTokens, acc.Sources.ReadTokens}, {"output_tokens", q.Sources.OutputTokens, acc.Sources.OutputTokens},
		{"decode_tokens", q.Sources.DecodeTokens, acc.Sources.DecodeTokens}, {"engine_timings", q.Sources.EngineTimings, acc.Sources.EngineTimings},
	} {
		if !eqS(f.got, f.want) {
			c.add(p("sources", f.name), "names %s; the evidence in outputs.jsonl gives %s", showS(f.got), showS(f.want))
		}
	}
	if !eqS(q.TokenAccountingNote, acc.Note) {
		c.add(p("token_accounting_note"), "is %s; the evidence gives %s", showS(q.TokenAccountingNote), showS(acc.Note))
	}
}

func showI(v *int64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

func showS(v *string) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *v)
}

// checkDispatch: each dispatch is a UTC time inside the run: not before it
// started, and a required request no later after the warm-up's dispatch
// than the required stages lasted.
func (c *checker) checkDispatch(p func(...any) string, q *contract.Request, o contract.Output, started, warmup *time.Time) {
	if o.DispatchedAt == nil {
		if q.Status != contract.Skipped {
			c.add(p(), "outputs.jsonl has no dispatched_at for %s, which was dispatched", q.ID)
		}
		return
	}
	t, err := time.Parse(timeLayout, *o.DispatchedAt)
	if err != nil {
		c.add(p(), "outputs.jsonl dispatched_at %q of %s is not a UTC timestamp of the form %s", *o.DispatchedAt, q.ID, timeLayout)
		return
	}
	if started != nil && t.Before(*started) {
		c.add(p(), "%s was dispatched at %s, before the run started at %s", q.ID, *o.DispatchedAt, c.res.Run.StartedAt)
	}
	// The durations are on the monotonic clock, so a dispatch is held to
	// them by its offset_s, on the same clock, and by its wall time only
	// where it has none (checkOffset reports that): a wall time may lie
	// from its offset by what NTP did meanwhile, which checkDurations bounds.
	var off float64
	switch {
	case c.res.Run.RequiredDurationS == nil:
		return
	case o.OffsetS != nil:
		off = *o.OffsetS
	case warmup != nil:
		off = t.Sub(*warmup).Seconds()
	default:
		return
	}
	limit := *c.res.Run.RequiredDurationS + 1e-3
	if q.Phase == string(protocol.PhaseConcurrency) {
		limit += 60 // the settings check between the stages
		if d := c.res.Run.OptionalDurationS; d != nil {
			limit += *d
		}
	}
	if off > limit || off < -1e-3 {
		c.add(p(), "%s was dispatched %.3f s after the warm-up, outside the run's %.3f s", q.ID, off, limit)
	}
}
