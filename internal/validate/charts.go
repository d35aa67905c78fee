package validate

import (
	"bytes"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/strictjson"
)

// checkCharts draws the charts again from results.json alone and holds
// each chart the folder lists to them byte for byte: a chart is derived,
// like the README, and one byte changed is a chart that no longer shows
// the numbers beside it. A folder need not hold its charts (one written
// before they were); one it lists is a provenance artifact.
func (c *checker) checkCharts() {
	want := map[string][]byte{}
	files, err := charts.Files(c.res)
	if err != nil {
		c.add("/artifacts", "the charts cannot be drawn from results.json: %v", err)
		return
	}
	for _, f := range files {
		want[f.Name] = f.Data
	}
	for i, a := range c.res.Artifacts {
		drawn, isChart := want[a.Path]
		if !isChart {
			continue
		}
		ptr := contract.Pointer("artifacts", i)
		if a.Kind != contract.ArtifactProvenance {
			c.add(ptr+"/kind", "%s is a chart, listed as %s: a chart is a provenance artifact", a.Path, a.Kind)
		}
		data, err := strictjson.ReadFile(c.fsys, a.Path, contract.MaxArtifactBytes)
		if err != nil {
			continue // checkArtifacts names a listed file it cannot read
		}
		if !bytes.Equal(data, drawn) {
			at := firstDiff(data, drawn)
			c.add(ptr, "%s is not the chart results.json gives: it differs from byte %d on (%q, want %q; a chart is drawn from results.json alone)", a.Path, at, around(data, at), around(drawn, at))
		}
	}
}
