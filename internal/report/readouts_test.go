package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
)

func readme(t *testing.T, r *contract.Results) string {
	t.Helper()
	var b strings.Builder
	if err := README(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func baseline(t *testing.T) *contract.Results {
	t.Helper()
	return read(t, filepath.Join("..", "..", "testdata", "results", "baseline"))
}

// TestReadmeWritesWhatTheChartsWrite: each cell of the performance table
// and of the concurrency stage's per-request table is what the charts
// write for it (humanize.Readout), and what the charts leave out the
// table leaves out in the same words (humanize.LeftOut).
func TestReadmeWritesWhatTheChartsWrite(t *testing.T) {
	t.Parallel()
	r := baseline(t)
	got := readme(t, r)
	for _, k := range charts.Cases(r) {
		row := "| " + k.ID + " |"
		line := ""
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, row) {
				line = l
				break
			}
		}
		if line == "" {
			t.Errorf("no row for %s", k.Label)
			continue
		}
		for _, m := range charts.Metrics() {
			want := humanize.Readout(r.Summary(k.Phase, k.ID, m.Metric))
			if out := humanize.LeftOut(k.ID, m.Metric); out != "" {
				want = out
			}
			if !strings.Contains(line, "| "+want+" |") {
				t.Errorf("%s %s: %q lacks the charts' %q", k.Label, m.Metric, line, want)
			}
		}
	}
}

// TestCappedSentenceIsTrue: the sentence under the performance table says
// how many capped requests had begun their answer before the cap (their
// first-answer times are in the table) and how many had not, as the
// requests show.
func TestCappedSentenceIsTrue(t *testing.T) {
	t.Parallel()
	s := 1.5
	for _, c := range []struct {
		name               string
		capped, withAnswer int
		want               string
	}{
		{"none capped", 0, 0, "No request reached the cap here."},
		{"all still reasoning", 3, 0, "Here 3 requests reached the cap: 0 had begun the answer before it (a first-answer time in the table), 3 had not (no first-answer time)."},
		{"some answering", 3, 2, "Here 3 requests reached the cap: 2 had begun the answer before it (a first-answer time in the table), 1 had not (no first-answer time)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := baseline(t)
			n := 0
			for i := range r.Requests {
				q := &r.Requests[i]
				if q.Phase != string(protocol.PhasePerformance) {
					continue
				}
				q.Status, q.Timings.FirstAnswerS = contract.Completed, &s
				if n < c.capped {
					q.Status = contract.Truncated
					if n >= c.withAnswer {
						q.Timings.FirstAnswerS = nil
					}
				}
				n++
			}
			got := readme(t, r)
			if !strings.Contains(got, c.want) {
				t.Errorf("the README lacks %q:\n%s", c.want, section(got, "## Performance"))
			}
			if c.withAnswer > 0 && strings.Contains(got, "they have no first-answer time") {
				t.Errorf("the README says capped requests have no first-answer time, beside %d that have one", c.withAnswer)
			}
		})
	}
}

// TestReadmeShowsItsCharts: a folder whose results.json lists its charts
// shows each as an image with a relative link (a pull request on GitHub
// shows them too), in Metrics order; one that lists none has no Charts
// section, and a listed file that is not a chart is never an image.
func TestReadmeShowsItsCharts(t *testing.T) {
	t.Parallel()
	r := baseline(t)
	var others []contract.Artifact
	for _, a := range r.Artifacts {
		if !strings.HasPrefix(a.Path, "chart-") {
			others = append(others, a)
		}
	}
	r.Artifacts = others
	if got := readme(t, r); strings.Contains(got, "## Charts") || strings.Contains(got, "![") {
		t.Errorf("a folder without charts has a Charts section:\n%s", section(got, "## Charts"))
	}
	for _, m := range charts.Metrics() {
		r.Artifacts = append(r.Artifacts, contract.Artifact{Kind: contract.ArtifactProvenance, Path: charts.FileName(m.Metric), SHA256: strings.Repeat("ab", 32)})
	}
	r.Artifacts = append(r.Artifacts, contract.Artifact{Kind: contract.ArtifactProvenance, Path: "javascript:alert(1).svg", SHA256: strings.Repeat("ab", 32)})
	got := section(readme(t, r), "## Charts")
	want := "![Prompt rate (tok/s)](chart-prompt_tps.svg)\n![Decode rate (tok/s)](chart-decode_tps.svg)\n![Time to first token (s)](chart-ttft_s.svg)\n"
	if !strings.Contains(got, want) {
		t.Errorf("the Charts section\n%s\nlacks\n%s", got, want)
	}
	if strings.Count(got, "![") != 3 {
		t.Errorf("%d images, want the 3 charts:\n%s", strings.Count(got, "!["), got)
	}
}

// section is the part of a README from the heading on to the next one of
// its level.
func section(readme, heading string) string {
	i := strings.Index(readme, heading+"\n")
	if i < 0 {
		return ""
	}
	rest := readme[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return heading + rest
}
