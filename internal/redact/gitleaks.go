package redact

import (
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// The provider key formats (GitHub, GitLab, Google, Slack, Stripe, JWTs,
// private key blocks and about two hundred more) come from gitleaks' default
// rule set, a maintained one, as data: gitleaks/gitleaks.toml of
// github.com/zricethezav/gitleaks/v8 v8.30.1 (MIT, gitleaks/LICENSE), the
// rules strata applies written out as Go values in gitleaks_rules.go
// (TestGitleaksRulesAreTheTOML holds the two equal, and -update rewrites
// the Go file), so no strata command decodes the TOML before it prints.
// Its detector is not used as a library: it brings hundreds of packages
// (viper, zerolog) and global state, and scanning files of a repository
// is not the job here. What gitleaks' rules do not
// cover (credentials in URLs, AWS secret access keys by their variable,
// bearer tokens of any length, key = value assignments, machine paths and
// names) are strata's own rules in rules.go.
//
//go:generate go test -run ^TestGitleaksRulesAreTheTOML$ -update .

type glAllow struct {
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Stopwords   []string `toml:"stopwords"`
	Condition   string   `toml:"condition"`
	Paths       []string `toml:"paths"`
	Description string   `toml:"description"`
	Commits     []string `toml:"commits"`
}

type glRule struct {
	ID          string           `toml:"id"`
	Description string           `toml:"description"`
	Regex       string           `toml:"regex"`
	Path        string           `toml:"path"`
	SecretGroup int              `toml:"secretGroup"`
	Entropy     float64          `toml:"entropy"`
	Keywords    []string         `toml:"keywords"`
	Tags        []string         `toml:"tags"`
	Allowlists  []glAllow        `toml:"allowlists"`
	Required    []map[string]any `toml:"required"`
	SkipReport  bool             `toml:"skipReport"`
}

type glConfig struct {
	Title      string   `toml:"title"`
	MinVersion string   `toml:"minVersion"`
	Allowlist  glAllow  `toml:"allowlist"`
	Rules      []glRule `toml:"rules"`
}

// keyRule is one provider-key rule.
type keyRule struct {
	id, description string
	group           int
	entropy         float64
	keywords        []int // indexes into providerSet.keywords
	allow           []keyAllow
	// expr is compiled on the rule's first use: a text without any of a
	// rule's keywords never runs it, so a process that prints a few lines
	// compiles few of the two hundred, and none pays for them all.
	// TestProviderRulesLoad compiles every one.
	expr func() (compiledKey, error)
}

// compiledKey is a rule's regexp and the longest text it can match, in
// bytes, or -1 when it has no bound: a bounded rule only runs near its
// keywords.
type compiledKey struct {
	re    *regexp.Regexp
	reach int
}

// bounded reports whether the rule's matches have a longest length.
func (c compiledKey) bounded() bool { return c.reach >= 0 }

// window is how far from a keyword the rule's windows reach: its longest
// match, or unboundedReach for a rule without one (whose windows then
// widen to the text around them).
func (c compiledKey) window() int {
	if !c.bounded() {
		return unboundedReach
	}
	return c.reach
}

// compileKey is expr's regexp and reach, made once.
func compileKey(expr string) func() (compiledKey, error) {
	return sync.OnceValues(func() (compiledKey, error) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return compiledKey{}, err
		}
		return compiledKey{re: re, reach: longestMatch(expr)}, nil
	})
}

type keyAllow struct {
	target    string // "secret", "match" or "line"
	regexes   []*regexp.Regexp
	stopwords []string
}

// usable reports whether strata applies a gitleaks rule: rules about file
// paths (a .p12 file), that only apply within other findings, or that match
// on wording alone (excludedRules) do not fit a result's text.
func usable(r glRule) bool {
	return r.Regex != "" && r.Path == "" && !excludedRules[r.ID] && len(r.Required) == 0
}

// excludedRules are gitleaks rules that match on wording alone: in a
// benchmark's logs and answers ("prompt_tokens", "token = 151645") they
// would rewrite honest evidence. strata's own assignment rule covers their
// intent with an exact list of secret names.
var excludedRules = map[string]bool{"generic-api-key": true}

// providerSet is the compiled rule set: the rules, the global allowlist,
// and every rule's keywords in one automaton, so one pass over a text
// finds them all (as gitleaks does, with the same library).
type providerSet struct {
	rules    []keyRule
	global   keyAllow
	keywords []string
	// trie is built on first use, as building it costs more than
	// searching a few short texts: the first shortScans short texts a
	// process redacts are searched keyword by keyword instead, so a
	// command that prints a handful of lines never builds it, and one that
	// redacts a result folder soon does.
	trie  func() *ahocorasick.Trie
	short atomic.Int32
}

const (
	shortText  = 256 // bytes
	shortScans = 256
)

// providerRules compiles the embedded rule set once; it is immutable after.
var providerRules = sync.OnceValues(func() (*providerSet, error) {
	c := gitleaksRules
	set := &providerSet{global: compileAllow(c.Allowlist)}
	index := map[string]int{}
	for _, r := range c.Rules {
		if !usable(r) {
			continue
		}
		k := keyRule{id: r.ID, description: r.Description, group: r.SecretGroup, entropy: r.Entropy, expr: compileKey(r.Regex)}
		for _, kw := range r.Keywords {
			kw = strings.ToLower(kw)
			i, ok := index[kw]
			if !ok {
				i = len(set.keywords)
				index[kw] = i
				set.keywords = append(set.keywords, kw)
			}
			k.keywords = append(k.keywords, i)
		}
		for _, a := range r.Allowlists {
			if len(a.Paths) > 0 && strings.EqualFold(a.Condition, "AND") {
				continue // needs a file path to hold
			}
			k.allow = append(k.allow, compileAllow(a))
		}
		set.rules = append(set.rules, k)
	}
	set.trie = sync.OnceValue(func() *ahocorasick.Trie {
		return ahocorasick.NewTrieBuilder().AddStrings(set.keywords).Build()
	})
	return set, nil
})

// keywordHits is where each keyword starts in low, by keyword index; nil
// when low holds no keyword, as most of a result's strings do (the table
// is only made for a text that needs it: a result has thousands of short
// strings, and a table per string was most of their redaction's cost).
func (set *providerSet) keywordHits(low string) [][]int {
	if len(low) <= shortText && set.short.Add(1) <= shortScans {
		return set.scanHits(low)
	}
	return set.trieHits(low)
}

// trieHits is keywordHits by the automaton, in one pass.
func (set *providerSet) trieHits(low string) [][]int {
	var hits [][]int
	set.trie().Walk([]byte(low), func(end, n, pattern int64) bool {
		if hits == nil {
			hits = make([][]int, len(set.keywords))
		}
		hits[pattern] = append(hits[pattern], int(end-n+1))
		return true
	})
	return hits
}

// scanHits is keywordHits by one search per keyword: every start of every
// keyword, overlapping ones included, as the trie reports them.
func (set *providerSet) scanHits(low string) [][]int {
	var hits [][]int
	for k, kw := range set.keywords {
		for off := 0; off < len(low); {
			j := strings.Index(low[off:], kw)
			if j < 0 {
				break
			}
			if hits == nil {
				hits = make([][]int, len(set.keywords))
			}
			hits[k] = append(hits[k], off+j)
			off += j + 1
		}
	}
	return hits
}

func compileAllow(a glAllow) keyAllow {
	k := keyAllow{target: a.RegexTarget}
	if k.target == "" {
		k.target = "secret"
	}
	for _, s := range a.Regexes {
		if re, err := regexp.Compile(s); err == nil {
			k.regexes = append(k.regexes, re)
		}
	}
	for _, w := range a.Stopwords {
		k.stopwords = append(k.stopwords, strings.ToLower(w))
	}
	return k
}

// allowed reports whether an allowlist lets a finding stand.
func (a keyAllow) allowed(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	for _, re := range a.regexes {
		if re.MatchString(target) {
			return true
		}
	}
	low := strings.ToLower(secret)
	for _, w := range a.stopwords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// shannon is the entropy in bits per character gitleaks' thresholds use.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	e := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		e -= p * math.Log2(p)
	}
	return e
}

// lineAround is the line of s holding [start, end).
func lineAround(s string, start, end int) string {
	lo := strings.LastIndexByte(s[:start], '\n') + 1
	hi := strings.IndexByte(s[end:], '\n')
	if hi < 0 {
		return s[lo:]
	}
	return s[lo : end+hi]
}

// longestMatch is the most bytes a match of expr can span, or -1 when it
// has no bound (a star, a plus, an open repeat) or does not parse.
func longestMatch(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return -1
	}
	return spanOf(re.Simplify())
}

func spanOf(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) * utf8.UTFMax // a folded letter may be longer than its own form (K, the Kelvin sign)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return spanOf(re.Sub[0])
	case syntax.OpRepeat:
		one := spanOf(re.Sub[0])
		if re.Max < 0 || one < 0 {
			return -1
		}
		return one * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n := spanOf(sub)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	case syntax.OpStar, syntax.OpPlus:
		return -1
	}
	return 0 // empty-width assertions
}

// windows are the stretches of a text of size n within reach of a keyword
// of the rule: every match of a bounded rule that holds one of its
// keywords lies inside one, and the rule's regexp (which backtracks on a
// small input instead of stepping an automaton over megabytes) runs only
// there.
func (k keyRule) windows(set *providerSet, hits [][]int, s string, c compiledKey) [][2]int {
	reach := c.window()
	var spans [][2]int
	for _, kw := range k.keywords {
		for _, at := range hits[kw] {
			spans = append(spans, [2]int{max(0, at-reach), min(len(s), at+len(set.keywords[kw])+reach)})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	// An unbounded match may run on past any reach: its window starts and
	// ends where the text has a space, so it does not cut a key in the
	// middle. Each stretch is walked once: a span that starts inside the
	// window before it joins it.
	widen := func(w [2]int, from int) [2]int {
		if c.bounded() {
			return w
		}
		for w[0] > from && !isSpace(s[w[0]-1]) {
			w[0]--
		}
		for w[1] < len(s) && !isSpace(s[w[1]]) {
			w[1]++
		}
		return w
	}
	out := [][2]int{widen(spans[0], 0)}
	for _, w := range spans[1:] {
		last := &out[len(out)-1]
		switch {
		case w[1] <= last[1]:
		case w[0] <= last[1]:
			*last = widen([2]int{last[0], w[1]}, last[0])
		default:
			w = widen(w, last[1])
			if w[0] <= last[1] {
				last[1] = w[1]
			} else {
				out = append(out, w)
			}
		}
	}
	return out
}

// unboundedReach is the first window around a keyword for a rule whose
// matches have no bound (a JWT, a curl command line); the window doubles
// while a match runs into its edge.
const unboundedReach = 4096

// findKeyed is the rule's matches in s (as FindAllStringSubmatchIndex),
// found only near its keywords, as gitleaks runs a rule only on text that
// holds one. A bounded rule's match that touches a window's edge holds no
// keyword (one that does lies strictly inside) and, cut off there, may not
// be what the whole text holds, so it is left out; for an unbounded rule
// such a match widens the window until it ends inside or the window is the
// whole text.
func (k keyRule) findKeyed(set *providerSet, s string, hits [][]int) [][]int {
	present := len(k.keywords) == 0
	for _, kw := range k.keywords {
		present = present || len(hits[kw]) > 0
	}
	if !present {
		return nil
	}
	c, err := k.expr()
	if err != nil {
		return nil // TestProviderRulesLoad holds every embedded rule to compiling
	}
	reach := c.window()
	if len(k.keywords) == 0 || len(s) <= 4*reach {
		return c.re.FindAllStringSubmatchIndex(s, -1)
	}
	var out [][]int
	last := 0 // where the previous window's last match ended
	for _, w := range k.windows(set, hits, s, c) {
		out, last = c.findIn(s, max(w[0], last), w[1], last, out)
	}
	return out
}

// findIn appends to out the matches in the window s[lo:hi] that start at
// or after last (where the previous window's last match ended) and do not
// touch the window's edge, widening an unbounded rule's window while one
// does; it returns out and where its last match ended.
func (c compiledKey) findIn(s string, lo, hi, last int, out [][]int) ([][]int, int) {
	for grow := c.window(); ; grow *= 2 {
		ms := c.re.FindAllStringSubmatchIndex(s[lo:hi], -1)
		touches := false
		for _, m := range ms {
			touches = touches || atEdge(m, lo, hi, last, len(s))
		}
		if touches && !c.bounded() {
			lo, hi = max(last, lo-grow), min(len(s), hi+grow)
			continue
		}
		for _, m := range ms {
			if atEdge(m, lo, hi, last, len(s)) {
				continue
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += lo
				}
			}
			if m[0] >= last {
				out = append(out, m)
				last = m[1]
			}
		}
		return out, last
	}
}

// atEdge reports whether m, a match in the window [lo, hi) of a text of
// n bytes, touches an edge of the window that is not an edge of the text
// (or, at its start, the end of the previous window's last match).
func atEdge(m []int, lo, hi, last, n int) bool {
	return (m[0] == 0 && lo > last) || (m[1] == hi-lo && hi < n)
}

// asciiLower is s with A–Z in lower case and every other byte as it is,
// so offsets in it are offsets in s.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s // nothing to lower: no copy
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
