package redact

import (
	"strings"
	"sync"
)

// Keyring holds the secrets a command learns while it runs (the API key a
// run reads from its variable), so that everything the command prints can
// be cleaned of them: a server that echoes the key in an error must not put
// it on the terminal or into a log the user pastes. It also holds the words
// the user typed, which it shows as typed. It is safe for concurrent use;
// the zero value is empty.
type Keyring struct {
	mu    sync.RWMutex
	keys  []string
	forms *knownSet
	typed []string
}

// Add registers a secret ("" is ignored).
func (k *Keyring) Add(secret string) {
	if secret == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys = append(k.keys, secret)
	k.forms = newKnownSet(k.keys)
}

// Redact replaces every registered secret in s, in every form the result
// redactor finds it in (another letter case, reversed, inside base64), and
// the secret forms the redactor's rules know (credentials, provider keys),
// with Secret. Paths and names are left alone: this is for what strata
// prints to the user's own terminal, not for what leaves the machine.
// The words the user typed are shown as typed (Typed says where).
func (k *Keyring) Redact(s string) string {
	k.mu.RLock()
	forms, typed := k.forms, k.typed
	k.mu.RUnlock()
	out, hidden := redactWith(forms, s)
	if len(hidden) == 0 || len(typed) == 0 {
		return out
	}
	if shown, ok := showTyped(forms, s, out, hidden, typed); ok {
		return shown
	}
	return out
}

// redactWith replaces the secret forms, and the forms of the known
// secrets, in s; it returns the text and what it replaced.
func redactWith(forms *knownSet, s string) (string, []string) {
	var hidden []string
	note := func(_, _, match string) { hidden = append(hidden, match) }
	if forms != nil {
		s = forms.replace(s, note)
	}
	if s == "" {
		return s, hidden
	}
	return secretForms(s, note), hidden
}

// SecretsOnly replaces the secret forms the redactor's rules know
// (provider keys, credentials in URLs, bearer tokens, secret settings,
// private key blocks) and nothing else.
func SecretsOnly(s string) string {
	out, _ := redactWith(nil, s)
	return out
}

// secretForms replaces the secret forms of the rules, in their order:
// empty key blocks and the bodies after them and pairs gitleaks would
// break apart, then gitleaks' rules, then strata's.
func secretForms(s string, note func(kind, what, match string)) string {
	low := asciiLower(s)
	if strings.Contains(low, "-----end") {
		// Before gitleaks' rule of key blocks, which reads an empty block
		// on to the next line ending in "KEY-----".
		s = bodiesAfterEmptyBlocks(s, note)
		low = asciiLower(s)
	}
	for _, ru := range pairedRules {
		if ru.applies(low) {
			s = ru.replace(s, note)
			low = asciiLower(s)
		}
	}
	s = providerKeys(s, note)
	low = asciiLower(s)
	for _, ru := range secretRules {
		if ru.applies(low) {
			s = ru.replace(s, note)
		}
	}
	return s
}
