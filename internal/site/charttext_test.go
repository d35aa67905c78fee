package site_test

import (
	"context"
	"strings"
	"testing"
)

// checkChartText: every chart's text renders at 10 CSS px or more, as
// the browser lays it out (its font size times the SVG's scale on the
// page), and a compare page has charts to measure.
func checkChartText(t *testing.T, ctx context.Context, p string, w int64) {
	t.Helper()
	got := js[struct {
		Texts int
		Small []string
	}](t, ctx, `(() => {
		const all = [...document.querySelectorAll('.chart svg text')].map(e => {
			const m = e.getScreenCTM();
			return [parseFloat(getComputedStyle(e).fontSize) * Math.min(Math.abs(m.a), Math.abs(m.d)), e.textContent];
		});
		return { Texts: all.length, Small: all.filter(([px]) => px < 10).map(([px, s]) => px.toFixed(1) + ' px: ' + s.slice(0, 40)) };
	})()`)
	if strings.HasPrefix(p, "compare/") && got.Texts == 0 {
		t.Errorf("%s at %d px: no chart text to measure", p, w)
	}
	if small := got.Small; len(small) > 0 {
		if len(small) > 5 {
			small = small[:5]
		}
		t.Errorf("%s at %d px: chart text under 10 px (%d of %d texts): %q", p, w, len(got.Small), got.Texts, small)
	}
}
