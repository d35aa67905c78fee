package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/record"
)

type slot struct {
	ID     int                        `json:"id"`
	IDTask *int64                     `json:"id_task"`
	Params map[string]json.RawMessage `json:"params"`
}

// checkSettings reads /slots after requests finished and records, for each
// request (the checks are in sent's order), what the slot whose last task
// used its seed resolved. A request is revealed only when its own seed was
// seen: in a concurrency round a slot keeps only its last task, so one seen
// request says nothing of the others. hidden, when set, says why the
// engine's /slots never shows them: it is not asked.
func checkSettings(ctx context.Context, c *client.Client, hidden string, sent []*record.Request) []*contract.SettingsCheck {
	if len(sent) == 0 {
		return nil
	}
	slots, why := readSlots(ctx, c, hidden)
	out := make([]*contract.SettingsCheck, len(sent))
	for i, e := range sent {
		chk := &contract.SettingsCheck{Source: "GET /slots"}
		out[i] = chk
		if why != "" {
			chk.Reason = why
			continue
		}
		match := slotOf(slots, e.Req.Seed)
		if match == nil {
			chk.Reason = "no slot in GET /slots holds a task with this request's seed: the server does not reveal this request's settings"
			if len(sent) > 1 {
				chk.Reason += fmt.Sprintf(" (a slot keeps only its last task; %d requests ended together)", len(sent))
			}
			continue
		}
		chk.Revealed, chk.Slot, chk.Task = true, &match.ID, match.IDTask
		// What the server shows is recorded; whether it differs from what
		// was sent is derive's rule (derive.Mismatches).
		chk.Seen = map[string]any{}
		for _, x := range derive.Settings(e.Req) {
			if got, isNum := numberOf(match.Params[x.Name]); isNum {
				chk.Seen[x.Name] = got
			}
		}
	}
	return out
}

// readSlots asks /slots, newest task first, or says why it cannot tell.
func readSlots(ctx context.Context, c *client.Client, hidden string) ([]slot, string) {
	if hidden != "" {
		return nil, hidden
	}
	status, body, err := c.Get(ctx, "/slots", 10*time.Second)
	var slots []slot
	switch {
	case err != nil:
		return nil, "GET /slots did not answer: " + err.Error()
	case status != 200:
		return nil, fmt.Sprintf("GET /slots answered HTTP %d: the server does not reveal its resolved settings", status)
	case json.Unmarshal(body, &slots) != nil:
		return nil, "GET /slots did not answer a JSON array of slots"
	}
	// ik_llama.cpp lists a slot's settings on the slot itself, not under
	// params (examples/server/server-context.cpp @0192b22
	// get_formated_generation).
	// There n_predict is the server's own limit and the request's cap is
	// max_tokens (the request's n_predict or max_tokens), so the cap is read
	// from max_tokens.
	var flat []map[string]json.RawMessage
	if json.Unmarshal(body, &flat) == nil && len(flat) == len(slots) {
		for i := range slots {
			if len(slots[i].Params) == 0 {
				slots[i].Params = flat[i]
				if limit, ok := flat[i]["max_tokens"]; ok {
					slots[i].Params["n_predict"] = limit
				}
			}
		}
	}
	sort.Slice(slots, func(i, j int) bool { return taskOf(slots[i]) > taskOf(slots[j]) })
	return slots, ""
}

// slotOf is the slot whose last task used seed (the newest such), or nil.
func slotOf(slots []slot, seed int) *slot {
	for i := range slots {
		if got, ok := numberOf(slots[i].Params["seed"]); ok && got == float64(seed) {
			return &slots[i]
		}
	}
	return nil
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
