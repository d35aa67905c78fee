package protocol

import (
	"math"
	"regexp"
	"testing"
)

func TestSchedule(t *testing.T) {
	t.Parallel()
	req := Schedule(false)
	if len(req) != 22 {
		t.Fatalf("required schedule has %d requests, want 22", len(req))
	}
	all := Schedule(true)
	if len(all) != 34 {
		t.Fatalf("full schedule has %d requests, want 34", len(all))
	}
	wantOrder := []string{"warmup",
		"performance-short-r1", "performance-prompt-4k-r1", "performance-prompt-16k-r1",
		"performance-short-r2", "performance-prompt-4k-r2", "performance-prompt-16k-r2",
		"performance-short-r3", "performance-prompt-4k-r3", "performance-prompt-16k-r3",
		"sanity-I1", "sanity-I2", "sanity-I3", "sanity-I4", "sanity-R1", "sanity-R2", "sanity-R3", "sanity-R4",
		"sanity-T1", "sanity-T2", "sanity-T3", "sanity-T4",
		"concurrency-r1-c1", "concurrency-r1-c2", "concurrency-r1-c3", "concurrency-r1-c4"}
	for i, id := range wantOrder {
		if all[i].ID != id {
			t.Errorf("request %d is %s, want %s", i, all[i].ID, id)
		}
	}
	idRE := regexp.MustCompile(`^(warmup|performance-(short|prompt-4k|prompt-16k)-r[1-3]|sanity-[IRT][1-4]|concurrency-r[1-3]-c[1-4])$`)
	seen := map[string]bool{}
	for _, r := range all {
		if !idRE.MatchString(r.ID) || seen[r.ID] {
			t.Errorf("bad or duplicate id %q", r.ID)
		}
		seen[r.ID] = true
		switch r.Phase {
		case PhaseWarmup:
			if r.Seed != 1 || r.Cap != 128 {
				t.Errorf("%s: seed %d cap %d", r.ID, r.Seed, r.Cap)
			}
		case PhasePerformance:
			if r.Seed != r.Repetition || r.Cap != 512 || r.Concurrency != 1 {
				t.Errorf("%s: seed %d cap %d", r.ID, r.Seed, r.Cap)
			}
		case PhaseSanity:
			if r.Seed != 1 || r.Cap != 2048 {
				t.Errorf("%s: seed %d cap %d", r.ID, r.Seed, r.Cap)
			}
		case PhaseConcurrency:
			if r.Seed != 4*(r.Round-1)+r.Client || r.Cap != 512 || r.Concurrency != 4 || r.CaseID != "short-burst" || r.Repetition != r.Round {
				t.Errorf("%s: %+v", r.ID, r)
			}
		}
	}
	for p, want := range map[Phase][2]int{PhaseWarmup: {1, 1}, PhasePerformance: {9, 9}, PhaseSanity: {12, 12}, PhaseConcurrency: {0, 12}} {
		if got := PlannedCount(p, false); got != want[0] {
			t.Errorf("planned %s without optional: %d, want %d", p, got, want[0])
		}
		if got := PlannedCount(p, true); got != want[1] {
			t.Errorf("planned %s with optional: %d, want %d", p, got, want[1])
		}
	}
}

func TestLengthRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tokens, target int
		ok             bool
	}{
		{4096, 4096, true}, {4015, 4096, true}, {4014, 4096, false}, {4177, 4096, true}, {4178, 4096, false},
		{16384, 16384, true}, {16057, 16384, true}, {16056, 16384, false}, {16711, 16384, true}, {16712, 16384, false},
	} {
		if got := LengthRule(c.tokens, c.target).Within; got != c.ok {
			t.Errorf("LengthRule(%d, %d).Within = %v", c.tokens, c.target, got)
		}
	}
}

// TestLengthRuleSays: the verdict carries the deviation and, outside the
// rule only, the rule's one sentence; the threshold as a report writes it
// is the same 2.
func TestLengthRuleSays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tokens, target int
		deviation      float64
		why            string
	}{
		{4096, 4096, 0, ""},
		{4178, 4096, 2.001953125, "not within 2% of 4096"},
		{16056, 16384, -2.001953125, "not within 2% of 16384"},
		{16057, 16384, -1.995849609375, ""},
	} {
		v := LengthRule(c.tokens, c.target)
		if v.Why != c.why || math.Abs(v.DeviationPercent-c.deviation) > 1e-9 {
			t.Errorf("LengthRule(%d, %d) = %+v, want deviation %v, why %q", c.tokens, c.target, v, c.deviation, c.why)
		}
	}
	if got := LengthTolerance(); got != "2 %" {
		t.Errorf("LengthTolerance() = %q, want \"2 %%\"", got)
	}
}

func TestSanityDefinitions(t *testing.T) {
	t.Parallel()
	defs := SanityDefinitions()
	if len(defs) != 12 {
		t.Fatalf("%d definitions", len(defs))
	}
	per := map[Category]int{}
	for i, d := range defs {
		if d.ID != SanityCases()[i] {
			t.Errorf("definition %d is %s, want %s", i, d.ID, SanityCases()[i])
		}
		c, err := SanityCategory(d.ID)
		if err != nil || c != d.Category {
			t.Errorf("%s: category %s/%v", d.ID, c, err)
		}
		per[d.Category]++
	}
	for _, c := range Categories() {
		if per[c] != 4 {
			t.Errorf("%s has %d cases, want 4", c, per[c])
		}
	}
	s := ProfileSampling()
	if s.Temperature != 1.0 || s.TopP != 0.95 || s.TopK != 20 || s.MinP != 0 || s.PresencePenalty != 0 || s.RepetitionPenalty != 1.0 || s.ReasoningEffort != "xhigh" {
		t.Errorf("sampling %+v", s)
	}
	if k := ProfileTemplateKwargs(); !k.EnableThinking || !k.PreserveThinking {
		t.Errorf("kwargs %+v", k)
	}
}

// TestRemote: a server off loopback, or a URL that cannot be parsed, is
// remote, with the one sentence a result records; loopback by name or
// address is not.
func TestRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ base, why string }{
		{"http://127.0.0.1:8080", ""}, {"http://localhost:1", ""}, {"http://[::1]:8080", ""},
		{"http://10.0.0.5:8080", "the server (10.0.0.5) is not on loopback; standard latency is a loopback measurement"},
		{"https://gpu.example.com", "the server (gpu.example.com) is not on loopback; standard latency is a loopback measurement"},
		{"http://[::1", `the server URL cannot be parsed: parse "http://[::1": missing ']' in host`},
	} {
		if remote, why := Remote(c.base); remote != (c.why != "") || why != c.why {
			t.Errorf("Remote(%s) = %v, %q; want %q", c.base, remote, why, c.why)
		}
	}
}

// TestValidTrack: the two tracks are valid; anything else is not, with
// the sentence that names them.
func TestValidTrack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ track, why string }{
		{"default", ""}, {"custom", ""}, {"Custom", `expected "default" or "custom"`}, {"", `expected "default" or "custom"`},
	} {
		if ok, why := ValidTrack(c.track); ok != (c.why == "") || why != c.why {
			t.Errorf("ValidTrack(%q) = %v, %q; want %q", c.track, ok, why, c.why)
		}
	}
}
