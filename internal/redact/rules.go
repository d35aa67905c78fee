package redact

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// rule is one of strata's own patterns: what it replaces (with its
// placeholder and, for the submit scan, plain words), and which group of
// the match is the private part (0: all of it). keep, when set, lets a
// match stand (a value that is already a placeholder, a number where only a
// word is a secret).
// pattern is a regexp compiled when it is first used: most strata
// processes never redact (a one-line command, the simulated engine), and
// none should pay for compiling the redactor's forty-odd patterns;
// TestEveryPatternCompiles compiles them all.
type pattern func() *regexp.Regexp

func lazy(expr string) pattern {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

type rule struct {
	re    pattern
	to    string
	what  string
	group int
	keep  func(private string) bool
	// keepMatch, when set, lets a match stand by its whole text (the
	// setting's name as well as its value).
	keepMatch func(match string) bool
	// need lists literals (lower case) of which the text must hold one for
	// the rule to run: most text holds none, and the regexp is skipped.
	need []string
	// gate, when set, stands for need where no literal says whether the
	// rule can match.
	gate func(low string) bool
}

// applies reports whether the rule's literals are in low (the text, lower
// case).
func (ru rule) applies(low string) bool {
	if ru.gate != nil {
		return ru.gate(low)
	}
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

// keepBearer lets stand what follows "bearer" where it is a word of prose
// about bearer tokens, not one: a key is never one of these words.
func keepBearer(v string) bool {
	switch strings.ToLower(v) {
	case "token", "tokens", "auth", "authentication", "authorization", "scheme", "header", "credential", "credentials":
		return true
	}
	return isPlaceholder(v)
}

func hasLetter(s string) bool {
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// settingNames are the names of settings whose value is a secret, as
// regexp alternatives, and credentialKeys the names ending in KEY that
// are: the word before says the key is a credential (credentialWords). A
// bare *_KEY names cache keys, sort keys and primary keys (and the
// result's own JSON names), so it is none. The text rules below and the
// JSON object names (secretMember) take them from here.
const settingNames = `api[_-]?key|apikey|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|secret|password|passwd|pwd|hf[_-]?token|hft`

var (
	credentialWords = []string{"private", "access", "account", "auth", "signing", "encryption", "master", "subscription"}
	credentialKeys  = `(?:shared[_-]?access|` + strings.Join(credentialWords, "|") + `)[_-]?key`
	secretNames     = settingNames + `|` + credentialKeys
)

// secretNeed are the literals of which a text holds one wherever a
// secret setting's name is in it.
var secretNeed = []string{"key", "token", "secret", "passw", "pwd", "hft"}

// secretValue is what a secret setting's value is in text: up to the next
// space, quote or separator.
const secretValue = `([^\s"',;&<>]{3,})`

// tokenValue is a token setting's value: key characters only, as a bare
// "token" is also how engines and tokenizers name vocabulary entries.
const tokenValue = `([A-Za-z0-9._~+/=-]{8,})`

// underscoreAndName is the prefixed names' literals: an underscore, and one
// of secretNeed.
func underscoreAndName(low string) bool {
	return strings.Contains(low, "_") && rule{need: secretNeed}.applies(low)
}

// hasCredentialKey reports whether low has "key" right after a word of
// credentialWords (a hyphen or underscore between): the words alone turn
// up in most text, and in random base64 by chance.
func hasCredentialKey(low string) bool {
	for from := 0; ; {
		i := strings.Index(low[from:], "key")
		if i < 0 {
			return false
		}
		at := from + i
		before := strings.TrimRight(low[max(0, at-16):at], "_-")
		for _, w := range credentialWords {
			if strings.HasSuffix(before, w) {
				return true
			}
		}
		from = at + 1
	}
}

// keepSetting lets the value of a secret setting stand where it is no
// secret: a placeholder, another flag, where the key is read from, or a
// boolean.
func keepSetting(v string) bool {
	switch strings.ToLower(v) {
	case "file", "env", "true", "false", "null", "none":
		return true
	}
	return isPlaceholder(v) || strings.HasPrefix(v, "-")
}

// The names of JSON object members whose string value is a secret: a
// setting's name, with any prefix, or a token's with a prefix (a bare
// "token" names a piece of the vocabulary in logprobs).
var (
	settingMember = lazy(`(?i)^(?:[a-z0-9]+[_.-])*(?:` + secretNames + `)$`)
	tokenMember   = lazy(`(?i)^(?:[a-z0-9]+[_.-])+token$`)
	wholeToken    = lazy(`^` + tokenValue + `$`)
)

// secretName reports whether a member's name (in lower case) may name a
// secret, before any regexp is run.
func secretName(low string) bool {
	return strings.HasSuffix(low, "key") || strings.HasSuffix(low, "token") || strings.Contains(low, "secret") ||
		strings.Contains(low, "passw") || strings.HasSuffix(low, "pwd") || low == "hft"
}

// secretMember reports whether v, the value of a JSON object's member
// name, is a secret by its name, with the text rules' exceptions.
func secretMember(name, v string) bool {
	low := strings.ToLower(name)
	if !secretName(low) {
		return false // most names: no regexp
	}
	switch {
	case settingMember().MatchString(name):
		return len(v) >= 3 && !keepSetting(v)
	case tokenMember().MatchString(name) && !vocabularyToken().MatchString(name):
		return wholeToken().MatchString(v) && !keepToken(v)
	}
	return false
}

// keepToken lets a token setting's value stand unless it has a letter in
// it ("EOG token = 151645" is a vocabulary id).
func keepToken(v string) bool { return !hasLetter(v) || isPlaceholder(v) }

// vocabularyToken is a model's special token setting (bos_token,
// eos_token, fim_pre_token …): its value is a piece of the vocabulary.
var vocabularyToken = lazy(`(?i)(?:^|[^a-z0-9])(?:bos|eos|eot|eom|eog|pad|unk|sep|cls|mask|start|end|stop|image|audio|video|think|fim_[a-z]+)[_-]token\b`)

// b64Line is one line of a PEM body: 64 base64 characters (70 in
// OpenSSH's files). nl is a line end, also as escaped inside JSON text.
const (
	b64Line = `[A-Za-z0-9+/]{64}(?:[A-Za-z0-9+/]{6})?`
	nl      = `(?:\r?\n|\\r?\\n)`
	// b64Start is where a base64 line may start: a line's start (also
	// after an escaped line end) or after a character that is no base64.
	b64Start = `(?:\\r?\\n|^|[^A-Za-z0-9+/=\\])`
	// b64End is where the last line may end: a line end, the text's end,
	// or a quote or bracket; not a space, so a word on the line after a
	// key's lines ("next line") is no short last line of it.
	b64End = `(?:` + nl + `|\z|[^A-Za-z0-9+/=\s\\]|\\")`
)

// pemLabel is what a PEM line holds between BEGIN or END and "PRIVATE
// KEY" ("RSA ", "OPENSSH "): no two dashes in a row, so that a line's
// label never runs on into the dashes of the line after it ("-----BEGIN
// RSA PRIVATE KEY----------END RSA PRIVATE KEY-----" is two lines).
const pemLabel = `(?:[ A-Z0-9_]|-[ A-Z0-9_]){0,100}`

// emptyKeyBlock is a private key block with nothing between its lines.
var emptyKeyBlock = lazy(`-----BEGIN` + pemLabel + `PRIVATE KEY(?: BLOCK)?-----(?:\s|\\r|\\n)*-----END` + pemLabel + `PRIVATE KEY(?: BLOCK)?-----`)

// bodiesAfterEmptyBlocks replaces a private key block with nothing between
// its lines together with the base64 right after it: the key's body,
// written after the block (a log that wrote the lines and the body apart),
// which the rules of bodies before an END line or in lines of 64 do not
// see when it is one long line or two.
func bodiesAfterEmptyBlocks(s string, note func(kind, what, match string)) string {
	idx := emptyKeyBlock().FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if m[0] < last {
			continue
		}
		end := bodyAfter(s, m[1])
		note(Secret, "a private key block with its body after it", s[m[0]:end])
		b.WriteString(s[last:m[0]])
		b.WriteString(Secret)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// bodyAfter is where the base64 after s[:at] ends (at when there is
// none): past spaces and line ends (also escaped, as in JSON text), a run
// of at least 16 base64 characters, and each line after it that is base64
// alone (ended by a line end, the text's end or a quote: "next line" is
// no line of a key).
func bodyAfter(s string, at int) int {
	p := at
	for p < len(s) {
		if n := lineEndAt(s, p); n > 0 {
			p += n
		} else if s[p] == ' ' || s[p] == '\t' {
			p++
		} else {
			break
		}
	}
	n := b64RunAt(s, p)
	if n < 16 {
		return at
	}
	end := p + n
	for {
		nl := lineEndAt(s, end)
		n := b64RunAt(s, end+nl)
		if nl == 0 || n == 0 {
			return end
		}
		next := end + nl + n
		if next < len(s) && lineEndAt(s, next) == 0 && s[next] != '"' && s[next] != '\'' && !strings.HasPrefix(s[next:], `\"`) {
			return end
		}
		end = next
	}
}

// lineEndAt is the length of the line end at s[i:] (\n, \r\n, \r, or
// one escaped as in JSON text), 0 when there is none.
func lineEndAt(s string, i int) int {
	for _, e := range []string{"\r\n", "\n", "\r", `\r\n`, `\n`, `\r`} {
		if strings.HasPrefix(s[i:], e) {
			return len(e)
		}
	}
	return 0
}

// b64RunAt is the length of the base64 (and its padding) at s[i:].
func b64RunAt(s string, i int) int {
	j := i
	for j < len(s) && isB64(s[j]) {
		j++
	}
	for j < len(s) && j > i && s[j] == '=' {
		j++
	}
	return j - i
}

// isB64 is true for the characters of standard base64 (without padding).
func isB64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

// hasB64Line reports whether s has a line of exactly 64 or 70 base64
// characters: one pass, where the regexp of the key body would step an
// automaton over every text with a line end.
func hasB64Line(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isB64(c) {
			run++
			continue
		}
		if run == 64 || run == 70 {
			if c == '\n' || c == '\r' || c == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r') {
				return true
			}
		}
		run = 0
	}
	return false
}

// fewKeyLines lets a run of base64 lines stand unless three of its full
// lines mix capitals, small letters and digits, as random base64 does
// (a line of 64 random base64 characters lacks one of the three with a
// chance of about 2·10⁻⁵, its digits; a hexadecimal digest lacks capitals
// or small letters).
func fewKeyLines(run string) bool {
	mixed := 0
	for _, line := range strings.FieldsFunc(strings.NewReplacer(`\r`, "\n", `\n`, "\n", "\r", "\n").Replace(run), func(r rune) bool { return r == '\n' }) {
		var upper, lower, digit bool
		for i := 0; i < len(line); i++ {
			c := line[i]
			upper = upper || 'A' <= c && c <= 'Z'
			lower = lower || 'a' <= c && c <= 'z'
			digit = digit || '0' <= c && c <= '9'
		}
		if (len(line) == 64 || len(line) == 70) && upper && lower && digit {
			mixed++
		}
	}
	return mixed < 3
}

// isBasicCredential reports whether v is base64 of user:password: printable
// text with a colon after a non-empty user.
func isBasicCredential(v string) bool {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "=")); err != nil {
			return false
		}
	}
	colon := bytes.IndexByte(b, ':')
	if colon < 1 || !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// pairedRules read a secret by what stands beside it, which gitleaks'
// rules replace: they run before those.
var pairedRules = []rule{
	// A key ID names the secret that goes with it: 40 such characters
	// later on its line (a credentials CSV, a note) are that secret.
	{re: lazy(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b[^\n]*?[^A-Za-z0-9/+=\n]([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`),
		to: Secret, what: "an AWS secret access key (on its key ID's line)", group: 1, need: []string{"akia", "asia"}},
}

// secretRules come first: a key may contain anything the later rules look
// for.
var secretRules = []rule{
	// A private key block, also one cut short (a log cut at its limit).
	{re: lazy(`-----BEGIN` + pemLabel + `PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END` + pemLabel + `PRIVATE KEY(?: BLOCK)?-----|\z)`),
		to: Secret, what: "a private key block", need: []string{"-----begin"}},
	// A private key's body without its BEGIN line (a log that kept the
	// block's end): the base64 lines right before the END line.
	{re: lazy(`(?m)` + b64Start + `((?:[A-Za-z0-9+/]{40,76}` + nl + `)*[A-Za-z0-9+/=]{1,76}` + nl + `-----END` + pemLabel + `PRIVATE KEY(?: BLOCK)?-----)`),
		to: Secret, what: "a private key's body (its BEGIN line missing)", group: 1, need: []string{"-----end"}},
	// A private key's body without either line: three or more full lines of
	// base64 (and the short last one). Hexadecimal digests are lines of 64
	// characters too, but no line of them mixes capitals, small letters and
	// digits, as every line of a key's random base64 does.
	{re: lazy(`(?m)` + b64Start + `((?:` + b64Line + nl + `){2,}` + b64Line + `(?:` + nl + `[A-Za-z0-9+/]{1,69}={0,2})?)` + b64End),
		to: Secret, what: "a private key's body (lines of base64)", group: 1, keep: fewKeyLines, gate: hasB64Line},
	// Credentials in a URL, whatever the host (an IP, loopback or a name).
	{re: lazy(`(?i)\b[a-z][a-z0-9+.-]*://([^\s/?#@:"'<>\\]+:[^\s/?#@"'<>\\]+)@`),
		to: Secret, what: "a user name and password in a URL", group: 1, keep: isPlaceholder, need: []string{"://"}},
	// A bearer token of any length, but not the words prose puts after
	// "bearer" ("a bearer token goes in the header").
	{re: lazy(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]+)`),
		to: Secret, what: "a bearer token", group: 1, keep: keepBearer, need: []string{"bearer"}},
	// Basic credentials (base64 of user:password): in an Authorization
	// header whatever they hold, and elsewhere where they decode to
	// user:password ("a basic test" is no credential).
	{re: lazy(`(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9._~+/=-]+)`),
		to: Secret, what: "basic credentials in an Authorization header", group: 1, keep: isPlaceholder, need: []string{"basic"}},
	{re: lazy(`(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?:[^A-Za-z0-9+/=]|$)`),
		to: Secret, what: "basic credentials (base64 of user:password)", group: 1, keep: func(v string) bool { return !isBasicCredential(v) }, need: []string{"basic"}},
	// AWS secret access keys are 40 characters of base64 that look like
	// anything else without their variable's name.
	// Its name takes it after a colon, an equals sign or only a space (an
	// ini file or a shell listing without "=").
	{re: lazy(`(?i)\baws_?secret(?:_?access)?(?:_?key)?\b["']?(?:\s*[:=]\s*|\s+)["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`),
		to: Secret, what: "an AWS secret access key", group: 1, need: []string{"aws"}},
	{re: lazy(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), to: Secret, what: "an AWS access key ID", need: []string{"akia", "asia"}},
	{re: lazy(`\b(?:sk|pk|rk)-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}\b`), to: Secret, what: "an API key (sk-/pk-/rk- form)", need: []string{"sk-", "pk-", "rk-"}},
	{re: lazy(`\bglpat-[0-9A-Za-z_-]{20,}\b`), to: Secret, what: "a GitLab personal access token", need: []string{"glpat-"}},
	{re: lazy(`\bAIza[0-9A-Za-z_-]{35}\b`), to: Secret, what: "a Google API key", need: []string{"aiza"}},
	{re: lazy(`\bhf_[A-Za-z0-9]{20,}\b`), to: Secret, what: "a Hugging Face token", need: []string{"hf_"}},
	// The signature of an Azure shared access signature (in a URL's query
	// or a connection string); its other fields are dates and scopes.
	{re: lazy(`(?i)[?&;=]sig=([^&\s"'<>;#]{8,})`),
		to: Secret, what: "the signature of a shared access signature", group: 1, keep: isPlaceholder, need: []string{"sig="}},
	// Values of settings whose name says they are secret, as key=value,
	// key: value, --key value, --prefix-key value or --key=value. Only a
	// flag takes its value after a space, as in the rules below: "the
	// password must be", "a secret key of 32 bytes" and "the pwd command"
	// are prose, and a model's answer is evidence.
	{re: lazy(`(?i)(?:--(?:[a-z0-9][a-z0-9-]*-)?(?:` + settingNames + `)["']?(?:\s*[:=]\s*|\s+)|\b(?:` + settingNames + `)["']?\s*[:=]\s*)["']?` + secretValue),
		to: Secret, what: "the value of a secret setting (key, token, password)", group: 1, keep: keepSetting, need: secretNeed},
	// The credential keys (AccountKey=, private_key:) are a rule of their
	// own, so most text, which has "key" but none of their words, skips its
	// regexp. They take a value after a space only as a flag: "a
	// private-key block" is prose.
	{re: lazy(`(?i)(?:--(?:` + credentialKeys + `)["']?\s+|\b(?:` + credentialKeys + `)["']?\s*[:=]\s*)["']?` + secretValue),
		to: Secret, what: "the value of a secret setting (key, token, password)", group: 1, keep: keepSetting, gate: hasCredentialKey},
	// The same names with a prefix joined by an underscore (LLAMA_API_KEY,
	// DB_PASSWORD, --my_hf_token), where \b sees no word's start; a prefix
	// joined by a hyphen is a word's start and taken above. Only a flag
	// takes its value after a space: "my_secret plan" is prose.
	{re: lazy(`(?i)(?:--[a-z0-9][a-z0-9_-]*_(?:` + secretNames + `)["']?(?:\s*[:=]\s*|\s+)|[a-z0-9]_(?:` + secretNames + `)["']?\s*[:=]\s*)["']?` + secretValue),
		to: Secret, what: "the value of a secret setting (key, token, password)", group: 1, keep: keepSetting, gate: underscoreAndName},
	// A bare "token" is also how engines log vocabulary ids ("EOG token =
	// 151645 '<|im_end|>'"): only a value of key characters with a letter in
	// it is a secret there.
	{re: lazy(`(?i)\btoken["']?\s*[:=]\s*["']?` + tokenValue),
		to: Secret, what: "the value of a token setting", group: 1, keep: keepToken, need: []string{"token"}},
	// A token setting with a prefix (GITHUB_TOKEN=, --github-token v), but
	// not a model's special tokens (bos_token: ...): the match starts at
	// the name's start, so keepMatch sees all of it.
	{re: lazy(`(?i)(?:--[a-z0-9][a-z0-9_-]*[_-]token["']?(?:\s*[:=]\s*|\s+)|\b[a-z0-9][a-z0-9_]*_token["']?\s*[:=]\s*)["']?` + tokenValue),
		to: Secret, what: "the value of a token setting", group: 1, keep: keepToken, keepMatch: func(m string) bool { return vocabularyToken().MatchString(m) }, need: []string{"_token", "-token"}},
}

// pathRules find home folders and other machine paths.
var pathRules = []rule{
	// Also with its slashes escaped (\/home\/x, as some JSON encoders write).
	{re: lazy(`(?i)/home\\*/[^/\s"'<>:;,\\]+`), to: Home, what: "a home folder", need: []string{"/home/", `/home\`}},
	{re: lazy(`/Users\\*/[^/\s"'<>:;,\\]+`), to: Home, what: "a home folder", need: []string{"/users/", `/users\`}},
	{re: lazy(`/root\b`), to: Home, what: "the root user's home folder", need: []string{"/root"}},
	// Backslashes doubled at every depth of JSON inside JSON.
	{re: lazy(`(?i)\b[A-Z]:(?:\\+|/)Users(?:\\+|/)[^\\/\s"'<>:;,]+`), to: Home, what: "a Windows home folder", need: []string{"users"}},
	// ~alice/ and ~alice\ name another user's home.
	{re: lazy(`~[A-Za-z_][A-Za-z0-9._-]*[/\\]`), to: Home + "/", what: "a user's home folder (~user/)", need: []string{"~"}},
	// URL-encoded (%2Fhome%2Falice) in query strings and logs.
	{re: lazy(`(?i)%2F(?:home|Users)%2F[^%\s"'<>&]+`), to: Home, what: "a URL-encoded home folder", need: []string{"%2f"}},
	// UNC paths: \\server\share, also as escaped in JSON (\\\\server\\share), at any
	// depth; not the folders after a drive's letter (D:\\models\\ in JSON),
	// which absWinDir takes leaving the file's name.
	{re: lazy(`(?:^|[^:\\])((?:\\\\)+[A-Za-z0-9._$-]+(?:\\+[^\\\s"'<>:;,|*?]+)+)`), to: Path, what: "a network (UNC) path", group: 1, need: []string{`\\`}},
}

// addressRules find addresses.
var addressRules = []rule{
	{re: lazy(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), to: Email, what: "an e-mail address", need: []string{"@"}},
	// Host names under suffixes only private networks use.
	{re: lazy(`(?i)\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:lan|local|localdomain|internal|intranet|corp|home\.arpa|home|private)\b`),
		to: Host, what: "a host name under a private network's suffix",
		need: []string{".lan", ".local", ".internal", ".intranet", ".corp", ".home", ".private"}},
	{re: lazy(`(?i)\b(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}\b`), to: MAC, what: "a MAC address", gate: hexGroups(6, 2, ":-")},
	{re: lazy(`(?i)\b[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}\b`), to: MAC, what: "a MAC address (dotted form)", gate: hexGroups(3, 4, ".")},
	// Private, shared and link-local IPv4 (loopback stays: it is the
	// protocol's own address).
	{re: lazy(`\b(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|169\.254(?:\.\d{1,3}){2}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])(?:\.\d{1,3}){2})\b`),
		to: PrivateIP, what: "a private IPv4 address", need: []string{"10.", "192.168.", "172.", "169.254.", "100."}},
	// Link-local and unique-local IPv6, with a zone (%eth0, %wlan-0). An
	// address ends where no hex digit follows: a match that stopped inside
	// a run of them ("fC00::0000fC00::") is no address, and replacing it
	// would make the text after it start a word, so that redacting the
	// redacted text found another (FuzzIdempotent).
	{re: lazy(`(?i)\b((?:fe[89ab][0-9a-f]|f[cd][0-9a-f]{2})(?::[0-9a-f]{0,4}){2,7}(?:%[A-Za-z0-9_.-]+)?)(?:[^0-9a-f]|$)`),
		to: PrivateIP, what: "a private IPv6 address", group: 1, need: []string{"fe8", "fe9", "fea", "feb", "fc", "fd"}},
}

// absDir matches the folder part of an absolute path that stands on its own
// (after a quote, space, =, (, [, a comma or the start of a line), so URLs
// keep their paths while "/srv/models/x.gguf" becomes "<path>/x.gguf".
var absDir = lazy(`(^|[\s"'=(\[,])((?:/[A-Za-z0-9._@+~-]+)+)/`)

// absWinDir is the Windows form, including JSON's doubled backslashes at
// any depth; its last separator is kept as it was escaped.
var absWinDir = lazy(`(?i)\b[A-Z]:(?:\\+[^\\/\s"'<>:;,|*?]+)+(\\+)`)

// apiPath keeps HTTP API paths (/v1/chat/completions) out of path
// redaction.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/api/") || p == "/v1" || p == "/api"
}

// hexGroups is the gate of the MAC address rules: whether low holds count
// groups of width hex digits in a row, each joined to the next by one of
// seps, the shape of every match (the regexp then decides where words
// end). Those regexps begin with no literal to look for, so they tried
// every position of any text the gate let through; counting separators let
// through every sentence with two full stops, and the two rules were a
// third of a result folder's redaction.
func hexGroups(count, width int, seps string) func(low string) bool {
	span := count*width + count - 1
	return func(low string) bool {
		// Each separator is tried as a match's first, width bytes in.
		for k := 0; k < len(low); k++ {
			off := strings.IndexAny(low[k:], seps)
			if off < 0 {
				return false
			}
			k += off
			if start := k - width; start >= 0 && start+span <= len(low) && hexGroupsAt(low[start:start+span], width, seps) {
				return true
			}
		}
		return false
	}
}

// isLowerHex is true for a digit of lower-case hexadecimal (the text is
// lower-cased before the rules read it).
func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func hexGroupsAt(s string, width int, seps string) bool {
	for j := 0; j < len(s); j++ {
		c := s[j]
		if (j+1)%(width+1) == 0 {
			if strings.IndexByte(seps, c) < 0 {
				return false
			}
		} else if !isLowerHex(c) {
			return false
		}
	}
	return true
}
