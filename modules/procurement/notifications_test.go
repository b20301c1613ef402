package procurement_test

import (
	"testing"

	_ "github.com/contractflow/contractflow/modules/notifications" // the consumer of Notifiable events
)

// TestNotifications: a move notifies the new phase's inbox and the
// creator, not the actor; a saved opinion notifies the creator and
// Procurement, not its author.
func TestNotifications(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		unread := func(token string) int {
			var c struct{ Count int }
			e.do("GET", "/api/notifications/unread-count", token, nil).JSON(t, &c)
			return c.Count
		}
		kinds := func(token string) map[string]int {
			var p struct {
				Items []struct{ Kind, EntityID string }
			}
			e.do("GET", "/api/notifications?pageSize=100", token, nil).JSON(t, &p)
			out := map[string]int{}
			for _, it := range p.Items {
				out[it.Kind]++
			}
			return out
		}
		creator := e.user(t, "Drafter")
		v := e.readyBy(t, creator.token, "B")
		pm := e.token("ProjectManager")
		before := unread(pm)
		e.mustMove(t, creator.token, v.ID, ChoDuAn, "")
		if unread(pm) != before+1 || kinds(pm)["purchaseEvaluation.transitioned"] == 0 {
			t.Fatalf("the project manager was not told: %v", kinds(pm))
		}
		if unread(creator.token) != 0 {
			t.Errorf("the actor was notified of their own move: %v", kinds(creator.token))
		}
		e.mustMove(t, pm, v.ID, ChoYKienPhongBan, "")
		if kinds(creator.token)["purchaseEvaluation.transitioned"] != 1 {
			t.Errorf("the creator was not told of the project manager's move: %v", kinds(creator.token))
		}
		fin := e.token("Finance")
		if r := e.opinion(fin, v.ID, "FIN", "Agree"); r.Status != 200 {
			t.Fatalf("opinion: %d %s", r.Status, r.Body)
		}
		if kinds(creator.token)["purchaseEvaluation.opinionSaved"] != 1 || kinds(e.token("Procurement"))["purchaseEvaluation.opinionSaved"] != 1 {
			t.Errorf("opinion not announced: creator %v, procurement %v", kinds(creator.token), kinds(e.token("Procurement")))
		}
		if kinds(fin)["purchaseEvaluation.opinionSaved"] != 0 {
			t.Error("the opinion's author was notified")
		}
	})
}
