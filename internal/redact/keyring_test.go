package redact

import (
	"strings"
	"testing"
)

func TestKeyring(t *testing.T) {
	t.Parallel()
	var k Keyring
	k.Add("s3cr3t-key-value")
	for _, c := range []struct{ in, want string }{
		{"HTTP 400: bad key s3cr3t-key-value", "HTTP 400: bad key " + Secret},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer " + Secret},
		{"the result is in /home/alice/bench-results/x", "the result is in /home/alice/bench-results/x"}, // the user's own terminal
		{"hf_abcdefghijklmnopqrstuvwxyz0123", Secret},
	} {
		if got := k.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if strings.Contains(k.Redact("x"), Secret) {
		t.Error("a harmless string was changed")
	}
}

// TestKeyringShowsWhatWasTyped: the words the user typed are shown where a
// rule would read them, or a word after them, as a secret setting; what a
// server or file says stays redacted, also beside a typed word, and a
// typed word that is a secret by itself or a bare setting name does not
// open a way around the rules.
func TestKeyringShowsWhatWasTyped(t *testing.T) {
	t.Parallel()
	var k Keyring
	k.Typed("bench", "run", "--results-dir", "/etc/passwd", "password", "--api-key", "http://u:hunter22@127.0.0.1:8080/v1", "s3cr3t-key-value")
	k.Add("s3cr3t-key-value")
	for _, c := range []struct{ name, in, want string }{
		{"a typed path as a setting's value",
			"--results-dir /etc/passwd: /etc/passwd is a file, not a folder for results",
			"--results-dir /etc/passwd: /etc/passwd is a file, not a folder for results"},
		{"a word after a typed path that ends in a setting's name",
			"result folder /etc/passwd: not a folder",
			"result folder /etc/passwd: not a folder"},
		{"a typed path in quotes",
			`open "/etc/passwd": passwd="/etc/passwd"`,
			`open "/etc/passwd": passwd="/etc/passwd"`},
		{"a server's secret beside a typed path",
			"/etc/passwd: engine said password=hunter2x",
			"/etc/passwd: engine said password=" + Secret},
		{"a typed bare setting name is no way around its rule",
			"password: hunter2x",
			"password: " + Secret},
		{"a typed flag that names a key is no way around its rule",
			"--api-key abcdefgh",
			"--api-key " + Secret},
		{"a server's secret that holds a typed path",
			"token=abcdefgh/etc/passwd",
			"token=" + Secret},
		{"a server's secret around a typed path",
			"password: ab:/etc/passwd:cd",
			"password: " + Secret},
		{"a typed URL with a password in it",
			"--url http://u:hunter22@127.0.0.1:8080/v1: ends in /v1",
			"--url http://" + Secret + "@127.0.0.1:8080/v1: ends in /v1"},
		{"a typed key",
			"bad key s3cr3t-key-value",
			"bad key " + Secret},
		{"a server's bearer token",
			"run failed: Authorization: Bearer abcdefghijklmnop",
			"run failed: Authorization: Bearer " + Secret},
		{"text that holds the mark strata uses",
			"<typed-0> password: /etc/passwd",
			"<typed-0> password: " + Secret},
	} {
		if got := k.Redact(c.in); got != c.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
