package escape

import (
	"os"
	"os/exec"
	"testing"
)

func TestLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"plain text – ünïcode 中文", "plain text – ünïcode 中文"},
		{"\x1b[2J\x1b]0;pwned\x07title", `\u001b[2J\u001b]0;pwned\u0007title`},
		{"line\r\nnext\tcol", `line\r\nnext\tcol`},
		{"run-\u202eevil", `run-\u202eevil`},
		{"bad \xff\xfe byte", `bad \xff\xfe byte`},
		{"\u0085 next line (C1)", `\u0085 next line (C1)`},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, code string }{
		{"RTX 3060", "RTX 3060", "RTX 3060"},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`, "<script>alert(1)</script>"},
		{"[x](javascript:alert(1))", `\[x\](javascript:alert(1))`, "[x](javascript:alert(1))"},
		{"![img](http://x/y.png)", `!\[img\](http://x/y.png)`, "![img](http://x/y.png)"},
		{"Q4_K_M | `rm -rf` *x*", "Q4_K_M \\| \\`rm -rf\\` \\*x\\*", `Q4_K_M \| 'rm -rf' *x*`},
		{"a\\b <https://x> \\*", `a\b \<https://x\> \\\*`, `a\b <https://x> \*`},
		{"\x1b[2Jx\n```", "\\u001b\\[2Jx\\n\\`\\`\\`", `\u001b[2Jx\n'''`},
	} {
		if got := Markdown(c.in); got != c.want {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := CodeSpan(c.in); got != c.code {
			t.Errorf("CodeSpan(%q) = %q, want %q", c.in, got, c.code)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"<p>\n\tplain – ü 中</p>\n", "<p>\n\tplain – ü 中</p>\n"},
		{"run-\u202eevil\n\u0085 \x1b[2J \r \xff", "run-\\u202eevil\n\\u0085 \\u001b[2J \\r \\xff"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestShellWord: each value is one line of plain text that a shell gives
// back byte for byte (checked with bash where there is one).
func TestShellWord(t *testing.T) {
	t.Parallel()
	bash := unicodeBash()
	for _, c := range []struct{ in, want string }{
		{"IQ3_XXS", "IQ3_XXS"},
		{"", "''"},
		{"two words", "'two words'"},
		{"a;b&c|d>e*", "'a;b&c|d>e*'"},
		{`it's $HOME \ "x"`, `'it'\''s $HOME \ "x"'`},
		{"line one\nline two", `$'line one\nline two'`},
		{"crlf\r\n\ttab", `$'crlf\r\n\ttab'`},
		{"\x1b]0;pwned\x07 it's \\", `$'\u001b]0;pwned\u0007 it\'s \\'`},
		{"model\u202e.gguf", `$'model\u202e.gguf'`},
		{"tag \U000e0001", `$'tag \U000e0001'`},
		{"bad \xff\xfe byte", `$'bad \xff\xfe byte'`},
		{"\u202eabcdef", `$'\u202eabcdef'`},
	} {
		got := ShellWord(c.in)
		if got != c.want {
			t.Errorf("ShellWord(%q) = %q, want %q", c.in, got, c.want)
		}
		if bash == "" {
			continue
		}
		out, err := bashPrint(bash, got)
		if err != nil || string(out) != c.in {
			t.Errorf("bash gives %q back for %s (%v), want %q", out, got, err, c.in)
		}
	}
}

// unicodeBash is a bash that reads $'\u00e9' as é ("" when there is none:
// bash before 4.2 does not).
func unicodeBash() string {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return ""
	}
	if out, err := bashPrint(bash, `$'\u00e9'`); err != nil || string(out) != "é" {
		return ""
	}
	return bash
}

// bashPrint is what bash prints of the word, in a UTF-8 locale.
func bashPrint(bash, word string) ([]byte, error) {
	cmd := exec.Command(bash, "-c", "printf %s "+word)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	return cmd.Output()
}
