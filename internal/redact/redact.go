// Package redact sanitizes text and JSON before anything is written into a
// result folder, which leaves the user's machine: home folders, the user and
// host names, machine paths, private and link-local addresses, MAC and
// e-mail addresses, private key blocks, credentials and API keys are
// replaced with stable placeholders. Placeholders contain no quotes or
// backslashes, so redacting JSON text keeps it valid JSON, and no rule
// matches a placeholder, so redacting twice changes nothing.
//
// It never damages evidence that is not private. Names match only as whole
// words (or path segments), in any letter case; a name that is also a word
// of strata's own text or of the protocol's fixtures ("build", "short",
// "bench") is replaced only where it cannot be that word: in a path. The
// caller also names the parts of a JSON document that are protocol-owned
// (request IDs, enums, hashes, the request bodies built from the fixtures),
// which are never rewritten.
//
// The submit scan uses the same rules (Find): one implementation decides
// both what is replaced and what is reported.
package redact

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/user"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

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

// Finding is one piece of private data the redactor replaces: its
// placeholder, what it is in plain words, and the text found.
type Finding struct {
	Kind  string
	What  string
	Match string
}

func (f Finding) String() string { return f.What + ": " + f.Match }

// Machine describes what is private on this machine.
type Machine struct {
	HomeDirs []string
	Users    []string
	Hosts    []string
	// Secrets are values known to be secret (the API key in use).
	Secrets []string
}

// Local returns this machine's home folder, user and host names, from the
// given environment lookup (USER, LOGNAME, USERNAME) and the OS.
func Local(getenv func(string) string) Machine {
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
	if getenv != nil {
		for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
			if v := getenv(k); v != "" {
				m.Users = append(m.Users, v)
			}
		}
	}
	return m
}

// Redactor replaces private data. The zero value (and nil) redacts the
// generic patterns only; New adds a machine's names and known secrets.
type Redactor struct {
	secrets *knownSet      // the known secrets' forms
	homes   *regexp.Regexp // this machine's home folders, any case
	// homeLows are the home folders in ASCII lower case, when every one is
	// ASCII: an ASCII text holding none of them cannot match homes.
	homeLows []string
	words    []string            // user and host names in ASCII, lower case, longest first
	names    *regexp.Regexp      // the other user and host names, whole words, any case
	kinds    map[string]nameKind // lower-case name -> its placeholder and words
	vocab    map[string]bool     // words that are strata's or the protocol's own
}

// nameKind is what a machine's name is: its placeholder, what it is in
// plain words, and whether it is also a word (see New), replaced only
// where it stands as a name.
type nameKind struct {
	to, what string
	word     bool
}

// New returns a redactor for m. protect lists the words that are strata's
// own or the protocol's (see Vocabulary): a name among them is only
// replaced in a path, and a user name only where it stands as a user's
// name (userContext). So is a user name that is a common English word
// ("hit", "normal", "browser") or shorter than three letters ("pc"): the
// engine's log says "expert cache 99.0% hit", and replacing that word
// would damage evidence that is not private, while a user called so is
// still replaced in /home/hit, hit@box and USER=hit.
func New(m Machine, protect map[string]bool) *Redactor {
	r := &Redactor{kinds: map[string]nameKind{}, vocab: protect, secrets: newKnownSet(m.Secrets)}
	var homes, lows []string
	for _, h := range m.HomeDirs {
		h = strings.TrimRight(h, `/\`)
		if len(h) > 1 {
			homes = append(homes, regexp.QuoteMeta(h))
			lows = append(lows, asciiLower(h))
		}
	}
	if len(homes) > 0 {
		sortLongestFirst(homes)
		r.homes = regexp.MustCompile(`(?i)(?:` + strings.Join(homes, "|") + `)\b`)
		if slices.IndexFunc(lows, func(h string) bool { return !isASCII(h) }) < 0 {
			r.homeLows = lows
		}
	}
	var names []string
	add := func(name, to, what string) {
		low := strings.ToLower(strings.TrimSpace(name))
		if low == "" || isGenericName(low) {
			return
		}
		if _, dup := r.kinds[low]; dup {
			return
		}
		word := protect[low] || to == User && (isCommonWord(low) || utf8.RuneCountInString(low) < 3)
		r.kinds[low] = nameKind{to: to, what: what, word: word}
		if isASCII(low) {
			r.words = append(r.words, low)
		} else {
			names = append(names, regexp.QuoteMeta(low))
		}
	}
	for _, h := range m.Hosts {
		add(h, Host, "this machine's host name")
	}
	for _, u := range m.Users {
		add(u, User, "this machine's user name")
	}
	sortLongestFirst(r.words)
	if len(names) > 0 {
		sortLongestFirst(names)
		// \b is an ASCII word boundary: "tom" never matches inside "custom",
		// nor "build" inside "get_build_status".
		r.names = regexp.MustCompile(`(?i)(?:` + strings.Join(names, "|") + `)`)
	}
	return r
}

func sortLongestFirst(s []string) {
	sort.SliceStable(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
}

// isGenericName keeps account names that are words of every log (a user
// called "root", a CI user "runner", a host "localhost") from being
// treated as private.
func isGenericName(s string) bool {
	switch s {
	case "root", "localhost", "user", "admin", "runner", "debian", "ubuntu", "host", "strata", "model", "server", "nobody", "ci":
		return true
	}
	return false
}

// String redacts text.
func (r *Redactor) String(s string) string { return r.apply(s, nil) }

// Bytes redacts bytes (text).
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// Find returns the private data r would replace in s, in plain words (for
// tests and the submission scan).
func (r *Redactor) Find(s string) []Finding {
	var out []Finding
	r.apply(s, func(f Finding) { out = append(out, f) })
	return out
}

// apply runs every rule in order; found, when set, hears each replacement.
func (r *Redactor) apply(s string, found func(Finding)) string {
	if s == "" {
		return s
	}
	note := func(kind, what, match string) {
		if found != nil {
			found(Finding{Kind: kind, What: what, Match: match})
		}
	}
	if r != nil && r.secrets != nil {
		s = r.secrets.replace(s, note)
	}
	s = secretForms(s, note)
	low := asciiLower(s) // for the rules' literal prefilters (stale after a replacement, which only removes text)
	if r != nil && r.homes != nil && r.mayHoldHome(s, low) {
		s = r.homes.ReplaceAllStringFunc(s, func(m string) string {
			note(Home, "this machine's home folder", m)
			return Home
		})
	}
	for _, ru := range pathRules {
		if ru.applies(low) {
			s = ru.replace(s, note)
		}
	}
	for _, ru := range addressRules[:2] { // e-mail addresses and private host names hold names
		if ru.applies(low) {
			s = ru.replace(s, note)
		}
	}
	if r != nil {
		s = r.replaceNames(s, note)
	}
	for _, ru := range addressRules[2:] {
		if ru.applies(low) {
			s = ru.replace(s, note)
		}
	}
	// Each path form's literals, counted: a folder path has two slashes,
	// a Windows one ":\" (most strings have neither, and the regexps cost
	// more than the count).
	if strings.Count(s, "/") >= 2 {
		s = absDir().ReplaceAllStringFunc(s, func(m string) string {
			sub := absDir().FindStringSubmatch(m)
			if apiPath(sub[2]) {
				return m
			}
			note(Path, "an absolute folder path", sub[2])
			return sub[1] + Path + "/"
		})
	}
	if strings.Contains(s, `:\`) {
		s = absWinDir().ReplaceAllStringFunc(s, func(m string) string {
			note(Path, "an absolute Windows folder path", m)
			return Path + absWinDir().FindStringSubmatch(m)[1]
		})
	}
	return s
}

// mayHoldHome reports whether s (low its ASCII lower case) can hold one of
// the home folders. The regexp folds case as Unicode does (a Kelvin sign
// matches k), so the literal test stands in for it only where both the
// homes and the text are ASCII.
func (r *Redactor) mayHoldHome(s, low string) bool {
	if r.homeLows == nil || !isASCII(s) {
		return true
	}
	for _, h := range r.homeLows {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}

// replaceNames replaces the user and host names where they stand as whole
// words, unless the word is one of
// strata's own. ASCII names are found with strings.Index in the text's
// ASCII lower case, which is many times faster than one regexp over
// megabytes; names in other scripts take the regexp.
func (r *Redactor) replaceNames(s string, note func(kind, what, match string)) string {
	if len(r.words) > 0 {
		s = r.replaceASCIINames(s, note)
	}
	if r.names != nil {
		s = r.replaceOtherNames(s, note)
	}
	return s
}

// nameAt is what stands for s[at:end], a name found as a whole word: its
// placeholder, noted, or the word itself where it is a word (of strata's
// text, the fixtures, English) and not the name.
func (r *Redactor) nameAt(s string, at, end int, note func(kind, what, match string)) string {
	m := s[at:end]
	k := r.kinds[strings.ToLower(m)]
	if k.word && (k.to != User || !userContext(s, at, end)) {
		return m
	}
	note(k.to, k.what, m)
	return k.to
}

// replaceASCIINames replaces the ASCII names, found with strings.Index in
// the text's ASCII lower case.
func (r *Redactor) replaceASCIINames(s string, note func(kind, what, match string)) string {
	low := asciiLower(s)
	var spans [][2]int
	for _, w := range r.words {
		for from := 0; ; {
			i := strings.Index(low[from:], w)
			if i < 0 {
				break
			}
			at, end := from+i, from+i+len(w)
			if wholeWord(s, at, end) {
				spans = append(spans, [2]int{at, end})
			}
			from = at + 1
		}
	}
	if len(spans) == 0 {
		return s
	}
	// Leftmost first, and the longest name at one place, as the regexp's
	// alternation of names sorted longest first.
	sort.Slice(spans, func(i, j int) bool {
		if spans[i][0] != spans[j][0] {
			return spans[i][0] < spans[j][0]
		}
		return spans[i][1] > spans[j][1]
	})
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[0] < last {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString(r.nameAt(s, sp[0], sp[1], note))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceOtherNames replaces the names in other scripts with the regexp;
// \b is ASCII only, so the word boundary is checked on the runes.
func (r *Redactor) replaceOtherNames(s string, note func(kind, what, match string)) string {
	var b strings.Builder
	last := 0
	for pos := 0; pos < len(s); {
		loc := r.names.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		at, end := pos+loc[0], pos+loc[1]
		if !wholeWord(s, at, end) {
			_, n := utf8.DecodeRuneInString(s[at:])
			pos = at + n
			continue
		}
		b.WriteString(s[last:at])
		b.WriteString(r.nameAt(s, at, end, note))
		last, pos = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// userSetting is the end of a setting whose value is a user's name:
// USER=, LOGNAME=, user_name=, --user, "owner": "…".
var userSetting = lazy(`(?i)(?:\b(?:user|user_?name|logname|login|owner)=|--(?:user|user-?name|login|owner)[= ]|"(?:user|user_?name|logname|login|owner)"\s*:\s*")$`)

// userContext reports whether s[at:end], a user's name that is also a
// word, stands there as the name: before an @ (hit@box), after a ~
// (~hit), as the value of a user setting (userSetting), or in id's
// output (uid=1000(hit)). Home folders are the path rules' (/home/hit).
func userContext(s string, at, end int) bool {
	if end < len(s) && s[end] == '@' || at > 0 && s[at-1] == '~' {
		return true
	}
	before := s[max(0, at-32):at]
	if strings.HasSuffix(before, "(") && end < len(s) && s[end] == ')' {
		id := strings.TrimRightFunc(before[:len(before)-1], unicode.IsDigit)
		if len(id) < len(before)-1 && (strings.HasSuffix(id, "=") || strings.HasSuffix(id, ",")) {
			return true
		}
	}
	return userSetting().MatchString(before)
}

func isWordRune(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) }

// wholeWord reports whether s[at:end] stands as a word: no letter, digit
// or underscore (in any script) right before or after it.
func wholeWord(s string, at, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:at])
	after, _ := utf8.DecodeRuneInString(s[end:])
	return (at == 0 || !isWordRune(before)) && (end == len(s) || !isWordRune(after))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// replace applies one rule.
func (ru rule) replace(s string, note func(kind, what, match string)) string {
	if ru.group == 0 {
		return ru.re().ReplaceAllStringFunc(s, func(m string) string {
			if ru.keep != nil && ru.keep(m) {
				return m
			}
			note(ru.to, ru.what, m)
			return ru.to
		})
	}
	idx := ru.re().FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		lo, hi := m[2*ru.group], m[2*ru.group+1]
		if lo < 0 || lo < last {
			continue
		}
		private := s[lo:hi]
		if ru.keep != nil && ru.keep(private) || ru.keepMatch != nil && ru.keepMatch(s[m[0]:m[1]]) {
			continue
		}
		note(ru.to, ru.what, private)
		b.WriteString(s[last:lo])
		b.WriteString(ru.to)
		last = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// providerKeys applies the gitleaks rule set: a rule runs only when one of
// its keywords is in the text, and a match stands only past its entropy
// threshold and allowlists.
func providerKeys(s string, note func(kind, what, match string)) string {
	set, err := providerRules()
	if err != nil {
		// The embedded rule set is checked by the tests; failing closed
		// here would lose a run over a data file.
		return s
	}
	hits := set.keywordHits(asciiLower(s))
	for i := range set.rules {
		k := &set.rules[i]
		if hits == nil && len(k.keywords) > 0 {
			continue // none of its keywords is in the text
		}
		idx := k.findKeyed(set, s, hits)
		if idx == nil {
			continue
		}
		if out, changed := k.replace(set, s, idx, note); changed {
			s = out
			hits = set.keywordHits(asciiLower(s)) // the offsets moved
		}
	}
	return s
}

// replace puts Secret in place of the secrets of the rule's matches idx in
// s that stand (see stands), and whether it replaced any.
func (k *keyRule) replace(set *providerSet, s string, idx [][]int, note func(kind, what, match string)) (string, bool) {
	var b strings.Builder
	last := 0
	for _, m := range idx {
		lo, hi := k.secretOf(m)
		if lo < last || lo < 0 || !k.stands(set, s, m, lo, hi) {
			continue
		}
		note(Secret, k.description+" (gitleaks rule "+k.id+")", s[lo:hi])
		b.WriteString(s[last:lo])
		b.WriteString(Secret)
		last = hi
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// secretOf is where the secret of the match m is: the rule's group, or
// gitleaks' default, the first group, or else the whole match.
func (k *keyRule) secretOf(m []int) (lo, hi int) {
	switch {
	case k.group > 0 && 2*k.group+1 < len(m):
		return m[2*k.group], m[2*k.group+1]
	case k.group == 0 && len(m) > 2 && m[2] >= 0:
		return m[2], m[3] // gitleaks takes the first group as the secret
	}
	return m[0], m[1]
}

// stands reports whether the secret s[lo:hi] of the match m stands: no
// placeholder, past the rule's entropy threshold, and allowed by neither
// the global allowlists nor the rule's.
func (k *keyRule) stands(set *providerSet, s string, m []int, lo, hi int) bool {
	secret, match := s[lo:hi], s[m[0]:m[1]]
	if isPlaceholder(secret) || (k.entropy > 0 && shannon(secret) < k.entropy) {
		return false
	}
	line := lineAround(s, m[0], m[1])
	if set.global.allowed(secret, match, line) {
		return false
	}
	for _, a := range k.allow {
		if a.allowed(secret, match, line) {
			return false
		}
	}
	return true
}

// Skip says whether the JSON string at a path (object names and array
// indexes as strings) is protocol-owned and must not be rewritten. A path
// it owns owns everything below it: asked of a member whose value is an
// object or an array, true means the whole value.
type Skip func(path []string) bool

// JSON redacts the string values of a JSON document (names are the
// format's own, never private, but a name can say its value is a secret:
// "api_key": "…" is replaced whole), except where skip says a value is
// protocol-owned. The output is re-encoded compactly, or with two-space
// indentation when indent is set.
func (r *Redactor) JSON(data []byte, indent bool, skip Skip) ([]byte, error) {
	opts := []jsontext.Options{jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false)}
	if indent {
		opts = append(opts, jsontext.WithIndent("  "))
	}
	var out bytes.Buffer
	if err := r.walkJSON(data, jsontext.NewEncoder(&out, opts...), skip, nil); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// FindJSON returns the private data JSON would replace in a JSON document
// or JSON Lines (for the submission scan).
func (r *Redactor) FindJSON(data []byte, skip Skip) ([]Finding, error) {
	var out []Finding
	err := r.walkJSON(data, nil, skip, func(f Finding) { out = append(out, f) })
	return out, err
}

// walkJSON redacts the string values of data into enc (when set); found,
// when set, hears each replacement.
func (r *Redactor) walkJSON(data []byte, enc *jsontext.Encoder, skip Skip, found func(Finding)) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	name := ""
	for {
		depth := dec.StackDepth()
		kind, n := dec.StackIndex(depth)
		isName := kind == '{' && n%2 == 0
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case tok.Kind() != '"':
		case isName:
			name = tok.String()
		case skip == nil || !skip(ValuePath(dec)):
			v := tok.String()
			if kind == '{' && secretMember(name, v) {
				if found != nil {
					found(Finding{Kind: Secret, What: "the value of a secret setting (key, token, password)", Match: v})
				}
				v = Secret
			} else {
				v = r.apply(v, found)
			}
			tok = jsontext.String(v)
		}
		if enc != nil {
			if err := enc.WriteToken(tok); err != nil {
				return err
			}
		}
		if isName && skip != nil {
			if err := copyOwned(dec, enc, skip); err != nil {
				return err
			}
		}
	}
}

// copyOwned copies the member value the decoder is at, when it is an
// object or an array skip owns, as it is (reformatted as the encoder
// formats, as token by token): its strings would all be left alone, and
// walking a request body or a trace of thousands of events token by token
// was most of a result's redaction time.
func copyOwned(dec *jsontext.Decoder, enc *jsontext.Encoder, skip Skip) error {
	if k := dec.PeekKind(); (k != '{' && k != '[') || !skip(ValuePath(dec)) {
		return nil
	}
	if enc == nil {
		return dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return enc.WriteValue(v)
}

// ValuePath is the path (object names and array indexes) of the value a
// decoder just read, from its JSON Pointer.
func ValuePath(dec *jsontext.Decoder) []string {
	ptr := string(dec.StackPointer())
	segs := make([]string, 0, strings.Count(ptr, "/"))
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if strings.IndexByte(seg, '~') >= 0 {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		}
		segs = append(segs, seg)
	}
	return segs
}
