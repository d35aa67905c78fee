package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
)

// TestHostileAPIKeys: for each API key, a run either refuses
// it before the warm-up (a key the redactor could not take out of the
// folder without taking evidence with it: result.CheckKey, which the run
// calls) or writes a folder that the validator of bench report accepts,
// that is byte for byte the folder written without a key when nothing
// echoed the key, and that holds none of the key's echoes when the engine
// log, the track notes and the build options echo it in every form.
func TestHostileAPIKeys(t *testing.T) {
	t.Parallel()
	run := harness{optional: true}.executeOnce(t)
	b := bundle(t)
	plain := run.finishCopy(t, harness{machine: &redact.Machine{}, optional: true, facts: withLog("")})
	plain.mustBeValid(t)
	for _, c := range []struct {
		key     string
		refused bool
		// wordStart says the key's first ten characters are words (a
		// provider's prefix), no secret alone, so their echo stays.
		wordStart bool
	}{
		{"reasoning", true, false}, {"performance", true, false}, {"llama.cpp", true, false}, {"completed", true, false}, {"assistant", true, false},
		{"b9928-81ff7ab", true, false}, // the engine's build string, which the folder must keep
		{"B9928-81FF7AB", true, false}, {"12345678", true, false}, {"k3y-s7x", true, false}, {"Performance-Short-r1", true, false},
		{"s3cr3t-profile-key", false, false}, {"Zq7+vX2/mW4=pL9k", false, false}, {`k3y"with'quotes<>&amp;`, false, false}, {"key with spaces 42x", false, true},
		{"ключ-секрет-42x", false, true}, {"%41%42-k3y-%43", false, false}, {`back\slash\u0041-9k`, false, true},
		{"0123456789abcdef", true, false}, // strata's own text holds it
		{"sk-proj-ABCDEFGHIJKLMNOPQRSTUV123", false, true}, {strings.Repeat("Zq7vX2mW4pL9", 20), false, false}, {"\u200bk3y-zero-w1dth", false, false},
	} {
		t.Run(c.key, func(t *testing.T) {
			t.Parallel()
			err := result.CheckKey(c.key, b, &run.rec.Server)
			if (err != nil) != c.refused {
				t.Fatalf("CheckKey: %v, want refused %v", err, c.refused)
			}
			if c.refused {
				return
			}
			m := redact.Machine{Secrets: []string{c.key}}
			honest := run.finishCopy(t, harness{machine: &m, optional: true, facts: withLog("")})
			honest.mustBeValid(t)
			sameFiles(t, honest.dir, plain.dir)

			echoes := echoesOf(c.key)
			if c.wordStart {
				echoes = echoes[:len(echoes)-1]
			}
			all := strings.Join(echoes, "\n")
			notes := "notes: " + all
			id := record.Identity{Track: "custom", TrackNotes: &notes, BuildOptions: []string{"-DGGML_CUDA=ON", all}, Command: "strata bench run"}
			echoed := run.finishCopy(t, harness{machine: &m, optional: true, facts: withLog(all), identity: &id})
			echoed.mustBeValid(t)
			entries, _ := os.ReadDir(echoed.dir)
			for _, e := range entries {
				data, _ := os.ReadFile(filepath.Join(echoed.dir, e.Name()))
				for _, echo := range echoes {
					quoted, _ := json.Marshal(echo)
					for _, form := range []string{echo, string(quoted[1 : len(quoted)-1])} {
						if i := strings.Index(string(data), form); i >= 0 {
							t.Errorf("%s holds the echo %q: …%s…", e.Name(), echo, data[max(0, i-40):min(len(data), i+len(form)+20)])
						}
					}
				}
			}
		})
	}
}

// withLog is the conforming facts with an engine log holding text.
func withLog(text string) *record.Facts {
	f := conformingFacts()
	f.EngineLog = []byte("main: build = 9928 (81ff7ab)\nllama.cpp server listening\nslot release: id 0 | task 7 | completed, expert cache 99.0% hit\n" + text + "\n")
	return &f
}

// echoesOf is every form a server may echo key in: as it is, in
// capitals, reversed, base64 (alone and as basic credentials), in
// hexadecimal, URL-, \u- and HTML-entity-encoded, split by spaces and by
// zero-width spaces, and its first ten characters.
func echoesOf(key string) []string {
	var pct, uesc, ent, spaced, zw strings.Builder
	for i := 0; i < len(key); i++ {
		fmt.Fprintf(&pct, "%%%02X", key[i])
	}
	for _, r := range key {
		fmt.Fprintf(&uesc, `\u%04x`, r)
		fmt.Fprintf(&ent, "&#%d;", r)
		spaced.WriteString(string(r) + " ")
		zw.WriteString(string(r) + "\u200b")
	}
	rev := []rune(key)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return []string{key, strings.ToUpper(key), string(rev), base64.StdEncoding.EncodeToString([]byte(key)),
		base64.StdEncoding.EncodeToString([]byte("bob:" + key)), hex.EncodeToString([]byte(key)), url.QueryEscape(key), pct.String(),
		uesc.String(), ent.String(), strings.TrimSpace(spaced.String()), zw.String(), string([]rune(key)[:10]) + "…"}
}

// sameFiles fails unless the two folders hold the same files, byte for
// byte.
func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	entries, _ := os.ReadDir(want)
	gotEntries, _ := os.ReadDir(got)
	if len(entries) != len(gotEntries) {
		t.Errorf("%d files, want %d", len(gotEntries), len(entries))
	}
	for _, e := range entries {
		w, _ := os.ReadFile(filepath.Join(want, e.Name()))
		g, err := os.ReadFile(filepath.Join(got, e.Name()))
		if err != nil || string(g) != string(w) {
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s differs from the folder without a key at byte %d: %q, want %q", e.Name(), i, g[i:min(len(g), i+60)], w[i:min(len(w), i+60)])
		}
	}
}
