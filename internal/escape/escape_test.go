package escape

import "testing"

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
