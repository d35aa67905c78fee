package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/compare"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/report"
	"github.com/strata-bench/strata/internal/submit"
)

// TestMarkdownFromOutsideIsText: raw HTML and links from operator flags
// (the GPU, the quantization, the command, track notes) and from an engine
// (its version, an error it sent) are escaped in README.md, `compare
// --markdown` and submit's title and body, so no renderer makes markup of
// them.
func TestMarkdownFromOutsideIsText(t *testing.T) {
	t.Parallel()
	load := func(name string) *contract.Results {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", name, contract.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		var r contract.Results
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	script, link, img := "<script>alert(1)</script>", "[click](javascript:alert(1))", "![x](https://evil.example/p.png)"
	hostile := func(r *contract.Results) {
		for i := range r.Hardware.GPUs {
			r.Hardware.GPUs[i].Name = "RTX " + script
		}
		q, notes, ver := "Q4 "+link, "notes "+img+" <img src=x onerror=alert(1)>", "b1-"+script
		r.Model.Quantization, r.Configuration.TrackNotes, r.Software.EngineVersion = &q, &notes, &ver
		r.Run.Command = "strata bench run `</code>" + script + "`"
		for i := range r.Requests {
			if r.Requests[i].Error != nil {
				r.Requests[i].Error.Message = "server said " + link + " " + script
			}
		}
	}
	base, cand := load("baseline"), load("partial")
	hostile(base)
	hostile(cand)
	var readme, md strings.Builder
	if err := report.README(&readme, cand); err != nil {
		t.Fatal(err)
	}
	other := load("candidate")
	hostile(other)
	c, err := compare.New(base, other)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatalf("compare --markdown: %v", err)
	}
	raw := regexp.MustCompile(`(^|[^\\])(<script|<img|\]\(javascript:|!\[x\]\(https)`)
	for what, text := range map[string]string{"README.md": readme.String(), "compare --markdown": md.String(),
		"submit title": submit.Title(cand), "submit body": submit.Body(cand, "x")} {
		// Inside a code span text is literal: drop code spans first.
		outside := regexp.MustCompile("`[^`]*`").ReplaceAllString(text, "")
		if m := raw.FindString(outside); m != "" {
			t.Errorf("%s holds markup from outside: %q", what, m)
		}
		if !strings.Contains(text, `\<script\>`) {
			t.Errorf("%s does not show the text escaped", what)
		}
	}
}
