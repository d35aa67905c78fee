package pilot

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/jsonfmt"
	"github.com/strata-bench/strata/internal/protocol"
)

// notMeasured is how a null is written, as the report writes it.
const notMeasured = "not measured"

// maxViolations is how many of an invalid folder's violations the
// Markdown lists (the JSON form and strata bench report list them all).
const maxViolations = 10

// WriteJSON writes the report in its JSON form.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := jsonfmt.Indent(r)
	if err != nil {
		return fmt.Errorf("pilot evidence as JSON: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// WriteMarkdown writes the report as Markdown: the checklists, the
// folders' table, each folder's evidence, then the sanity outcomes and
// failures across folders. It returns the first write error, after which
// it writes nothing more.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	valid := r.valid()
	p("# Pilot evidence: %s\n\n", humanize.Count(len(r.Folders), "result folder", "result folders"))
	invalid := len(r.Invalid())
	copies := ""
	if n := len(r.Folders) - invalid - len(valid); n > 0 {
		copies = fmt.Sprintf(" (and %s of one of them, counted once)", humanize.Count(n, "copy", "copies"))
	}
	p("%d valid%s, %d not valid. Only a valid folder is evidence (each is validated as `strata bench report` does), and an item of the activation checklist that no folder shows stays open. The cases the mock server cannot show count only on a real engine.\n", len(valid), copies, invalid)
	for _, c := range r.Checklists {
		writeChecklist(p, c)
	}
	if len(r.Checklists) == 0 {
		p("\n## Activation checklist\n\nNo valid folder: every item is open.\n")
	}
	writeFolderTable(p, r.Folders)
	for _, f := range r.Folders {
		writeFolder(p, f)
	}
	if len(valid) > 0 {
		writeSanityAcross(p, r.Sanity, valid)
		writeFailuresAcross(p, r.Failures, valid)
	}
	return err
}

func md(s string) string { return escape.Markdown(s) }

func code(s string) string { return "`" + escape.CodeSpan(s) + "`" }

func writeChecklist(p func(string, ...any), c Checklist) {
	p("\n## Activation checklist: %s (%s)\n\n", code(c.ProtocolID), strings.Join(c.Folders, ", "))
	p("| Item | Shown | By |\n| --- | --- | --- |\n")
	for _, it := range c.Items {
		if !it.Shown {
			p("| %s | open | %s |\n", md(it.Text), md(it.Open))
			continue
		}
		var by []string
		for _, s := range it.By {
			by = append(by, s.Folder+": "+md(s.Evidence))
		}
		p("| %s | **shown** | %s |\n", md(it.Text), strings.Join(by, "; "))
	}
}

func writeFolderTable(p func(string, ...any), fs []Folder) {
	p("\n## Folders\n\n| # | Folder | Machine | Engine | Status | Required stages | Optional stage | Sanity |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range fs {
		if !f.Valid {
			p("| %s | %s | | | **not valid** | | | |\n", f.Label, code(f.Path))
			continue
		}
		if f.CopyOf != "" {
			p("| %s | %s | | | copy of %s, counted once | | | |\n", f.Label, code(f.Path), f.CopyOf)
			continue
		}
		e := f.Evidence
		p("| %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", f.Label, code(f.Path), md(gpus(e.Machine)), md(engineCell(e.Engine)),
			e.Status, seconds(e.RequiredDurationS), optionalCell(e), e.Sanity.Passed, e.Sanity.Total)
	}
}

func gpus(m Machine) string {
	if len(m.GPUs) == 0 {
		return "GPUs " + notMeasured
	}
	var names []string
	for _, g := range m.GPUs {
		names = append(names, g.Name)
	}
	return strings.Join(names, " + ")
}

func engineCell(e Engine) string {
	s := str(e.Version)
	if e.Dialect != "" {
		s += " (" + e.Dialect + ")"
	}
	if !e.Real {
		s += ", " + e.NotRealReason
	}
	return s
}

func optionalCell(e *Evidence) string {
	if !e.OptionalConcurrency {
		return "not selected"
	}
	return seconds(e.OptionalDurationS)
}

func str(v *string) string {
	if v == nil || *v == "" {
		return notMeasured
	}
	return *v
}

func seconds(v *float64) string {
	if v == nil {
		return notMeasured
	}
	return humanize.Seconds(*v)
}

func count(v *int64) string {
	if v == nil {
		return notMeasured
	}
	return humanize.Grouped(float64(*v), 0)
}

func writeFolder(p func(string, ...any), f Folder) {
	if !f.Valid {
		p("\n### %s %s: not valid\n\n%s\n", f.Label, code(f.Path), md(f.Error))
		if len(f.Violations) > 0 {
			p("\n")
		}
		for i, v := range f.Violations {
			if i == maxViolations {
				p("- … and %d more (`strata bench report` lists them all)\n", len(f.Violations)-maxViolations)
				break
			}
			p("- %s\n", md(v))
		}
		return
	}
	if f.CopyOf != "" {
		p("\n### %s %s: a copy of %s\n\nThe same run as %s (its run ID or its outputs.jsonl): one run is one piece of evidence, so it is counted once, as %s.\n",
			f.Label, code(f.Path), f.CopyOf, f.CopyOf, f.CopyOf)
		return
	}
	e := f.Evidence
	p("\n### %s %s\n\n", f.Label, code(f.Path))
	p("- Run %s, protocol %s, status **%s**\n", code(e.RunID), code(e.ProtocolID), e.Status)
	for _, s := range e.StatusReasons {
		p("  - %s: %s\n", s.Kind, md(s.Text))
	}
	writeMachine(p, e.Machine)
	en := e.Engine
	kind := "a real engine"
	if !en.Real {
		kind = md(en.NotRealReason)
	}
	p("- Engine: %s (%s, identified by %s): %s; server capacity %s; context %s tokens per slot\n", md(str(en.Version)), md(en.Dialect), md(en.IdentifiedBy), kind,
		slots(en.ServerCapacity), count(en.ContextTokens))
	p("- Required stages: %s; optional concurrency stage: %s\n", seconds(e.RequiredDurationS), optionalCell(e))
	p("- Template check: %s: %s\n", e.Template.State, md(e.Template.Detail))
	writeSanity(p, e.Sanity)
	writeFailures(p, e.Failures)
	p("\n| Case | Capped | Measured input tokens | %s rule |\n| --- | --- | --- | --- |\n", protocol.LengthTolerance())
	for _, c := range e.Performance {
		p("| %s | %d/%d | %s | %s |\n", c.CaseID, c.Capped, c.Requests, lengths(c.Measured), lengthRule(c))
	}
	if len(e.Energy) > 0 {
		writeEnergy(p, e.Energy)
	}
}

func writeMachine(p func(string, ...any), m Machine) {
	var gs []string
	for _, g := range m.GPUs {
		mem := notMeasured
		if g.MemoryBytes != nil {
			mem = humanize.Bytes(*g.MemoryBytes)
		}
		gs = append(gs, fmt.Sprintf("GPU %d %s (%s %s)", g.DeviceIndex, md(g.Name), mem, md(str(g.MemoryKind))))
	}
	if len(gs) == 0 {
		gs = append(gs, "GPUs "+notMeasured)
	}
	ram := notMeasured
	if m.RAMBytes != nil {
		ram = humanize.Bytes(*m.RAMBytes)
	}
	osName := notMeasured
	if m.OS != nil {
		osName = md(m.OS.Name + " " + str(m.OS.Version))
	}
	p("- Machine: %s; CPU %s; RAM %s; OS %s\n", strings.Join(gs, ", "), md(str(m.CPU)), ram, osName)
}

func slots(v *int64) string {
	if v == nil {
		return notMeasured
	}
	return humanize.Count(int(*v), "slot", "slots")
}

func writeSanity(p func(string, ...any), s Sanity) {
	c := s.Categories
	line := fmt.Sprintf("- Sanity: %d/%d (instruction %d/%d, retrieval %d/%d, tool call %d/%d)", s.Passed, s.Total,
		c.Instruction.Passed, c.Instruction.Total, c.Retrieval.Passed, c.Retrieval.Total, c.ToolCall.Passed, c.ToolCall.Total)
	// A skipped case's reason is the run's skip reason, the same for each:
	// the failures list has it once.
	var failed, skipped []string
	for _, v := range s.Cases {
		switch {
		case v.Passed:
		case v.Status == contract.Skipped:
			skipped = append(skipped, v.CaseID)
		default:
			failed = append(failed, fmt.Sprintf("%s %s (%s)", v.CaseID, v.Status, md(v.Reason)))
		}
	}
	if len(failed) > 0 {
		line += "; not passed: " + strings.Join(failed, "; ")
	}
	if len(skipped) > 0 {
		line += "; skipped: " + strings.Join(skipped, ", ")
	}
	p("%s\n", line)
}

func writeFailures(p func(string, ...any), gs []FailureGroup) {
	if len(gs) == 0 {
		p("- Failed or skipped requests: none\n")
		return
	}
	var parts []string
	for _, g := range gs {
		ids := strings.Join(g.Requests, ", ")
		if len(g.Requests) > 3 {
			ids = strings.Join(g.Requests[:3], ", ") + ", …"
		}
		parts = append(parts, fmt.Sprintf("  - %s %s: %d (%s): %s", g.Status, md(g.Kind), len(g.Requests), ids, md(g.Message)))
	}
	p("- Failed or skipped requests by kind:\n%s\n", strings.Join(parts, "\n"))
}

// lengths writes a case's measured prompt lengths, a run of equal ones
// once with its count.
func lengths(ls []Length) string {
	if len(ls) == 0 {
		return "no request"
	}
	var cells []string
	for _, l := range ls {
		cells = append(cells, count(l.InputTokens))
	}
	same := true
	for _, c := range cells[1:] {
		same = same && c == cells[0]
	}
	if same && len(cells) > 1 {
		return fmt.Sprintf("%s (×%d)", cells[0], len(cells))
	}
	return strings.Join(cells, ", ")
}

func lengthRule(c Case) string {
	switch {
	case c.TargetTokens == nil:
		return "no target (the short prompt)"
	case c.WithinRule == nil:
		return notMeasured
	}
	target := humanize.Grouped(float64(*c.TargetTokens), 0)
	var worst *Length
	for i, l := range c.Measured {
		if l.DeviationPercent != nil && (worst == nil || math.Abs(*l.DeviationPercent) > math.Abs(*worst.DeviationPercent)) {
			worst = &c.Measured[i]
		}
	}
	dev := fmt.Sprintf("%+.2f %%", *worst.DeviationPercent)
	if *c.WithinRule {
		return fmt.Sprintf("within %s of %s (largest deviation %s)", protocol.LengthTolerance(), target, dev)
	}
	return fmt.Sprintf("**outside** %s of %s: %s has %s tokens (%s)", protocol.LengthTolerance(), target, worst.RequestID, count(worst.InputTokens), dev)
}

func writeEnergy(p func(string, ...any), es []CaseEnergy) {
	p("\n| Energy | Case | Source | Joules median (min–max, n) | Decode tok/J |\n| --- | --- | --- | --- | --- |\n")
	for _, e := range es {
		j := notMeasured
		if e.MedianJ != nil && e.MinJ != nil && e.MaxJ != nil {
			j = fmt.Sprintf("%s (%s–%s, n=%d)", humanize.Number(*e.MedianJ), humanize.Number(*e.MinJ), humanize.Number(*e.MaxJ), e.N)
		} else if e.Note != "" {
			j = notMeasured + ": " + md(e.Note)
		}
		tpj := notMeasured
		if e.DecodeTokensPerJ != nil {
			tpj = humanize.Number(*e.DecodeTokensPerJ)
		}
		p("| %s | %s | %s | %s | %s |\n", md(e.Phase), md(e.CaseID), md(e.Source), j, tpj)
	}
}

// folderRow writes one row of a table with a column per valid folder:
// the lead cells, each folder's cell, the tail cell.
func folderRow(p func(string, ...any), lead []string, valid []*Folder, cell func(label string) string, tail string) {
	p("|")
	for _, l := range lead {
		p(" %s |", l)
	}
	for _, f := range valid {
		p(" %s |", cell(f.Label))
	}
	p(" %s |\n", tail)
}

// folderHeader writes a table's header row and its separator.
func folderHeader(p func(string, ...any), lead []string, valid []*Folder, tail string) {
	folderRow(p, lead, valid, func(label string) string { return label }, tail)
	p("|%s\n", strings.Repeat(" --- |", len(lead)+len(valid)+1))
}

func writeSanityAcross(p func(string, ...any), cases []SanityCase, valid []*Folder) {
	p("\n## Sanity outcomes per case\n\n")
	folderHeader(p, []string{"Case"}, valid, "Passed")
	for _, c := range cases {
		cell := map[string]string{}
		for _, o := range c.Outcomes {
			v := "fail"
			if o.Passed {
				v = "pass"
			}
			if o.Status != contract.Completed {
				v += " (" + o.Status + ")"
			}
			cell[o.Folder] = v
		}
		folderRow(p, []string{c.CaseID}, valid, func(label string) string { return cell[label] }, fmt.Sprintf("%d/%d", c.Passed, c.Of))
	}
}

func writeFailuresAcross(p func(string, ...any), fs []FailureAcross, valid []*Folder) {
	p("\n## Failed and skipped requests by kind\n\n")
	if len(fs) == 0 {
		p("None in any valid folder.\n")
		return
	}
	folderHeader(p, []string{"Status", "Kind"}, valid, "Total")
	for _, x := range fs {
		n := map[string]int{}
		for _, c := range x.Folders {
			n[c.Folder] = c.Count
		}
		folderRow(p, []string{x.Status, md(x.Kind)}, valid, func(label string) string { return fmt.Sprint(n[label]) }, fmt.Sprint(x.Count))
	}
}
