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

// TestKeyringShowsATypedPathThatLooksLikeAToken: a path the user typed is
// the user's own text, shown as typed though a rule reads a provider's key
// in it; the API key in use stays hidden inside a typed path, and so does
// a word typed alone that a rule reads as a key, and a key a server wrote
// beside a typed path.
func TestKeyringShowsATypedPathThatLooksLikeAToken(t *testing.T) {
	t.Parallel()
	const (
		token = "ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Jf0Ks2Ma4Q"
		other = "ghp_Z1y2X3w4V5u6T7s8R9q0P1o2N3m4L5k6J7i8"
		alone = "ghp_Q9w8E7r6T5y4U3i2O1p0A9s8D7f6G5h4J3k2"
		key   = "s3cr3t-key-value"
	)
	var k Keyring
	k.Typed("bench", "report", "/tmp/x/"+token, "/tmp/"+key+"/run", alone)
	k.Add(key)
	for _, c := range []struct{ name, in, want string }{
		{"a typed path whose last name looks like a token",
			"result folder /tmp/x/" + token + ": stat /tmp/x/" + token + ": no such file or directory",
			"result folder /tmp/x/" + token + ": stat /tmp/x/" + token + ": no such file or directory"},
		{"the API key in use inside a typed path",
			"result folder /tmp/" + key + "/run: not a folder",
			"result folder /tmp/" + Secret + "/run: not a folder"},
		{"a word typed alone that a rule reads as a key",
			"--api-key-env " + alone + ": not set",
			"--api-key-env " + Secret + ": not set"},
		{"a server's key beside a typed path",
			"/tmp/x/" + token + ": the server said " + other,
			"/tmp/x/" + token + ": the server said " + Secret},
		{"the typed path's token where a server wrote it alone",
			"/tmp/x/" + token + ": the server said " + token,
			"/tmp/x/" + token + ": the server said " + Secret},
	} {
		if got := k.Redact(c.in); got != c.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
