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
