// Package redact sanitizes text and JSON before anything is written into a
// result folder, which leaves the user's machine: home folders, the user and
// host names, absolute folder paths, private and link-local addresses, MAC
// and e-mail addresses, bearer tokens and API keys are replaced with stable
// placeholders. Placeholders contain no quotes or backslashes, so redacting
// JSON text keeps it valid JSON.
package redact

import (
	"bytes"
	"io"
	"os"
	"os/user"
	"regexp"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Placeholders.
const (
	Home      = "<home>"
	User      = "<user>"
	Host      = "<host>"
	Path      = "<path>"
	PrivateIP = "<private-ip>"
	MAC       = "<mac>"
	Email     = "<email>"
	Secret    = "<secret>"
)

// Redactor replaces private data. The zero value redacts only the generic
// patterns; New adds this machine's names and any known secrets.
type Redactor struct {
	literals []literal
}

type literal struct{ from, to string }

// Machine describes what is private on this machine.
type Machine struct {
	HomeDirs []string
	Users    []string
	Hosts    []string
	Secrets  []string
}

// Local returns this machine's home folder, user and host names.
func Local() Machine {
	var m Machine
	if h, err := os.UserHomeDir(); err == nil {
		m.HomeDirs = append(m.HomeDirs, h)
	}
	if u, err := user.Current(); err == nil {
		m.Users = append(m.Users, u.Username)
		if u.HomeDir != "" {
			m.HomeDirs = append(m.HomeDirs, u.HomeDir)
		}
	}
	if h, err := os.Hostname(); err == nil {
		m.Hosts = append(m.Hosts, h)
		if short, _, ok := strings.Cut(h, "."); ok {
			m.Hosts = append(m.Hosts, short)
		}
	}
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			m.Users = append(m.Users, v)
		}
	}
	return m
}

// New returns a redactor for m.
func New(m Machine) *Redactor {
	r := &Redactor{}
	add := func(from, to string) {
		if len(from) >= 3 && from != "/" && !isGenericName(from) {
			r.literals = append(r.literals, literal{from, to})
		}
	}
	for _, s := range m.Secrets {
		if len(s) >= 6 {
			r.literals = append(r.literals, literal{s, Secret})
		}
	}
	for _, h := range m.HomeDirs {
		add(strings.TrimRight(h, "/\\"), Home)
	}
	for _, h := range m.Hosts {
		add(h, Host)
	}
	for _, u := range m.Users {
		add(u, User)
	}
	// Longest first, so a home folder goes before the user name inside it.
	sort.SliceStable(r.literals, func(i, j int) bool { return len(r.literals[i].from) > len(r.literals[j].from) })
	return r
}

// isGenericName keeps words that would wreck ordinary text from being
// treated as a private name (a user called "root" or a host "localhost").
func isGenericName(s string) bool {
	switch strings.ToLower(s) {
	case "root", "localhost", "user", "admin", "runner", "debian", "ubuntu", "host", "strata", "model", "server":
		return true
	}
	return false
}

var patterns = []struct {
	re *regexp.Regexp
	to string
}{
	// Keys and tokens first: they may contain anything below.
	{regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}`), "$1 " + Secret},
	{regexp.MustCompile(`(?i)((?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret|password|passwd)["']?\s*[:=]\s*["']?)[^\s"',;&]{6,}`), "${1}" + Secret},
	// A bare "token" key is also how engines log vocabulary ids ("EOG token
	// = 151645 '<|im_end|>'"): only a value made of key characters with a
	// letter in it is a secret there.
	{regexp.MustCompile(`(?i)(\btoken["']?\s*[:=]\s*["']?)([A-Za-z0-9._~+/=-]*[A-Za-z][A-Za-z0-9._~+/=-]*)`), "${1}" + Secret},
	{regexp.MustCompile(`\b(?:sk|pk|rk)-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}\b`), Secret},
	{regexp.MustCompile(`\bhf_[A-Za-z0-9]{20,}\b`), Secret},
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`), Secret},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}\b`), Secret},
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`), Secret},
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Secret},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b`), Secret},
	// Home folders of any user, in Linux, macOS and Windows forms (also as
	// escaped in JSON).
	{regexp.MustCompile(`/home/[^/\s"'<>:;,]+`), Home},
	{regexp.MustCompile(`/Users/[^/\s"'<>:;,]+`), Home},
	{regexp.MustCompile(`/root\b`), Home},
	{regexp.MustCompile(`(?i)\b[A-Z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)[^\\/\s"'<>:;,]+`), Home},
	{regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), Email},
	{regexp.MustCompile(`(?i)\b(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}\b`), MAC},
	// Private, shared and link-local IPv4 (loopback stays: it is the
	// protocol's own address).
	{regexp.MustCompile(`\b(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|169\.254(?:\.\d{1,3}){2}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.\d{1,3}){2})\b`), PrivateIP},
	// Link-local and unique-local IPv6.
	{regexp.MustCompile(`(?i)\b(?:fe[89ab][0-9a-f]|f[cd][0-9a-f]{2})(?::[0-9a-f]{0,4}){2,7}(?:%[A-Za-z0-9]+)?`), PrivateIP},
}

// absDir matches the folder part of an absolute path that stands on its own
// (after a quote, space, =, ( or the start of a line), so URLs keep their
// paths while "/srv/models/x.gguf" becomes "<path>/x.gguf".
var absDir = regexp.MustCompile(`(^|[\s"'=(\[,])((?:/[A-Za-z0-9._@+~-]+)+)/`)

// absWinDir is the Windows form, including JSON's doubled backslashes.
var absWinDir = regexp.MustCompile(`(?i)\b[A-Z]:(?:\\{1,2}[^\\/\s"'<>:;,|*?]+)+\\{1,2}`)

// apiPath keeps HTTP API paths (/v1/chat/completions) out of path redaction.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/v1") || strings.HasPrefix(p, "/api")
}

// String redacts text.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, l := range r.literals {
			s = strings.ReplaceAll(s, l.from, l.to)
		}
	}
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.to)
	}
	s = absDir.ReplaceAllStringFunc(s, func(m string) string {
		sub := absDir.FindStringSubmatch(m)
		if apiPath(sub[2]) {
			return m
		}
		return sub[1] + Path + "/"
	})
	s = absWinDir.ReplaceAllString(s, Path+`\`)
	return s
}

// Bytes redacts bytes (text or JSON).
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// Find returns the private data r would replace in s (for tests and the
// submission scan), as "kind: match".
func (r *Redactor) Find(s string) []string {
	var out []string
	if r != nil {
		for _, l := range r.literals {
			if strings.Contains(s, l.from) {
				out = append(out, l.to+": "+l.from)
			}
		}
	}
	for _, p := range patterns {
		for _, m := range p.re.FindAllString(s, -1) {
			out = append(out, p.to+": "+m)
		}
	}
	for _, m := range absDir.FindAllStringSubmatch(s, -1) {
		out = append(out, Path+": "+m[2])
	}
	return out
}

// JSON redacts the string values of a JSON document (names are the format's
// own, never private, and JSON Pointers would look like paths). The output
// is re-encoded compactly, or with two-space indentation when indent is set.
func (r *Redactor) JSON(data []byte, indent bool) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	opts := []jsontext.Options{jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false)}
	if indent {
		opts = append(opts, jsontext.WithIndent("  "))
	}
	enc := jsontext.NewEncoder(&out, opts...)
	for {
		kind, n := dec.StackIndex(dec.StackDepth())
		isName := kind == '{' && n%2 == 0
		tok, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '"' && !isName {
			tok = jsontext.String(r.String(tok.String()))
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}
