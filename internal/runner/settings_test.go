package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// TestRoundRevealsOnlyTheRequestsSeen: after a concurrency round on a
// server with fewer slots than clients, /slots keeps only each slot's last
// task; only the requests whose own seed is there are verified.
func TestRoundRevealsOnlyTheRequestsSeen(t *testing.T) {
	t.Parallel()
	// One slot: its last task was client 4's (seed 4 of round 1).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slots" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`[{"id":0,"id_task":41,"params":{"seed":4,"temperature":1.0,"top_k":20,"n_predict":128}}]`))
	}))
	defer srv.Close()
	c := client.New(client.Options{BaseURL: srv.URL})
	var sent []*record.Request
	for _, q := range protocol.Schedule(true) {
		if q.Phase == protocol.PhaseConcurrency && q.Round == 1 {
			sent = append(sent, &record.Request{Req: q})
		}
	}
	if len(sent) != protocol.ConcurrencyClients {
		t.Fatalf("%d requests in round 1", len(sent))
	}
	checks := checkSettings(context.Background(), c, "", sent)
	revealed := 0
	for i, chk := range checks {
		if !chk.Revealed {
			if chk.Reason == "" || chk.Seen != nil {
				t.Errorf("%s: not revealed, reason %q, seen %v", sent[i].Req.ID, chk.Reason, chk.Seen)
			}
			continue
		}
		revealed++
		if sent[i].Req.Seed != 4 || chk.Seen["seed"] != 4.0 || chk.Slot == nil || *chk.Slot != 0 || chk.Task == nil || *chk.Task != 41 {
			t.Errorf("%s (seed %d) revealed as %+v", sent[i].Req.ID, sent[i].Req.Seed, chk)
		}
	}
	if revealed != 1 {
		t.Errorf("%d of %d requests revealed; only the one whose seed /slots shows is", revealed, len(checks))
	}
}
