// Package submit prepares a result folder for a results-only pull request:
// a redaction scan of every file, and the pull request's title and body in
// the spec's form. It never uploads anything.
package submit

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/redact"
)

// Scan looks for private data the redactor would replace in every file of
// the folder, with the writer's own rules: the string values of JSON files
// (by their names too, where a name says the value is a secret) except the
// protocol-owned ones, and the text of the others. It returns one line per finding, in plain words.
func Scan(dir string, r *redact.Redactor) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name()+": a folder inside a result folder")
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		asText := true
		var found []redact.Finding
		if strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".jsonl") {
			found, err = r.FindJSON(data, contract.ProtocolOwned(e.Name()))
			asText = err != nil // not JSON after all: scan it as text
		}
		if asText {
			found = r.Find(string(data))
		}
		seen := map[string]bool{}
		for _, f := range found {
			line := e.Name() + ": " + f.String()
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// NoEngineLog is why a folder without an engine log is not ready to
// share ("" when it has one): step 2 of the spec's "Submit and review"
// lists the engine logs among what the folder holds.
func NoEngineLog(r *contract.Results) string {
	for _, a := range r.Artifacts {
		if a.Kind == contract.ArtifactEngineLog {
			return ""
		}
	}
	why, ok := r.Missing[contract.PtrEngineLog]
	if !ok {
		why = "the folder lists no engine_log artifact"
	}
	msg := "no engine log: " + why + "; step 2 of the spec's \"Submit and review\" asks for the engine logs"
	if !strings.Contains(why, "--engine-log") { // the folder's reason says what to do where it can
		msg += ": run again with --engine-log FILE, or with --profile so strata starts the engine and keeps its output"
	}
	return msg
}

// str is a field for the title or body: plain text in Markdown.
func str(p *string, none string) string {
	if p == nil || *p == "" {
		return none
	}
	return escape.Markdown(*p)
}

// Title is the suggested pull-request title:
// benchmark: <GPU> / <model> / <quant> / <protocol-id>.
func Title(r *contract.Results) string {
	return fmt.Sprintf("benchmark: %s / %s / %s / %s", escape.Markdown(r.GPULabel()), str(r.Model.ID, "unknown model"),
		str(r.Model.Quantization, "quantization not declared"), r.Protocol.ID)
}

// Body is the pull request's body: the report link, required versus
// optional stages, and every failed, skipped, missing and nonconforming
// measurement.
func Body(r *contract.Results, folder string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	report := "bench/results/" + folder
	p("Results-only pull request: one hardware/model/quantization/configuration combination, every scheduled outcome kept.\n\n")
	p("- Report: [%s/README.md](%s/README.md) ([results.json](%s/results.json), [outputs.jsonl](%s/outputs.jsonl))\n", report, report, report, report)
	p("- Protocol: `%s` (draft: pilot data), corpus `%s`\n", r.Protocol.ID, r.Protocol.CorpusSHA256)
	p("- Run `%s`, status **%s**, sanity **%d/%d**\n", r.Run.ID, r.Run.Status, r.Quality.Passed, r.Quality.Total)
	p("- Hardware: %s; model %s; quantization %s; track `%s` (%s)\n", escape.Markdown(r.GPULabel()), str(r.Model.ID, "unknown"),
		str(r.Model.Quantization, "not declared"), escape.CodeSpan(r.Configuration.Track), str(r.Configuration.TrackNotes, "no notes"))
	p("- strata commit: %s\n", str(r.Software.StrataCommit, "none"))
	if e := r.Extensions.Engine; e != nil && !e.StartedByRunner {
		p("- Engine: %s; configuration only as far as the engine shows it (see the missing values below)\n", escape.Markdown(derive.Freshness(e)))
	}
	p("\n")
	writeStages(p, r)

	p("## Failed, skipped, missing and nonconforming measurements\n\n")
	items, perRequest := problems(r)
	for _, it := range items {
		p("%s\n", it)
	}
	if perRequest > 0 {
		p("- %d per-request null values, each with its reason in results.json `missing`\n", perRequest)
	}
	if len(items) == 0 && perRequest == 0 {
		p("None.\n")
	}
	p("\nChecked with `strata bench submit` (validator, redaction scan, artifact hashes). Engine changes, if any, are in a separate pull request.\n")
	return b.String()
}

// writeStages writes each stage's request counts, required and optional,
// and how long the required stages took.
func writeStages(p func(string, ...any), r *contract.Results) {
	p("## Stages\n\n")
	row := func(ph, kind string) {
		c := r.RequestCounts.Phase(ph)
		p("| %s | %s | %d | %d | %d | %d | %d |\n", ph, kind, c.Planned, c.Completed, c.Truncated, c.Failed, c.Skipped)
	}
	p("| Stage | Kind | Planned | Completed | Capped | Failed | Skipped |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, ph := range []string{"warmup", "performance", "sanity"} {
		row(ph, "required")
	}
	if r.Run.OptionalConcurrency {
		row("concurrency", "optional")
	} else {
		p("| concurrency | optional | not selected | | | | |\n")
	}
	dur := "not measured"
	if r.Run.RequiredDurationS != nil {
		dur = fmt.Sprintf("%.1f s", *r.Run.RequiredDurationS)
	}
	p("\nRequired stages took %s.\n\n", dur)
}

// problems lists, one Markdown list item each, the run's status reasons,
// failed and skipped requests, wrong sanity answers, summaries without a
// sample and missing values; the nulls of single requests are only
// counted, as they are many.
func problems(r *contract.Results) (items []string, perRequest int) {
	sr := r.Extensions.StatusReasons
	for _, list := range []struct {
		kind    string
		reasons []contract.StatusReason
	}{{contract.StatusNonconforming, sr.Nonconforming}, {contract.StatusPartial, sr.Partial}} {
		for _, reason := range list.reasons {
			items = append(items, fmt.Sprintf("- **%s**: %s", list.kind, escape.Markdown(reason.Text)))
		}
	}
	items = append(items, requestProblems(r.Requests)...)
	for i, s := range r.Summaries {
		if s.N == 0 {
			items = append(items, fmt.Sprintf("- no valid samples for %s %s `%s` (n=0): %s", s.Phase, s.CaseID, s.Metric, escape.Markdown(r.Missing[contract.Pointer("summaries", i, "median")])))
		}
	}
	for _, k := range r.Missing.SortedKeys() {
		reason := r.Missing[k]
		switch {
		case strings.HasPrefix(k, "/requests/"):
			perRequest++
		case strings.HasPrefix(k, "/summaries/"), strings.HasPrefix(reason, "not applicable"):
		default:
			items = append(items, fmt.Sprintf("- missing `%s`: %s", escape.CodeSpan(k), escape.Markdown(reason)))
		}
	}
	return items, perRequest
}

// requestProblems lists the failed and skipped requests with their errors
// (a skipped request's kind is left out), then the sanity cases that
// completed with a wrong answer.
func requestProblems(reqs []contract.Request) []string {
	var items []string
	for _, q := range reqs {
		if q.Status == contract.Failed || q.Status == contract.Skipped {
			msg := ""
			switch {
			case q.Error != nil && q.Status == contract.Skipped:
				msg = q.Error.Message
			case q.Error != nil:
				msg = q.Error.Kind + ": " + q.Error.Message
			}
			items = append(items, fmt.Sprintf("- %s `%s`: %s", q.Status, escape.CodeSpan(q.ID), escape.Markdown(msg)))
		}
	}
	for _, q := range reqs {
		if q.Evaluation != nil && !q.Evaluation.Passed && q.Status == contract.Completed {
			items = append(items, fmt.Sprintf("- sanity `%s` answered wrongly: %s", escape.CodeSpan(q.CaseID), escape.Markdown(q.Evaluation.Reason)))
		}
	}
	return items
}
