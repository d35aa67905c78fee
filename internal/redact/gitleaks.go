package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// The provider key formats (GitHub, GitLab, Google, Slack, Stripe, JWTs,
// private key blocks and about two hundred more) come from gitleaks' default
// rule set, a maintained one, embedded as data: gitleaks/gitleaks.toml of
// github.com/zricethezav/gitleaks/v8 v8.30.1 (MIT, gitleaks/LICENSE). Its
// detector is not used as a library: it brings 371 packages (viper,
// zerolog) and global state, and scanning files of a repository is not the
// job here. What gitleaks' rules do not cover (credentials in URLs, AWS
// secret access keys by their variable, bearer tokens of any length, key =
// value assignments, machine paths and names) are strata's own rules in
// rules.go.
//
//go:embed gitleaks/gitleaks.toml
var gitleaksTOML string

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

// keyRule is one compiled provider-key rule.
type keyRule struct {
	id, description string
	re              *regexp.Regexp
	group           int
	entropy         float64
	keywords        []string
	allow           []keyAllow
}

type keyAllow struct {
	target    string // "secret", "match" or "line"
	regexes   []*regexp.Regexp
	stopwords []string
}

// excludedRules are gitleaks rules that match on wording alone: in a
// benchmark's logs and answers ("prompt_tokens", "token = 151645") they
// would rewrite honest evidence. strata's own assignment rule covers their
// intent with an exact list of secret names.
var excludedRules = map[string]bool{"generic-api-key": true}

var (
	keyRulesOnce sync.Once
	keyRules     []keyRule
	globalAllow  keyAllow
	keyRulesErr  error
)

// providerRules compiles the embedded rule set once; it is immutable after.
func providerRules() ([]keyRule, keyAllow, error) {
	keyRulesOnce.Do(func() {
		var c glConfig
		if _, err := toml.Decode(gitleaksTOML, &c); err != nil {
			keyRulesErr = fmt.Errorf("gitleaks rules: %w", err)
			return
		}
		globalAllow = compileAllow(c.Allowlist)
		for _, r := range c.Rules {
			// Rules about file paths (a .p12 file) or that only apply
			// within other files' types do not fit text without a path.
			if r.Regex == "" || r.Path != "" || excludedRules[r.ID] || len(r.Required) > 0 {
				continue
			}
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				keyRulesErr = fmt.Errorf("gitleaks rule %s: %w", r.ID, err)
				return
			}
			k := keyRule{id: r.ID, description: r.Description, re: re, group: r.SecretGroup, entropy: r.Entropy}
			for _, kw := range r.Keywords {
				k.keywords = append(k.keywords, strings.ToLower(kw))
			}
			for _, a := range r.Allowlists {
				if len(a.Paths) > 0 && strings.EqualFold(a.Condition, "AND") {
					continue // needs a file path to hold
				}
				k.allow = append(k.allow, compileAllow(a))
			}
			keyRules = append(keyRules, k)
		}
	})
	return keyRules, globalAllow, keyRulesErr
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
