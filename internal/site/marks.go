package site

import (
	"fmt"
	"html/template"
	"regexp"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
)

// What a page marks so that it reads on a phone as on a laptop: IDs kept
// whole, the server's capacity beside every concurrency figure, and a
// repository's demonstration data as such.

// siteFuncs are the template functions that depend on the site: local,
// whether it is a local view (the marking, and the words "approved");
// demo, the file that marks it as demonstration data ("" for any other
// site); and ids, which knows the protocol IDs its text may name.
func siteFuncs(s *Site) template.FuncMap {
	seen := map[string]bool{"": true}
	var protocols []string
	for _, r := range s.runs() {
		var ids []string
		if r.Results != nil {
			ids = append(ids, r.Results.Protocol.ID)
		}
		if r.Entry != nil {
			ids = append(ids, r.Entry.ProtocolID)
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				protocols = append(protocols, id)
			}
		}
	}
	demo := ""
	if s.Demo {
		demo = DemoMarker
	}
	return template.FuncMap{"local": func() bool { return s.Local }, "demo": func() string { return demo }, "ids": idMarker(protocols)}
}

// idPattern is what a page keeps on one line wherever it stands in a
// sentence: a hash or a commit (12 or more hexadecimal digits) and a run
// ID as strata writes it.
const idPattern = `\b(?:[0-9a-f]{12,}|[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6})\b`

// idMarker is the template function "ids": text, escaped, with every ID in
// it (idPattern, and each of protocols) in a <span class="id">, which the
// stylesheet never breaks across lines. A submission's text around an ID
// still wraps anywhere, so that nothing makes a page scroll sideways.
func idMarker(protocols []string) func(string) template.HTML {
	sort.Slice(protocols, func(i, j int) bool {
		// The longer first: an ID that contains another is marked whole.
		if len(protocols[i]) != len(protocols[j]) {
			return len(protocols[i]) > len(protocols[j])
		}
		return protocols[i] < protocols[j]
	})
	alts := make([]string, 0, len(protocols)+1)
	for _, p := range protocols {
		alts = append(alts, regexp.QuoteMeta(p))
	}
	re := regexp.MustCompile(strings.Join(append(alts, idPattern), "|"))
	return func(text string) template.HTML {
		var b strings.Builder
		last := 0
		for _, m := range re.FindAllStringIndex(text, -1) {
			b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
			b.WriteString(`<span class="id">` + template.HTMLEscapeString(text[m[0]:m[1]]) + `</span>`)
			last = m[1]
		}
		b.WriteString(template.HTMLEscapeString(text[last:]))
		// Every piece of it is escaped above.
		return template.HTML(b.String())
	}
}

// capacityOf is a run's server capacity as a page writes it beside each
// concurrency figure: four clients released together on fewer than four
// slots queue, and that is never four-way parallel decoding (the spec);
// or why the capacity is not known.
func capacityOf(r *contract.Results) string {
	n := r.Configuration.ServerCapacity
	switch {
	case n == nil:
		why := r.Missing[contract.PtrConfigurationServerCapacity]
		if why == "" {
			why = "not recorded"
		}
		return "server capacity not known (" + why + ")"
	case protocol.Queues(*n):
		return fmt.Sprintf("server capacity %s, so the %d requests queue", humanize.Count(int(*n), "slot", "slots"), protocol.ConcurrencyClients)
	}
	return "server capacity " + humanize.Count(int(*n), "slot", "slots")
}

// caseCapacity is capacityOf(r) for a case of the concurrency phase, and
// "" for any other.
func caseCapacity(r *contract.Results, phase string) string {
	if concurrencyOf(phase) == 1 {
		return ""
	}
	return capacityOf(r)
}
