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
// request, what the slot whose last task used its seed resolved. hidden,
// when set, says why the engine's /slots never shows them: it is not asked.
func checkSettings(ctx context.Context, c *client.Client, hidden string, sent []*record.Request) *contract.SettingsCheck {
	if len(sent) == 0 {
		return nil
	}
	chk := &contract.SettingsCheck{Source: "GET /slots"}
	if hidden != "" {
		chk.Reason = hidden
		return chk
	}
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
		// What the server shows is recorded; whether it differs from what
		// was sent is derive's rule (derive.Mismatches).
		for _, x := range derive.Settings(e.Req) {
			raw, ok := match.Params[x.Name]
			if !ok {
				continue
			}
			if got, isNum := numberOf(raw); isNum {
				seen[x.Name] = got
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
