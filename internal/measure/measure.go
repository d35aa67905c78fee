// Package measure does the protocol's token and timing accounting ("Where
// the numbers come from"), the cache-reuse and prompt-length rules, and the
// summaries and concurrency rounds ("Measurements"). Everything here is a
// pure function of recorded evidence, so `strata bench report` can rebuild
// and check it. Nothing divides by zero and nothing invents a number: a
// value that cannot be known is nil with a reason.
package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/redact"
)

// Source names (the raw field each value comes from).
const (
	SrcPromptTokens   = "usage.prompt_tokens"
	SrcCachedUsage    = "usage.prompt_tokens_details.cached_tokens"
	SrcCachedTimings  = "timings.cache_n"
	SrcPromptN        = "timings.prompt_n"
	SrcReadDerived    = "derived: input_tokens - cached_tokens (timings.prompt_n absent)"
	SrcCompletion     = "usage.completion_tokens"
	SrcPredictedN     = "timings.predicted_n"
	SrcPredictedRate  = "derived: timings.predicted_per_second x timings.predicted_ms / 1000 (timings.predicted_n disagrees)"
	SrcPredictedNoChk = "timings.predicted_n (not cross-checked: timings.predicted_per_second absent)"
	SrcEngineTimings  = "timings.prompt_ms / 1000 and timings.predicted_ms / 1000"
	SrcClientTimings  = "client monotonic clock from dispatch (outputs.jsonl events of this request)"
)

// Accounting is the token, timing and rate part of one request record.
type Accounting struct {
	Tokens  contract.Tokens
	Timings contract.Timings
	Metrics contract.Metrics
	Sources contract.Sources
	Note    *string
	// Missing holds reasons keyed by pointers relative to the request
	// record (contract.ReqTokensCachedTokens).
	Missing map[string]string
}

// Evidence is what accounting reads: the raw usage and timings objects and
// the client's latencies.
type Evidence struct {
	// Timers says where the engine's counts and durations are (the
	// recorded dialect's; "" is llama.cpp's timings), and NoTimers why it
	// has none (dialect.TimersNone).
	Timers      dialect.Timers
	NoTimers    string
	Usage       json.RawMessage
	Timings     json.RawMessage
	TTFT        *float64
	FirstAnswer *float64
	Total       *float64
	// Status is the request's status; NoDataReason explains why usage or
	// timings are absent when they are (a failure, a skip).
	Status       string
	NoDataReason string
	// Cap is the request's max_tokens, which bounds the counts an engine
	// can give (CountBound); 0 is no cap known.
	Cap int
	// FrozenInput is the fixture's frozen input_tokens, which bounds the
	// prompt count an engine can give (InputBound); 0 is none known.
	FrozenInput int
	// FirstAnswerReason explains a missing first answer, and TotalReason a
	// missing total of a dispatched request (one the runner lost).
	FirstAnswerReason string
	TotalReason       string
	// Split is the prompt's cached and evaluated tokens from a source
	// other than the answer, for an engine whose answer does not split
	// them (dialect.Counts.NoSplit): nil, they stay null with that reason.
	Split *Split
}

// Split is a prompt's cached and evaluated (read) tokens and the source
// that gives them (an engine log's per-request lines).
type Split struct {
	Cached, Read int64
	Source       string
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func str(s string) *string   { return &s }

// object decodes a JSON object keeping number literals.
func object(raw json.RawMessage) map[string]json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// count reads a token count: a JSON integer literal that int64 holds
// ("nonnegative integer token/request counts"). A string ("999"), a
// fraction or an exponent (3.0, 1e3) is not one, whatever its value: the
// engine sent something other than a count. ok=false when absent; bad
// describes a present field that is not a count.
func count(m map[string]json.RawMessage, key string) (v int64, ok bool, bad string) {
	raw, present := m[key]
	if !present || string(raw) == "null" {
		return 0, false, ""
	}
	lit := bytes.TrimSpace(raw)
	// The object decoded, so a run of digits is a valid JSON integer.
	digits := len(lit) > 0 && bytes.IndexFunc(lit, func(r rune) bool { return r < '0' || r > '9' }) < 0
	i, err := strconv.ParseInt(string(lit), 10, 64)
	if !digits || err != nil {
		return 0, false, fmt.Sprintf("%s (%s) is not a nonnegative JSON integer within int64", key, shown(lit))
	}
	return i, true, ""
}

// shown is a raw value as a reason quotes it: whole when short, else its
// start (the value itself stays in outputs.jsonl), with the secret forms
// the redactor knows replaced before it is cut.
func shown(raw []byte) string {
	const max = 40
	s := redact.SecretsOnly(string(raw))
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// number reads a finite nonnegative float field.
func number(m map[string]json.RawMessage, key string) (v float64, ok bool, bad string) {
	raw, present := m[key]
	if !present || string(raw) == "null" {
		return 0, false, ""
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false, fmt.Sprintf("%s (%s) is not a finite nonnegative number", key, shown(raw))
	}
	return f, true, ""
}

// finite is false for NaN and ±Inf, which JSON cannot hold and the spec
// forbids ("Do not divide by zero or publish NaN/infinity").
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// impliedCount is the token count an engine's rate and duration imply, if
// that is a usable count (finite, and within what int64 holds exactly).
func impliedCount(rate, ms float64) (int64, bool) {
	n := math.Round(rate * ms / 1000)
	if !finite(n) || n < 0 || n > 1<<53 {
		return 0, false
	}
	return int64(n), true
}

// DecodeCount is the protocol's decode-count agreement: an engine's decode
// count agrees with expected, the count another of its figures gives for
// seconds of decoding (its rate x its decode time), when they differ by at
// most protocol.DecodeCountSlackPerSecond x decode_s +
// protocol.DecodeCountSlack tokens. above is true when count exceeds
// expected by more than that; slack is that bound in words ("0.05 x
// decode_s + 1"), for the sentence the caller writes.
func DecodeCount(count, expected, seconds float64) (agrees, above bool, slack string) {
	agrees = math.Abs(count-expected) <= protocol.DecodeCountSlackPerSecond*seconds+protocol.DecodeCountSlack
	above = count > expected+protocol.DecodeCountSlackPerSecond*seconds+protocol.DecodeCountSlack
	return agrees, above, fmt.Sprintf("%g x decode_s + %d", protocol.DecodeCountSlackPerSecond, protocol.DecodeCountSlack)
}

// overCompletion says that a decode count the engine's rate implies
// exceeds the API's completion_tokens by more than the decode-count slack,
// or "" when it does not: the engine cannot have decoded more accepted
// tokens than it returned, so the rate contradicts the count and implies
// nothing.
func overCompletion(implied int64, completion *int64, seconds float64) string {
	if completion == nil {
		return ""
	}
	if _, above, slack := DecodeCount(float64(implied), float64(*completion), seconds); above {
		return fmt.Sprintf("exceeds the API's completion_tokens (%d) by more than %s; the raw timings are kept in outputs.jsonl", *completion, slack)
	}
	return ""
}

// Rate is tokens per second from an engine's count and its own duration,
// or nil with the reason: the only formula for prompt_tps and decode_tps.
// count and duration name the pair in the reason ("read_tokens",
// "prompt_s"), timer the engine's duration in words ("prompt time").
func Rate(tokens *int64, seconds *float64, count, duration, timer string) (*float64, string) {
	switch {
	case tokens == nil || seconds == nil:
		return nil, count + " or " + duration + " is null"
	case *tokens == 0:
		return nil, count + " is 0"
	}
	if why := TimerBound(*tokens, *seconds, timer); why != "" {
		return nil, why
	}
	v := float64(*tokens) / *seconds
	return &v, ""
}

// MaxTokenRate is the fastest rate, in tokens per second, an engine's own
// counts and timer can show: far above any prefill or decode rate a
// machine reaches (the fastest are near 10^5 tokens/s), so a faster one is
// a timer that did not measure the tokens (a duration rounded to 0, a
// forged 1e-300 ms), and a rate from it would be a number no engine gave.
const MaxTokenRate = 1e8

// CapSlack is how many tokens an engine's completion count may exceed the
// request's max_tokens by: none. llama-server stops at n_predict (the
// captures' capped requests end at completion_tokens = max_tokens, and
// predicted_n = completion_tokens), and no engine documents generating
// past the cap.
const CapSlack = 0

// Impossible begins the reason of an engine number no engine can report.
const Impossible = "impossible engine evidence: "

// TimerBound says why seconds cannot be the engine's time for tokens (""
// when it can): a duration of 0, or one so short that the rate is above
// MaxTokenRate, for a count above 0; or one longer than
// protocol.RequestTimeout, which ends every request the engine answers
// (an engine's timer in other units than it says, a forged 1e308 ns).
// timer names the duration in words ("prompt time").
func TimerBound(tokens int64, seconds float64, timer string) string {
	if limit := protocol.RequestTimeout.Seconds(); seconds > limit {
		return fmt.Sprintf("%sthe engine reported a %s of %.3g s, longer than the request timeout (%g s) within which the runner ends every request, so its timer did not measure this one",
			Impossible, timer, seconds, limit)
	}
	if tokens <= 0 || seconds > 0 && float64(tokens)/seconds <= MaxTokenRate {
		return ""
	}
	return fmt.Sprintf("%sthe engine reported a %s of %.3g s for %d tokens, faster than %g tokens/s, so its timer did not measure them",
		Impossible, timer, seconds, tokens, float64(MaxTokenRate))
}

// CountBound says why n cannot be a count of tokens an engine generated
// for a request capped at limit tokens ("" when it can): it is above the
// cap plus CapSlack. field names the count; a limit of 0 is no cap known.
func CountBound(n int64, limit int, field string) string {
	if limit <= 0 || n <= int64(limit)+CapSlack {
		return ""
	}
	return fmt.Sprintf("%s%s (%d) exceeds the request's max_tokens (%d): an engine stops generating at the cap",
		Impossible, field, n, limit)
}

// InputFactor and InputSlack bound an engine's prompt count by the
// fixture's frozen one: no tokenizer gives more than one token per byte
// of text (byte-level BPE and SentencePiece's byte fallback alike), and
// the bundle's messages and tools hold fewer than InputFactor bytes per
// frozen token (at most 3.6; TestInputBoundCoversTheBundle checks it), so
// InputFactor x input_tokens covers any tokenizer's count of them, and
// InputSlack the text an engine's own template adds around them (role
// markers, a default system prompt, a tool preamble). A larger count
// (a forged 2^63-1) is no count of this prompt.
const (
	InputFactor = 4
	InputSlack  = 1024
)

// InputBound says why n cannot be an engine's count of the prompt of a
// fixture whose frozen count is frozen tokens ("" when it can): it is
// above InputFactor x frozen + InputSlack. field names the count; a
// frozen count of 0 is none known.
func InputBound(n int64, frozen int, field string) string {
	limit := int64(InputFactor)*int64(frozen) + InputSlack
	if frozen <= 0 || n <= limit {
		return ""
	}
	return fmt.Sprintf("%s%s (%d) exceeds %d x the fixture's frozen input_tokens (%d) + %d (%d): no tokenizer gives more than one token per byte of the prompt's text",
		Impossible, field, n, InputFactor, frozen, InputSlack, limit)
}

// Account maps one request's evidence to its record fields.
func Account(ev Evidence) Accounting {
	ac := &accountant{ev: ev, a: Accounting{Missing: map[string]string{}}, usage: object(ev.Usage), timings: object(ev.Timings),
		fields: ev.Timers.Fields()}
	// prompt_n and cache_n are fields of llama-server's timings: another
	// engine's timer object never supplies them.
	if ac.fields.Timings {
		ac.llama = ac.timings
	}
	ac.input()
	ac.cached()
	ac.read()
	ac.output()
	ac.engineTimers()
	ac.bounds()
	ac.client()
	ac.rates()
	a := ac.a
	if len(ac.notes) > 0 {
		a.Note = str(strings.Join(ac.notes, "; "))
	} else {
		ac.miss(contract.ReqTokenAccountingNote, "not needed: the counts agree")
	}
	return a
}

// accountant holds one request's accounting while Account builds it.
type accountant struct {
	ev             Evidence
	a              Accounting
	usage, timings map[string]json.RawMessage
	// llama is the timings object when it is llama-server's (prompt_n,
	// cache_n), else nil.
	llama  map[string]json.RawMessage
	fields dialect.TimerFields
	notes  []string
	// contradiction says why cached_tokens contradicts input_tokens ("":
	// it does not).
	contradiction string
}

func (ac *accountant) miss(ptr, reason string) { ac.a.Missing[ptr] = reason }

// absent is why a field is null: the request's own reason when it carries
// no engine answer at all, else that the answer lacked it.
func (ac *accountant) absent(what string) string {
	if ac.ev.NoDataReason != "" {
		return ac.ev.NoDataReason
	}
	return "the engine's answer carried no " + what
}

// unknown records a count the evidence does not give and its source's
// reason ("no <name>: ...").
func (ac *accountant) unknown(tokenPtr, sourcePtr, name, reason string) {
	ac.miss(tokenPtr, reason)
	ac.miss(sourcePtr, "no "+name+": "+reason)
}

// objectCount reads a count of one object of the answer (usage, or the
// timer object of an engine whose counts are there: dialect.Counts), or
// records why it is null.
func (ac *accountant) objectCount(obj map[string]json.RawMessage, object, field, tokenPtr, sourcePtr, name, src string) (*int64, *string) {
	if v, ok, bad := count(obj, field); ok {
		return i64(v), str(src)
	} else if bad != "" {
		ac.unknown(tokenPtr, sourcePtr, name, "invalid evidence: "+object+"."+bad)
	} else {
		ac.unknown(tokenPtr, sourcePtr, name, ac.absent(object+"."+field))
	}
	return nil, nil
}

// input is input_tokens: usage.prompt_tokens, or the engine's own count
// where its answer has no usage (dialect.Counts). A count above what the
// fixture's prompt can have is none (InputBound).
func (ac *accountant) input() {
	a, field := &ac.a, SrcPromptTokens
	if c := ac.fields.Counts; c != nil {
		field = "timings." + c.Input
		a.Tokens.InputTokens, a.Sources.InputTokens = ac.objectCount(ac.timings, "timings", c.Input, contract.ReqTokensInputTokens, contract.ReqSourcesInputTokens, "input_tokens", c.InputSource)
	} else {
		a.Tokens.InputTokens, a.Sources.InputTokens = ac.objectCount(ac.usage, "usage", "prompt_tokens", contract.ReqTokensInputTokens, contract.ReqSourcesInputTokens, "input_tokens", SrcPromptTokens)
	}
	if n := a.Tokens.InputTokens; n != nil {
		if why := InputBound(*n, ac.ev.FrozenInput, field); why != "" {
			a.Tokens.InputTokens, a.Sources.InputTokens = nil, nil
			ac.unknown(contract.ReqTokensInputTokens, contract.ReqSourcesInputTokens, "input_tokens", why)
		}
	}
}

// output is output_tokens: usage.completion_tokens, or the engine's own
// count where its answer has no usage (dialect.Counts).
// A count above the request's cap is none (CountBound): the engine
// timers are checked against it.
func (ac *accountant) output() {
	a, field := &ac.a, SrcCompletion
	if c := ac.fields.Counts; c != nil {
		field = "timings." + c.Output
		a.Tokens.OutputTokens, a.Sources.OutputTokens = ac.objectCount(ac.timings, "timings", c.Output, contract.ReqTokensOutputTokens, contract.ReqSourcesOutputTokens, "output_tokens", c.OutputSource)
	} else {
		a.Tokens.OutputTokens, a.Sources.OutputTokens = ac.objectCount(ac.usage, "usage", "completion_tokens", contract.ReqTokensOutputTokens, contract.ReqSourcesOutputTokens, "output_tokens", SrcCompletion)
	}
	if n := a.Tokens.OutputTokens; n != nil {
		if why := CountBound(*n, ac.ev.Cap, field); why != "" {
			a.Tokens.OutputTokens, a.Sources.OutputTokens = nil, nil
			ac.unknown(contract.ReqTokensOutputTokens, contract.ReqSourcesOutputTokens, "output_tokens", why)
		}
	}
}

// cached is cached_tokens: usage.prompt_tokens_details.cached_tokens, else
// timings.cache_n, else (timings whose prompt_n counts only the tokens
// evaluated) the rest of the prompt.
func (ac *accountant) cached() {
	a, fields := &ac.a, ac.fields
	if fields.Counts != nil {
		ac.split()
		return
	}
	cached, ok, bad := int64(0), false, ""
	if details := object(ac.usage["prompt_tokens_details"]); details != nil {
		if cached, ok, bad = count(details, "cached_tokens"); ok {
			a.Sources.CachedTokens = str(SrcCachedUsage)
		}
	}
	if !ok {
		var badN string
		if cached, ok, badN = count(ac.llama, "cache_n"); ok {
			a.Sources.CachedTokens = str(SrcCachedTimings)
		} else if bad == "" {
			bad = badN
		}
	}
	if !ok && fields.CachedFromPromptN && a.Tokens.InputTokens != nil {
		if n, nOK, _ := count(ac.llama, "prompt_n"); nOK && n <= *a.Tokens.InputTokens {
			cached, ok = *a.Tokens.InputTokens-n, true
			a.Sources.CachedTokens = str(fields.CachedSource)
		}
	}
	// More cached tokens than the prompt has: the engine's counts
	// contradict each other, so which tokens its prefill computed is
	// unknown and read_tokens (and the prompt rate) is null. cached_tokens
	// stays the engine's count: the reuse rule reads it, and an engine
	// that claims more than the whole prompt from the cache is held to it.
	if ok && a.Tokens.InputTokens != nil && cached > *a.Tokens.InputTokens {
		ac.contradiction = fmt.Sprintf("%s%s (%d) exceeds usage.prompt_tokens (%d), so the tokens the prefill computed are unknown; the raw values are kept in outputs.jsonl",
			Contradictory, *a.Sources.CachedTokens, cached, *a.Tokens.InputTokens)
	}
	if ok {
		a.Tokens.CachedTokens = i64(cached)
		return
	}
	r := ac.absent("usage.prompt_tokens_details.cached_tokens or timings.cache_n")
	if !fields.Timings {
		r = ac.absent("usage.prompt_tokens_details.cached_tokens" + fields.CachedHint)
	}
	if bad != "" {
		r = "invalid evidence: " + bad
	}
	ac.unknown(contract.ReqTokensCachedTokens, contract.ReqSourcesCachedTokens, "cached_tokens", r)
}

// split is cached_tokens and read_tokens of an engine whose answer does
// not split the prompt (dialect.Counts.NoSplit): from Evidence.Split when
// a source gives them, else null with the engine's reason. A split that
// does not add up to input_tokens is no split of this prompt.
func (ac *accountant) split() {
	a, sp, why := &ac.a, ac.ev.Split, ac.fields.Counts.NoSplit
	switch {
	case ac.ev.NoDataReason != "":
		why = ac.ev.NoDataReason
	case sp != nil && a.Tokens.InputTokens != nil && sp.Cached+sp.Read == *a.Tokens.InputTokens:
		a.Tokens.CachedTokens, a.Tokens.ReadTokens = i64(sp.Cached), i64(sp.Read)
		a.Sources.CachedTokens, a.Sources.ReadTokens = str(sp.Source), str(sp.Source)
		return
	case sp != nil && a.Tokens.InputTokens != nil:
		why = fmt.Sprintf("%s%s gives %d cached and %d evaluated tokens, which do not add up to input_tokens (%d)", Contradictory, sp.Source, sp.Cached, sp.Read, *a.Tokens.InputTokens)
	}
	ac.unknown(contract.ReqTokensCachedTokens, contract.ReqSourcesCachedTokens, "cached_tokens", why)
	ac.unknown(contract.ReqTokensReadTokens, contract.ReqSourcesReadTokens, "read_tokens", why)
}

// read is read_tokens: timings.prompt_n, else input − cached (derived).
func (ac *accountant) read() {
	a := &ac.a
	if ac.fields.Counts != nil {
		return // split
	}
	if ac.contradiction != "" {
		ac.unknown(contract.ReqTokensReadTokens, contract.ReqSourcesReadTokens, "read_tokens", ac.contradiction)
		return
	}
	v, ok, bad := count(ac.llama, "prompt_n")
	switch {
	case ok && ac.readBound(v) != "":
		ac.unknown(contract.ReqTokensReadTokens, contract.ReqSourcesReadTokens, "read_tokens", ac.readBound(v))
		return
	case ok:
		a.Tokens.ReadTokens, a.Sources.ReadTokens = i64(v), str(SrcPromptN)
		return
	case a.Tokens.InputTokens != nil && a.Tokens.CachedTokens != nil && *a.Tokens.InputTokens >= *a.Tokens.CachedTokens:
		a.Tokens.ReadTokens = i64(*a.Tokens.InputTokens - *a.Tokens.CachedTokens)
		a.Sources.ReadTokens = str(SrcReadDerived)
		ac.notes = append(ac.notes, "read_tokens derived as input_tokens - cached_tokens because timings.prompt_n is absent")
		return
	}
	r := ac.absent("timings.prompt_n")
	if bad != "" {
		r = "invalid evidence: timings." + bad
	} else if ac.ev.NoDataReason == "" {
		r = "timings.prompt_n is absent and input_tokens - cached_tokens cannot be formed"
		if !ac.fields.Timings {
			r = "the engine reported no usage.prompt_tokens_details.cached_tokens" + ac.fields.CachedHint + ", so the tokens its prefill computed are unknown and a prompt rate could not exclude cached tokens"
		}
	}
	ac.unknown(contract.ReqTokensReadTokens, contract.ReqSourcesReadTokens, "read_tokens", r)
}

// readBound says why timings.prompt_n cannot count the tokens the
// prefill evaluated ("" when it can): more than the whole prompt the
// engine counted, or, where that count is none, more than the fixture's
// prompt can have (InputBound). It is the count the prompt rate divides.
func (ac *accountant) readBound(n int64) string {
	if in := ac.a.Tokens.InputTokens; in != nil {
		if n > *in {
			return fmt.Sprintf("%stimings.prompt_n (%d) exceeds usage.prompt_tokens (%d): the engine evaluated more tokens than the prompt has; the raw values are kept in outputs.jsonl", Contradictory, n, *in)
		}
		return ""
	}
	return InputBound(n, ac.ev.FrozenInput, "timings.prompt_n")
}

// engineTimers are the engine's durations and its decode count, from its
// own timers only.
func (ac *accountant) engineTimers() {
	a, fields := &ac.a, ac.fields
	switch {
	case fields.Durations != nil:
		obj := ac.timings
		if fields.Durations.InUsage {
			obj = ac.usage
		}
		ac.notes = readDurations(*fields.Durations, a, ac.usage, obj, ac.miss, ac.absent, ac.notes)
	case fields.None:
		why := ac.ev.NoTimers
		if ac.ev.NoDataReason != "" {
			why = ac.ev.NoDataReason
		}
		ac.miss(contract.ReqTimingsPromptS, why)
		ac.miss(contract.ReqTimingsDecodeS, why)
		ac.miss(contract.ReqSourcesEngineTimings, "no engine timer fields: "+why)
		ac.miss(contract.ReqTokensDecodeTokens, "no engine decode count: "+why)
		ac.miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+why)
	default:
		ac.notes = llamaTimers(a, ac.timings, ac.ev.Cap, ac.miss, ac.absent, ac.notes)
	}
}

// bounds nulls, with the reason, the engine numbers no engine can give: a
// decode count above the request's cap (CountBound; output bounds
// output_tokens), a duration too short for its count (TimerBound). Then
// it notes counts that differ.
func (ac *accountant) bounds() {
	a := &ac.a
	if n := a.Tokens.DecodeTokens; n != nil {
		if why := CountBound(*n, ac.ev.Cap, "decode_tokens"); why != "" {
			a.Tokens.DecodeTokens, a.Sources.DecodeTokens = nil, nil
			ac.unknown(contract.ReqTokensDecodeTokens, contract.ReqSourcesDecodeTokens, "decode_tokens", why)
		}
	}
	ac.timerBound(&a.Timings.PromptS, a.Tokens.ReadTokens, contract.ReqTimingsPromptS, "prompt time")
	ac.timerBound(&a.Timings.DecodeS, a.Tokens.DecodeTokens, contract.ReqTimingsDecodeS, "decode time")
	if a.Tokens.OutputTokens != nil && a.Tokens.DecodeTokens != nil && *a.Tokens.OutputTokens != *a.Tokens.DecodeTokens {
		ac.notes = append(ac.notes, fmt.Sprintf("API output_tokens (%d) and the engine's decode_tokens (%d) differ; the rate uses the engine's count for its own timer",
			*a.Tokens.OutputTokens, *a.Tokens.DecodeTokens))
	}
}

// timerBound nulls a duration that cannot be the engine's time for its
// count, with the reason.
func (ac *accountant) timerBound(seconds **float64, tokens *int64, ptr, timer string) {
	if *seconds == nil || tokens == nil {
		return
	}
	if why := TimerBound(*tokens, **seconds, timer); why != "" {
		*seconds = nil
		ac.miss(ptr, why)
	}
}

// client are the client latencies.
func (ac *accountant) client() {
	a, ev := &ac.a, ac.ev
	a.Timings.TTFTS, a.Timings.FirstAnswerS, a.Timings.TotalS = ev.TTFT, ev.FirstAnswer, ev.Total
	if ev.TTFT == nil {
		r := "no nonempty reasoning, answer or tool-call delta arrived"
		if ev.NoDataReason != "" && ev.Status == contract.Skipped {
			r = ev.NoDataReason
		}
		ac.miss(contract.ReqTimingsTTFTS, r)
	}
	if ev.FirstAnswer == nil {
		r := ev.FirstAnswerReason
		if r == "" {
			r = "no answer text or tool-call delta arrived"
		}
		ac.miss(contract.ReqTimingsFirstAnswerS, r)
	}
	if ev.Total == nil {
		r := "the request was never dispatched: " + ev.NoDataReason
		if ev.TotalReason != "" {
			r = ev.TotalReason
		}
		ac.miss(contract.ReqTimingsTotalS, r)
		ac.miss(contract.ReqSourcesClientTimings, r)
	} else {
		a.Sources.ClientTimings = str(SrcClientTimings)
	}
}

// rates are the two primary rates, from engine counts and durations only.
func (ac *accountant) rates() {
	a := &ac.a
	var why string
	if a.Metrics.PromptTPS, why = Rate(a.Tokens.ReadTokens, a.Timings.PromptS, "read_tokens", "prompt_s", "prompt time"); why != "" {
		if a.Tokens.ReadTokens != nil && *a.Tokens.ReadTokens == 0 {
			why = "read_tokens is 0: the whole prompt came from the cache"
		}
		ac.miss(contract.ReqMetricsPromptTPS, why+because(ac.fields, a.Missing, contract.ReqTimingsPromptS, contract.ReqTokensReadTokens))
	}
	if a.Metrics.DecodeTPS, why = Rate(a.Tokens.DecodeTokens, a.Timings.DecodeS, "decode_tokens", "decode_s", "decode time"); why != "" {
		ac.miss(contract.ReqMetricsDecodeTPS, why+because(ac.fields, a.Missing, contract.ReqTimingsDecodeS, contract.ReqTokensDecodeTokens))
	}
}

// CacheReuse reports unexpected reuse of the user payload: cached_tokens
// above the fixture's max_shared_prefix_tokens plus the boundary allowance.
func CacheReuse(cached *int64, maxShared int) (bool, string) {
	if cached == nil {
		return false, ""
	}
	limit := int64(maxShared + protocol.CacheBoundaryAllowance)
	if *cached > limit {
		return true, fmt.Sprintf("unexpected cache reuse: cached_tokens %d > max_shared_prefix_tokens %d + %d",
			*cached, maxShared, protocol.CacheBoundaryAllowance)
	}
	return false, ""
}

// LengthViolation checks a 4K/16K performance request's measured
// input_tokens against the 2 % rule.
func LengthViolation(caseID string, input *int64) (bool, string) {
	target, ok := protocol.TargetTokens(caseID)
	if !ok || input == nil {
		return false, ""
	}
	if v := protocol.LengthRule(int(*input), target); !v.Within {
		return true, fmt.Sprintf("measured input_tokens %d of %s is %s (a different tokenizer or template)", *input, caseID, v.Why)
	}
	return false, ""
}

// llamaTimers reads llama-server's timings (and ik_llama.cpp's, the same
// fields): prompt_ms and predicted_ms, and predicted_n checked against
// predicted_per_second. limit is the request's cap.
func llamaTimers(a *Accounting, timings map[string]json.RawMessage, limit int, miss func(ptr, reason string), absent func(string) string, notes []string) []string {
	promptMS, promptOK, promptBad := number(timings, "prompt_ms")
	predMS, predOK, predBad := number(timings, "predicted_ms")
	if promptOK {
		a.Timings.PromptS = f64(promptMS / 1000)
	} else {
		r := absent("timings.prompt_ms")
		if promptBad != "" {
			r = "invalid evidence: timings." + promptBad
		}
		miss(contract.ReqTimingsPromptS, r)
	}
	predN, predNOK, predNBad := count(timings, "predicted_n")
	// The decode timer is checked against the engine's count before the
	// count against the timer: the count an impossible timer (0 ms) and
	// the rate imply would be an invented one.
	timerWhy := ""
	if predOK {
		a.Timings.DecodeS = f64(predMS / 1000)
		decoded := a.Tokens.OutputTokens
		if predNOK && CountBound(predN, limit, "") == "" {
			decoded = &predN
		}
		if decoded != nil {
			timerWhy = TimerBound(*decoded, predMS/1000, "decode time")
		}
	}
	switch {
	case timerWhy != "":
		a.Timings.DecodeS = nil
		miss(contract.ReqTimingsDecodeS, timerWhy)
	case !predOK:
		r := absent("timings.predicted_ms")
		if predBad != "" {
			r = "invalid evidence: timings." + predBad
		}
		miss(contract.ReqTimingsDecodeS, r)
	}
	if promptOK || predOK {
		a.Sources.EngineTimings = str(SrcEngineTimings)
	} else {
		miss(contract.ReqSourcesEngineTimings, "no engine timer fields: "+absent("timings"))
	}
	if timerWhy != "" {
		r := timerWhy
		if predNOK {
			r = fmt.Sprintf("timings.predicted_n (%d) cannot be checked against the engine's rate: %s", predN, timerWhy)
		}
		miss(contract.ReqTokensDecodeTokens, r)
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+r)
		return notes
	}
	return llamaDecode(a, timings, predMS, predOK, predN, predNOK, predNBad, miss, absent, notes)
}

// llamaDecode is decode_tokens: predicted_n when it agrees with the
// reported rate, else the count the rate implies.
func llamaDecode(a *Accounting, timings map[string]json.RawMessage, predMS float64, predOK bool, predN int64, predNOK bool, predNBad string,
	miss func(ptr, reason string), absent func(string) string, notes []string) []string {
	rate, rateOK, _ := number(timings, "predicted_per_second")
	implied, impliedOK := impliedCount(rate, predMS)
	agrees, _, slack := DecodeCount(float64(predN), rate*(predMS/1000), predMS/1000)
	over := overCompletion(implied, a.Tokens.OutputTokens, predMS/1000)
	switch {
	case predNOK && rateOK && predOK && agrees:
		a.Tokens.DecodeTokens, a.Sources.DecodeTokens = i64(predN), str(SrcPredictedN)
	case predNOK && rateOK && predOK && impliedOK && over != "":
		r := fmt.Sprintf("%stimings.predicted_n (%d) disagrees with predicted_per_second x predicted_ms/1000, and the count that implies (%d) %s",
			Contradictory, predN, implied, over)
		miss(contract.ReqTokensDecodeTokens, r)
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+r)
	case predNOK && rateOK && predOK && impliedOK:
		a.Tokens.DecodeTokens, a.Sources.DecodeTokens = i64(implied), str(SrcPredictedRate)
		notes = append(notes, fmt.Sprintf("timings.predicted_n (%d) disagrees with predicted_per_second x predicted_ms/1000 (%.3f) beyond %s; decode_tokens is the count the rate implies (%d); the raw timings are kept in outputs.jsonl",
			predN, rate*predMS/1000, slack, implied))
	case predNOK && rateOK && predOK:
		miss(contract.ReqTokensDecodeTokens, fmt.Sprintf("timings.predicted_n (%d) disagrees with predicted_per_second x predicted_ms/1000, and the count that implies is not a usable number", predN))
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: the engine's decode count and rate disagree and the rate implies no usable count")
	case predNOK:
		a.Tokens.DecodeTokens, a.Sources.DecodeTokens = i64(predN), str(SrcPredictedNoChk)
		notes = append(notes, "decode_tokens is timings.predicted_n, not cross-checked because the engine reported no predicted_per_second")
	case rateOK && predOK && impliedOK && over != "":
		r := fmt.Sprintf("%sthe count predicted_per_second x predicted_ms/1000 implies (%d) %s",
			Contradictory, implied, over)
		miss(contract.ReqTokensDecodeTokens, r)
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+r)
	case rateOK && predOK && impliedOK:
		a.Tokens.DecodeTokens, a.Sources.DecodeTokens = i64(implied), str(SrcPredictedRate)
		notes = append(notes, fmt.Sprintf("timings.predicted_n is absent; decode_tokens is the count predicted_per_second x predicted_ms/1000 implies (%d)", implied))
	default:
		r := absent("timings.predicted_n")
		if predNBad != "" {
			r = "invalid evidence: timings." + predNBad
		}
		miss(contract.ReqTokensDecodeTokens, r)
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+r)
	}
	return notes
}

// readDurations fills the durations and the decode count from the
// engine's object.
func readDurations(e dialect.Durations, a *Accounting, usage, obj map[string]json.RawMessage, miss func(ptr, reason string), absent func(string) string, notes []string) []string {
	none := absent(e.Absent)
	seconds := func(key, ptr string) (*float64, bool) {
		v, ok, bad := number(obj, key)
		if ok {
			return f64(v * e.Scale), true
		}
		r := none
		if bad != "" {
			r = "invalid evidence: " + e.Object + "." + bad
		}
		miss(ptr, r)
		return nil, false
	}
	var promptOK, decodeOK bool
	a.Timings.PromptS, promptOK = seconds(e.Prompt, contract.ReqTimingsPromptS)
	a.Timings.DecodeS, decodeOK = seconds(e.Decode, contract.ReqTimingsDecodeS)
	if promptOK || decodeOK {
		a.Sources.EngineTimings = str(e.Source)
		if e.Note != "" {
			notes = append(notes, e.Note)
		}
	} else {
		miss(contract.ReqSourcesEngineTimings, "no engine timer fields: "+none)
	}
	first := int64(0)
	if e.AfterFirst {
		first = 1
	}
	field := "usage.completion_tokens"
	n, ok, _ := count(usage, "completion_tokens")
	if e.DecodeCount != "" {
		field = e.Object + "." + e.DecodeCount
		n, ok, _ = count(obj, e.DecodeCount)
	}
	if ok && n >= first && decodeOK {
		a.Tokens.DecodeTokens, a.Sources.DecodeTokens = i64(n-first), str(e.DecodeSource)
	} else {
		r := "no decode duration: " + none
		if decodeOK {
			r = absent(field)
		}
		miss(contract.ReqTokensDecodeTokens, r)
		miss(contract.ReqSourcesDecodeTokens, "no decode_tokens: "+r)
	}
	return notes
}

// because adds why the rate's inputs are null where that is the news: for
// an engine whose timers are not the spec's, and for counts the engine
// contradicted.
func because(f dialect.TimerFields, missing map[string]string, ptrs ...string) string {
	other := !f.Spec
	for _, p := range ptrs {
		if why := missing[p]; why != "" && (other || strings.HasPrefix(why, Contradictory) || strings.HasPrefix(why, Impossible)) {
			return ": " + why
		}
	}
	return ""
}

// Contradictory begins the reason of a count the engine's own evidence
// contradicts.
const Contradictory = "contradictory evidence: "
