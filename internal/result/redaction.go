package result

import (
	"encoding/json"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
)

// Vocabulary is the words a machine name must not be mistaken for:
// strata's own text and every fixture of the bundle (its messages, tools
// and expected answers), so a user called "build" never rewrites T4's
// "build" argument and one called "short" never rewrites
// performance-short-r1.
func Vocabulary(b *fixtures.Bundle) map[string]bool {
	if b == nil {
		return redact.Vocabulary()
	}
	return redact.Vocabulary(b.Texts()...)
}

// Redactor is the redactor of a result folder: this machine's names and
// secrets, with strata's and the bundle's words protected.
func Redactor(m redact.Machine, b *fixtures.Bundle) *redact.Redactor {
	return redact.New(m, Vocabulary(b))
}

// RedactEvidence redacts what the server sent (answers, reasoning, tool
// calls, error messages and bodies, malformed lines) and the skip reasons
// (which quote network errors) in the record itself,
// before anything is derived from it: the verdicts and their reasons are
// then functions of exactly the evidence outputs.jsonl keeps, and report
// derives the same again.
func RedactEvidence(rec *record.Run, red *redact.Redactor) {
	rec.Aborted = red.String(rec.Aborted)
	for _, e := range rec.Requests {
		RedactOutcome(e, red)
	}
}

// RedactOutcome redacts one request's evidence (see RedactEvidence). It is
// idempotent, so a run can redact a request as it finishes, before its
// journal keeps it, and Assemble again at the end.
func RedactOutcome(e *record.Request, red *redact.Redactor) {
	// A skip reason can quote a network error (a private resolver's
	// address); it feeds the verdicts' reasons.
	e.SkipReason = red.String(e.SkipReason)
	o := e.Outcome
	if o == nil {
		return
	}
	o.Answer, o.Reasoning, o.ErrorBody = red.String(o.Answer), red.String(o.Reasoning), redactRaw(red, o.ErrorBody)
	for i := range o.ToolCalls {
		o.ToolCalls[i].Name = red.String(o.ToolCalls[i].Name)
		o.ToolCalls[i].Arguments = red.String(o.ToolCalls[i].Arguments)
		o.ToolCalls[i].ID = red.String(o.ToolCalls[i].ID)
	}
	for i := range o.Malformed {
		o.Malformed[i] = redactRaw(red, o.Malformed[i])
	}
	if o.Error != nil {
		o.Error.Message = red.String(o.Error.Message)
	}
}

// redactRaw redacts text the server sent as it came: JSON (an error body, a
// data line) by its decoded strings, where escapes (\n, \") would hide a
// word's boundary from the rules; anything else as text.
func redactRaw(red *redact.Redactor, s string) string {
	if json.Valid([]byte(s)) {
		if out, err := red.JSON([]byte(s), false, nil); err == nil {
			return string(out)
		}
	}
	return red.String(s)
}
