package cli

//go:generate go test -run ^TestCommandReference$ -update .

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/mattn/go-runewidth"
	"github.com/spf13/cobra"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/liveline"
)

// exitCodes says what each exit code means; every command uses them.
func exitCodes() string {
	return fmt.Sprintf("Exit codes: %d done; %d a check failed or the work could not be done (the\n"+
		"message names the file, field or flag); %d bad usage; %d a signal ended the\n"+
		"work early (what was done is written).",
		exitcode.OK, exitcode.Failed, exitcode.Usage, exitcode.Interrupted)
}

// helpWidth is the width, in terminal columns, that every line of a
// command's help fits: a standard terminal's, wherever the help is read.
const helpWidth = 80

// setHelp gives root and every command below it help and usage in cobra's
// layout with every line fitted to helpWidth: help texts are written for
// people and change often, so the fitting is done here, once, rather than
// by hand in each text.
func setHelp(root *cobra.Command) {
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		// cobra's help func returns nothing: a failed write to the
		// command's own output has no one else to tell.
		_, _ = io.WriteString(c.OutOrStdout(), helpText(c))
	})
	root.SetUsageFunc(func(c *cobra.Command) error {
		_, err := io.WriteString(c.OutOrStderr(), usageText(c))
		return err
	})
}

// helpText is a command's help page: its description, then its usage.
func helpText(c *cobra.Command) string {
	var b strings.Builder
	if text := strings.TrimRightFunc(cmp.Or(c.Long, c.Short), unicode.IsSpace); text != "" {
		b.WriteString(strings.Join(fitProse(strings.Split(text, "\n")), "\n"))
		b.WriteString("\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		b.WriteString(usageText(c))
	}
	return b.String()
}

// usageText is cobra's usage section (usage lines, examples, commands,
// flags), each line fitted to helpWidth.
func usageText(c *cobra.Command) string {
	var b strings.Builder
	add := func(lines []string) {
		for _, l := range lines {
			b.WriteString("\n" + l)
		}
	}
	b.WriteString("Usage:")
	// A long usage line continues under its first argument.
	if c.Runnable() {
		add(liveline.WrapIndent("  "+c.UseLine(), helpWidth, len(c.CommandPath())+3))
	}
	if c.HasAvailableSubCommands() {
		add(liveline.WrapIndent("  "+c.CommandPath()+" [command]", helpWidth, len(c.CommandPath())+3))
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:")
		add(fitLine("  " + c.NameAndAliases()))
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:")
		for _, l := range strings.Split(c.Example, "\n") {
			add(fitCommand(l))
		}
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				add(fitLine("  " + sub.Name() + strings.Repeat(" ", max(sub.NamePadding()-len(sub.Name()), 0)) + " " + sub.Short))
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		b.WriteString("\n\nFlags:")
		add(fitLines(c.LocalFlags().FlagUsages()))
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString("\n\nGlobal Flags:")
		add(fitLines(c.InheritedFlags().FlagUsages()))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n")
		add(fitProse([]string{`Use "` + c.CommandPath() + ` [command] --help" for more about a command.`}))
	}
	b.WriteString("\n")
	return b.String()
}

// fitLines fits each line of text (without its trailing newline).
func fitLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRightFunc(text, unicode.IsSpace), "\n") {
		out = append(out, fitLine(l)...)
	}
	return out
}

// fitProse fits a description: a paragraph (lines from the first column,
// not list items) with a line too wide is filled again as a whole; one
// that fits keeps its lines as written; any other line is fitted alone.
func fitProse(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && isProse(lines[j]) {
			j++
		}
		if j == i {
			out = append(out, fitLine(lines[i])...)
			i++
			continue
		}
		para := lines[i:j]
		if fits(para) {
			out = append(out, para...)
		} else {
			out = append(out, liveline.WrapIndent(strings.Join(para, " "), helpWidth, 0)...)
		}
		i = j
	}
	return out
}

// isProse says whether a line belongs to a paragraph of running text.
func isProse(line string) bool {
	return line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") &&
		!strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "* ")
}

func fits(lines []string) bool {
	for _, l := range lines {
		if runewidth.StringWidth(l) > helpWidth {
			return false
		}
	}
	return true
}

// fitLine wraps one line. A line in two columns (a flag or a command and
// its description, after a run of two or more spaces) continues under
// its second column; a list item under its text; any other line under
// its own start.
func fitLine(line string) []string {
	if fits([]string{line}) {
		return []string{line}
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if at, col := secondColumn(line, lead); at > 0 {
		lines := liveline.WrapIndent(strings.Repeat(" ", col)+line[at:], helpWidth, col)
		lines[0] = line[:at] + lines[0][col:]
		return lines
	}
	hang := lead
	if strings.HasPrefix(line[lead:], "- ") || strings.HasPrefix(line[lead:], "* ") {
		hang += 2
	}
	return liveline.WrapIndent(line, helpWidth, hang)
}

// secondColumn is where a line's second column starts (its byte offset
// and its column), or 0 when it has none within the first half of the
// width.
func secondColumn(line string, lead int) (at, col int) {
	gap := strings.Index(line[lead:], "  ")
	if gap <= 0 {
		return 0, 0
	}
	at = lead + gap
	for at < len(line) && line[at] == ' ' {
		at++
	}
	col = runewidth.StringWidth(line[:at])
	if at == len(line) || col > helpWidth/2 {
		return 0, 0
	}
	return at, col
}

// fitCommand wraps an example's command line as a shell would read it: at
// spaces outside quotes, each line but the last ending with " \", the
// continuation indented two spaces more.
func fitCommand(line string) []string {
	if fits([]string{line}) {
		return []string{line}
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	var out []string
	cur := line[:lead]
	for i, word := range shellWords(line[lead:]) {
		if i > 0 && runewidth.StringWidth(cur+" "+word+` \`) > helpWidth {
			out = append(out, cur+` \`)
			cur = strings.Repeat(" ", lead+2) + word
			continue
		}
		if i > 0 {
			cur += " "
		}
		cur += word
	}
	return append(out, cur)
}

// shellWords splits a command line at the spaces outside quotes.
func shellWords(s string) []string {
	var words []string
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ':
			if i > start {
				words = append(words, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		words = append(words, s[start:])
	}
	return words
}
