package redact

import (
	"regexp"
	"strings"
)

// rule is one of strata's own patterns: what it replaces (with its
// placeholder and, for the submit scan, plain words), and which group of
// the match is the private part (0: all of it). keep, when set, lets a
// match stand (a value that is already a placeholder, a number where only a
// word is a secret).
type rule struct {
	re    *regexp.Regexp
	to    string
	what  string
	group int
	keep  func(private string) bool
	// need lists literals (lower case) of which the text must hold one for
	// the rule to run: most text holds none, and the regexp is skipped.
	need []string
}

// applies reports whether the rule's literals are in low (the text, lower
// case).
func (ru rule) applies(low string) bool {
	if len(ru.need) == 0 {
		return true
	}
	for _, n := range ru.need {
		if strings.Contains(low, n) {
			return true
		}
	}
	return false
}

// isPlaceholder is true for text the redactor itself wrote: redacting twice
// changes nothing, and the submit scan never flags its own placeholders.
func isPlaceholder(s string) bool {
	s = strings.Trim(s, `"'`)
	switch s {
	case Home, User, Host, Path, PrivateIP, MAC, Email, Secret:
		return true
	}
	return false
}

func hasLetter(s string) bool {
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// secretRules come first: a key may contain anything the later rules look
// for.
var secretRules = []rule{
	// A private key block, also one cut short (a log cut at its limit).
	{re: regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\z)`),
		to: Secret, what: "a private key block", need: []string{"-----begin"}},
	// Credentials in a URL, whatever the host (an IP, loopback or a name).
	{re: regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://([^\s/?#@:"'<>\\]+:[^\s/?#@"'<>\\]+)@`),
		to: Secret, what: "a user name and password in a URL", group: 1, keep: isPlaceholder, need: []string{"://"}},
	// A bearer token of any length.
	{re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]+)`),
		to: Secret, what: "a bearer token", group: 1, keep: isPlaceholder, need: []string{"bearer"}},
	// AWS secret access keys are 40 characters of base64 that look like
	// anything else without their variable's name.
	{re: regexp.MustCompile(`(?i)\baws_?secret(?:_?access)?(?:_?key)?\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`),
		to: Secret, what: "an AWS secret access key", group: 1, need: []string{"aws"}},
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), to: Secret, what: "an AWS access key ID", need: []string{"akia", "asia"}},
	{re: regexp.MustCompile(`\b(?:sk|pk|rk)-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}\b`), to: Secret, what: "an API key (sk-/pk-/rk- form)", need: []string{"sk-", "pk-", "rk-"}},
	{re: regexp.MustCompile(`\bglpat-[0-9A-Za-z_-]{20,}\b`), to: Secret, what: "a GitLab personal access token", need: []string{"glpat-"}},
	{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), to: Secret, what: "a Google API key", need: []string{"aiza"}},
	{re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{20,}\b`), to: Secret, what: "a Hugging Face token", need: []string{"hf_"}},
	// Values of settings whose name says they are secret, as key=value,
	// key: value, --key value or --key=value.
	{re: regexp.MustCompile(`(?i)(?:\b|--)(?:api[_-]?key|apikey|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|secret|password|passwd|pwd|hf[_-]?token|hft)["']?(?:\s*[:=]\s*|\s+)["']?([^\s"',;&<>]{3,})`),
		to: Secret, what: "the value of a secret setting (key, token, password)", group: 1,
		keep: func(v string) bool { return isPlaceholder(v) || strings.HasPrefix(v, "-") || v == "file" || v == "env" },
		need: []string{"key", "token", "secret", "passw", "pwd", "hft"}},
	// A bare "token" is also how engines log vocabulary ids ("EOG token =
	// 151645 '<|im_end|>'"): only a value of key characters with a letter in
	// it is a secret there.
	{re: regexp.MustCompile(`(?i)\btoken["']?\s*[:=]\s*["']?([A-Za-z0-9._~+/=-]{8,})`),
		to: Secret, what: "the value of a token setting", group: 1,
		keep: func(v string) bool { return !hasLetter(v) || isPlaceholder(v) }, need: []string{"token"}},
}

// pathRules find home folders and other machine paths.
var pathRules = []rule{
	{re: regexp.MustCompile(`(?i)/home/[^/\s"'<>:;,\\]+`), to: Home, what: "a home folder", need: []string{"/home/"}},
	{re: regexp.MustCompile(`/Users/[^/\s"'<>:;,\\]+`), to: Home, what: "a home folder", need: []string{"/users/"}},
	{re: regexp.MustCompile(`/root\b`), to: Home, what: "the root user's home folder", need: []string{"/root"}},
	{re: regexp.MustCompile(`(?i)\b[A-Z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)[^\\/\s"'<>:;,]+`), to: Home, what: "a Windows home folder", need: []string{"users"}},
	// ~alice/ and ~alice\ name another user's home.
	{re: regexp.MustCompile(`~[A-Za-z_][A-Za-z0-9._-]*[/\\]`), to: Home + "/", what: "a user's home folder (~user/)", need: []string{"~"}},
	// URL-encoded (%2Fhome%2Falice) in query strings and logs.
	{re: regexp.MustCompile(`(?i)%2F(?:home|Users)%2F[^%\s"'<>&]+`), to: Home, what: "a URL-encoded home folder", need: []string{"%2f"}},
	// UNC paths: \\server\share, also as escaped in JSON (\\\\server\\share).
	{re: regexp.MustCompile(`(?:\\\\){1,2}[A-Za-z0-9._$-]+(?:\\{1,2}[^\\\s"'<>:;,|*?]+)+`), to: Path, what: "a network (UNC) path", need: []string{`\\`}},
}

// addressRules find addresses.
var addressRules = []rule{
	{re: regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), to: Email, what: "an e-mail address", need: []string{"@"}},
	// Host names under suffixes only private networks use.
	{re: regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:lan|local|localdomain|internal|intranet|corp|home\.arpa|home|private)\b`),
		to: Host, what: "a host name under a private network's suffix",
		need: []string{".lan", ".local", ".internal", ".intranet", ".corp", ".home", ".private"}},
	{re: regexp.MustCompile(`(?i)\b(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}\b`), to: MAC, what: "a MAC address", need: macSeparators()},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}\b`), to: MAC, what: "a MAC address (dotted form)", need: []string{"."}},
	// Private, shared and link-local IPv4 (loopback stays: it is the
	// protocol's own address).
	{re: regexp.MustCompile(`\b(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|169\.254(?:\.\d{1,3}){2}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.\d{1,3}){2})\b`),
		to: PrivateIP, what: "a private IPv4 address", need: []string{"10.", "192.168.", "172.", "169.254.", "100."}},
	// Link-local and unique-local IPv6, with a zone (%eth0, %wlan-0).
	{re: regexp.MustCompile(`(?i)\b(?:fe[89ab][0-9a-f]|f[cd][0-9a-f]{2})(?::[0-9a-f]{0,4}){2,7}(?:%[A-Za-z0-9_.-]+)?`),
		to: PrivateIP, what: "a private IPv6 address", need: []string{"fe8", "fe9", "fea", "feb", "fc", "fd"}},
}

// absDir matches the folder part of an absolute path that stands on its own
// (after a quote, space, =, (, [, a comma or the start of a line), so URLs
// keep their paths while "/srv/models/x.gguf" becomes "<path>/x.gguf".
var absDir = regexp.MustCompile(`(^|[\s"'=(\[,])((?:/[A-Za-z0-9._@+~-]+)+)/`)

// absWinDir is the Windows form, including JSON's doubled backslashes.
var absWinDir = regexp.MustCompile(`(?i)\b[A-Z]:(?:\\{1,2}[^\\/\s"'<>:;,|*?]+)+\\{1,2}`)

// apiPath keeps HTTP API paths (/v1/chat/completions) out of path
// redaction.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/api/") || p == "/v1" || p == "/api"
}

// macSeparators are the pairs a colon- or hyphen-separated MAC address
// must contain: a hex digit, then the separator, then a hex digit.
func macSeparators() []string {
	var out []string
	for _, sep := range []string{":", "-"} {
		for _, a := range "0123456789abcdef" {
			out = append(out, string(a)+sep)
		}
	}
	return out
}
