package pilot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// Checklist is the activation checklist for one protocol ID.
type Checklist struct {
	ProtocolID string `json:"protocol_id"`
	// Folders are the labels of the valid folders of this protocol.
	Folders []string `json:"folders"`
	Items   []Item   `json:"items"`
}

// Item is one item of the spec's checklist ("Before removing draft
// status"), shown by the folders in By or open.
type Item struct {
	ID string `json:"id"`
	// Text is the spec's item.
	Text  string  `json:"item"`
	Shown bool    `json:"shown"`
	By    []Shown `json:"by"`
	// FoldersCanShow is false for an item no result folder can show (it
	// is checked elsewhere); such an item always stays open here.
	FoldersCanShow bool `json:"folders_can_show"`
	// Open says why the item is open ("" when shown).
	Open string `json:"open,omitempty"`
}

// Shown is one folder's evidence for an item.
type Shown struct {
	Folder   string `json:"folder"`
	Evidence string `json:"evidence"`
}

// The checklist's item IDs (stable: the JSON form carries them).
const (
	ItemTemplate      = "template_verified"
	ItemRevisions     = "revisions_pinned"
	ItemContext       = "insufficient_context"
	ItemErrorAfter    = "error_after_first_delta"
	ItemQueueing      = "queueing_under_four_slots"
	ItemHardware      = "two_hardware_configurations"
	ItemSanityRescore = "sanity_recomputed_independently"
	ItemWebsite       = "website_checks"
)

// item is one checklist item and how a folder shows it: per folder (each
// returns its evidence, "" for none), or across folders.
type item struct {
	id, text string
	// real: only a folder of a real engine can show it.
	real   bool
	each   func(f *Folder) string
	across func(fs []*Folder) []Shown
	// outside says why folders cannot show the item (each and across nil).
	outside string
}

func items() []item {
	return []item{
		{id: ItemTemplate, real: true, each: showsTemplate,
			text: "Verify against a real engine that the shipped chat template matches the pinned upstream behavior, tool formatting included"},
		{id: ItemRevisions, each: showsRevisions,
			text: "Pin the model-card and tokenizer revisions (protocol.model_card_revision is null with a reason until then)"},
		{id: ItemContext, real: true, each: showsInsufficientContext,
			text: "Test the case the mock server cannot show: insufficient context"},
		{id: ItemErrorAfter, real: true, each: showsErrorAfterFirstDelta,
			text: "Test the case the mock server cannot show: an error after a first delta on a real engine"},
		{id: ItemQueueing, real: true, each: showsQueueing,
			text: "Test the case the mock server cannot show: optional concurrency with queueing on a server that has fewer than four slots"},
		{id: ItemHardware, across: showsTwoHardware,
			text: "Run a measured pilot on at least two supported hardware configurations, including a slower system"},
		{id: ItemSanityRescore, outside: "validation re-scores every verdict from outputs.jsonl with strata's own scorer; an independent recomputation is not something a result folder can show",
			text: "Recompute the sanity scores independently from the saved final outputs"},
		{id: ItemWebsite, outside: "checked in the website that reads the results, not in a result folder",
			text: "Check draft/nonconforming exclusion and changed artifacts after review in the website that reads the results"},
	}
}

// checklists evaluates the checklist once per protocol ID, in the order
// the protocols first appear.
func checklists(folders []*Folder) []Checklist {
	out := []Checklist{}
	index := map[string]int{}
	var groups [][]*Folder
	for _, f := range folders {
		id := f.Evidence.ProtocolID
		i, ok := index[id]
		if !ok {
			i = len(groups)
			index[id] = i
			groups = append(groups, nil)
			out = append(out, Checklist{ProtocolID: id})
		}
		groups[i] = append(groups[i], f)
		out[i].Folders = append(out[i].Folders, f.Label)
	}
	for i, g := range groups {
		for _, it := range items() {
			out[i].Items = append(out[i].Items, it.evaluate(g))
		}
	}
	return out
}

func (it item) evaluate(fs []*Folder) Item {
	x := Item{ID: it.id, Text: it.text, By: []Shown{}, FoldersCanShow: it.outside == ""}
	switch {
	case it.outside != "":
		x.Open = it.outside
		return x
	case it.across != nil:
		x.By = it.across(fs)
	default:
		for _, f := range fs {
			if it.real && !f.Evidence.Engine.Real {
				continue
			}
			if ev := it.each(f); ev != "" {
				x.By = append(x.By, Shown{Folder: f.Label, Evidence: ev})
			}
		}
	}
	x.Shown = len(x.By) > 0
	if !x.Shown {
		x.Open = "no valid folder shows it"
		if it.real {
			x.Open = "no valid folder of a real engine shows it"
		}
	}
	return x
}

func showsTemplate(f *Folder) string {
	if t := f.Evidence.Template; t.State == TemplateVerified {
		return t.Detail
	}
	return ""
}

func showsRevisions(f *Folder) string {
	r := f.results
	if r.Protocol.ModelCardRevision == nil || r.Model.TokenizerRevision == nil {
		return ""
	}
	return fmt.Sprintf("model card revision %s, tokenizer revision %s", *r.Protocol.ModelCardRevision, *r.Model.TokenizerRevision)
}

// showsInsufficientContext finds the requests whose prompt is longer than
// the per-slot context (the bundle's frozen count, which the engine's own
// count matches in a valid folder) and that failed, and those whose prompt
// and cap do not fit and that stopped early when the context filled.
func showsInsufficientContext(f *Folder) string {
	r, b := f.results, f.bundle
	if r.Configuration.ContextTokens == nil || b == nil {
		return ""
	}
	ctx := int(*r.Configuration.ContextTokens)
	var tooLong, filled []string
	kinds := map[string]bool{}
	for _, q := range r.Requests {
		fx, err := b.Fixture(q.ID)
		if err != nil {
			continue
		}
		switch {
		case fx.InputTokens > ctx && q.Status == contract.Failed && q.Error != nil:
			tooLong = append(tooLong, q.ID)
			kinds[q.Error.Kind] = true
		case fx.InputTokens+fx.MaxTokens > ctx && q.Status == contract.Truncated && q.Tokens.OutputTokens != nil && *q.Tokens.OutputTokens < int64(q.MaxOutputTokens):
			filled = append(filled, q.ID)
		}
	}
	var parts []string
	if len(tooLong) > 0 {
		parts = append(parts, fmt.Sprintf("%s with a longer prompt failed (%s; first %s)", humanize.Count(len(tooLong), "request", "requests"), strings.Join(sortedKeys(kinds), ", "), tooLong[0]))
	}
	if len(filled) > 0 {
		parts = append(parts, fmt.Sprintf("%s stopped below the cap when the context filled (first %s)", humanize.Count(len(filled), "request", "requests"), filled[0]))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("per-slot context %s tokens: %s", humanize.Grouped(float64(ctx), 0), strings.Join(parts, "; "))
}

// showsErrorAfterFirstDelta finds a request that failed after a first
// nonempty delta had arrived; an interruption by the user is the run's own
// stop, not an engine's error.
func showsErrorAfterFirstDelta(f *Folder) string {
	var hits []string
	for _, q := range f.results.Requests {
		if q.Status == contract.Failed && q.FirstDeltaKind != nil && q.Error != nil && q.Error.Kind != record.ErrCancelled {
			hits = append(hits, fmt.Sprintf("%s failed (%s) after a first %s delta", q.ID, q.Error.Kind, *q.FirstDeltaKind))
		}
	}
	return strings.Join(hits, "; ")
}

// showsQueueing finds the optional stage run on a server of fewer than
// four slots, with at least one round whose four requests were all
// dispatched.
func showsQueueing(f *Folder) string {
	r := f.results
	slots := r.Configuration.ServerCapacity
	if !r.Run.OptionalConcurrency || slots == nil || !protocol.Queues(*slots) {
		return ""
	}
	rounds, completed, failed := 0, 0, 0
	for _, rd := range r.ConcurrencyRounds {
		dispatched := 0
		for _, q := range r.Requests {
			if q.Round != nil && *q.Round == rd.Round && q.Phase == string(protocol.PhaseConcurrency) && q.Status != contract.Skipped {
				dispatched++
				switch q.Status {
				case contract.Completed, contract.Truncated:
					completed++
				case contract.Failed:
					failed++
				}
			}
		}
		if dispatched == protocol.ConcurrencyClients {
			rounds++
		}
	}
	if rounds == 0 {
		return ""
	}
	return fmt.Sprintf("server capacity %s: %s of %d requests released together (%d completed or capped, %d failed)",
		humanize.Count(int(*slots), "slot", "slots"), humanize.Count(rounds, "round", "rounds"), protocol.ConcurrencyClients, completed, failed)
}

// showsTwoHardware takes the complete runs on a real engine with a
// measured duration, one hardware configuration each (GPUs, CPU, RAM):
// shown when there are two or more configurations and their durations
// differ, the longest marked slower. Everyone runs the same work, so the
// required duration compares directly.
func showsTwoHardware(fs []*Folder) []Shown {
	type config struct {
		key    string
		folder *Folder
	}
	var configs []config
	seen := map[string]bool{}
	for _, f := range fs {
		e := f.Evidence
		if e.Status != contract.StatusComplete || !e.Engine.Real || e.RequiredDurationS == nil {
			continue
		}
		k := hardwareKey(e.Machine)
		if seen[k] {
			continue
		}
		seen[k] = true
		configs = append(configs, config{k, f})
	}
	if len(configs) < 2 {
		return []Shown{}
	}
	slow, fast := configs[0].folder, configs[0].folder
	for _, c := range configs[1:] {
		if *c.folder.Evidence.RequiredDurationS > *slow.Evidence.RequiredDurationS {
			slow = c.folder
		}
		if *c.folder.Evidence.RequiredDurationS < *fast.Evidence.RequiredDurationS {
			fast = c.folder
		}
	}
	if slow == fast || *slow.Evidence.RequiredDurationS == *fast.Evidence.RequiredDurationS {
		return []Shown{}
	}
	out := []Shown{}
	for _, c := range configs {
		ev := fmt.Sprintf("%s: required stages %s", c.key, humanize.Seconds(*c.folder.Evidence.RequiredDurationS))
		if c.folder == slow {
			ev += " (the slower system)"
		}
		out = append(out, Shown{Folder: c.folder.Label, Evidence: ev})
	}
	return out
}

// hardwareKey names a hardware configuration: its GPUs with their memory,
// its CPU and RAM.
func hardwareKey(m Machine) string {
	var parts []string
	for _, g := range m.GPUs {
		p := g.Name
		if g.MemoryBytes != nil {
			p += " " + humanize.Bytes(*g.MemoryBytes)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = append(parts, "no GPU recorded")
	}
	if m.CPU != nil {
		parts = append(parts, *m.CPU)
	}
	if m.RAMBytes != nil {
		parts = append(parts, humanize.Bytes(*m.RAMBytes)+" RAM")
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
