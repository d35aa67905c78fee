package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/protocol"
)

// SettingsCheck is what the server revealed of the settings it resolved for
// a request, and where they differ from what was sent. llama.cpp's /slots
// keeps the last task's params per slot.
type SettingsCheck struct {
	Source string `json:"source"`
	// Revealed is false when the server shows nothing; Reason says why.
	Revealed   bool           `json:"revealed"`
	Reason     string         `json:"reason,omitempty"`
	Slot       *int           `json:"slot,omitempty"`
	Task       *int64         `json:"id_task,omitempty"`
	Seen       map[string]any `json:"seen,omitempty"`
	Mismatches []string       `json:"mismatches,omitempty"`
	// Ignored lists settings the engine is known to ignore (not verifiable).
	Ignored []string `json:"not_verifiable,omitempty"`
}

type slot struct {
	ID     int                        `json:"id"`
	IDTask *int64                     `json:"id_task"`
	Params map[string]json.RawMessage `json:"params"`
}

// expectation is one setting as /slots names it and the value sent.
type expectation struct {
	name string
	want float64
	// float32: llama.cpp stores these as float and prints 0.95 as 0.949999988.
	float32 bool
}

func expectations(req protocol.Request) []expectation {
	s := protocol.ProfileSampling()
	return []expectation{
		{"seed", float64(req.Seed), false},
		{"temperature", s.Temperature, true},
		{"top_k", float64(s.TopK), false},
		{"top_p", s.TopP, true},
		{"min_p", s.MinP, true},
		{"presence_penalty", s.PresencePenalty, true},
		// llama.cpp reads repeat_penalty, not repetition_penalty; the value it
		// resolved is what decides whether the sent 1.0 held.
		{"repeat_penalty", s.RepetitionPenalty, true},
		{"n_predict", float64(req.Cap), false},
	}
}

// checkSettings reads /slots after requests finished and compares each
// request's settings with the slot whose last task used its seed.
func checkSettings(ctx context.Context, c *client.Client, sent []*Executed) *SettingsCheck {
	if len(sent) == 0 {
		return nil
	}
	chk := &SettingsCheck{Source: "GET /slots"}
	status, body, err := c.Get(ctx, "/slots", 10*time.Second)
	var slots []slot
	switch {
	case err != nil:
		chk.Reason = "GET /slots did not answer: " + err.Error()
		return chk
	case status != 200:
		chk.Reason = fmt.Sprintf("GET /slots answered HTTP %d: the server does not reveal its resolved settings", status)
		return chk
	case json.Unmarshal(body, &slots) != nil:
		chk.Reason = "GET /slots did not answer a JSON array of slots"
		return chk
	}
	sort.Slice(slots, func(i, j int) bool { return taskOf(slots[i]) > taskOf(slots[j]) })
	chk.Seen = map[string]any{}
	for _, e := range sent {
		var match *slot
		for i := range slots {
			if seed, ok := numberOf(slots[i].Params["seed"]); ok && seed == float64(e.Req.Seed) {
				match = &slots[i]
				break
			}
		}
		if match == nil {
			continue
		}
		chk.Revealed = true
		if len(sent) == 1 {
			chk.Slot, chk.Task = &match.ID, match.IDTask
		}
		seen := map[string]any{}
		for _, x := range expectations(e.Req) {
			raw, ok := match.Params[x.name]
			if !ok {
				continue
			}
			got, isNum := numberOf(raw)
			if !isNum {
				continue
			}
			seen[x.name] = got
			if !sameSetting(got, x.want, x.float32) {
				chk.Mismatches = append(chk.Mismatches, fmt.Sprintf("%s = %v, not the %v sent (%s)", x.name, got, x.want, e.Req.ID))
			}
		}
		if len(sent) == 1 {
			chk.Seen = seen
		} else {
			chk.Seen[e.Req.ID] = seen
		}
	}
	if !chk.Revealed {
		chk.Reason = "no slot in GET /slots holds a task with this request's seed: the server does not reveal this request's settings"
		chk.Seen = nil
	}
	return chk
}

func taskOf(s slot) int64 {
	if s.IDTask == nil {
		return -1
	}
	return *s.IDTask
}

func numberOf(raw json.RawMessage) (float64, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	return f, true
}

func sameSetting(got, want float64, f32 bool) bool {
	if f32 {
		return float32(got) == float32(want) || math.Abs(got-want) <= 1e-6
	}
	return got == want
}
