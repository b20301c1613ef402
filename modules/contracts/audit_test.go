package contracts_test

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestAuditVerify: contract moves, returns and the SLA job's moves chain
// their approval rows; editing one in the database is named by
// "audit verify".
func TestAuditVerify(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		verify := func() error {
			for _, c := range e.app.Kernel.Commands() {
				if c.Name == "audit verify" {
					return c.Run(context.Background(), e.app.Kernel.App(), nil, io.Discard)
				}
			}
			t.Fatal("no audit verify command")
			return nil
		}
		drafter := e.user(t, "Drafter")
		c := e.create(t, drafter.token, nil)
		e.drive(t, c.ID, DangGopY)
		e.mustMove(t, e.user(t, "ProjectManager").token, c.ID, DangDamPhan, "needs another round")
		e.drive(t, c.ID, DaPhatHanh)
		if err := verify(); err != nil {
			t.Fatalf("untouched history: %v", err)
		}
		var id string
		if err := e.app.Kernel.App().DB.Conn(context.Background()).Raw(
			"SELECT id FROM contract_approvals WHERE contract_id = ? AND decision = 'Return'", c.ID).Scan(&id).Error; err != nil || id == "" {
			t.Fatalf("return row: %q, %v", id, err)
		}
		e.exec(t, "UPDATE contract_approvals SET comment = 'all fine' WHERE id = ?", id)
		if err := verify(); err == nil || !strings.Contains(err.Error(), id) {
			t.Fatalf("edited row %s: %v", id, err)
		}
	})
}
