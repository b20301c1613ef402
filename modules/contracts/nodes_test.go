package contracts_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// secondNode starts another instance on a's database and storage, as a
// second node of the same deployment, with its own manual clock at a's time.
func secondNode(t *testing.T, a *env) *env {
	t.Helper()
	cfg := a.app.Kernel.App().Config
	b := startWith(t, a.driver, startOptions{bare: true},
		testkit.WithConfig("database.dsn", cfg.Database.DSN), testkit.WithConfig("storage.path", cfg.Storage.Path))
	b.app.Clock.Set(a.app.Clock.Now())
	b.supplier, b.project = a.supplier, a.project
	return b
}

// TestTwoNodes: two instances sharing one database publish contracts at the
// same time without ever sharing a code, and run the SLA job at the same
// time without moving a contract twice.
func TestTwoNodes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, a *env) {
		b := secondNode(t, a)
		nodes := []*env{a, b}

		t.Run("publications", func(t *testing.T) {
			ids := a.createMany(t, 20, func(int) map[string]any { return nil })
			a.placeIn(t, ids, DangTrinhKy)
			codes := make([]string, len(ids))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					n := nodes[i%2]
					status, body, err := n.raw("POST", "/api/contracts/"+id+"/transitions", n.admin, map[string]any{"toPhase": DangDongDau})
					var c contract
					if err != nil || status != 200 || c.unmarshal(body) != nil {
						t.Errorf("publish on node %d: %d %s %v", i%2, status, body, err)
						return
					}
					codes[i] = c.code()
				}()
			}
			close(start)
			wg.Wait()
			var want []string
			for i := 1; i <= 20; i++ {
				want = append(want, fmt.Sprintf("DA001-HDTP-%03d", i))
			}
			slices.Sort(codes)
			if !slices.Equal(codes, want) {
				t.Fatalf("codes %v", codes)
			}
		})

		t.Run("SLA job on both nodes", func(t *testing.T) {
			ids := a.createMany(t, 10, func(int) map[string]any { return nil })
			for _, n := range nodes {
				n.app.Clock.Advance(169 * time.Hour)
			}
			var wg sync.WaitGroup
			for _, n := range nodes {
				for _, j := range n.app.Kernel.Jobs() {
					if j.Name == "workflow.sla" {
						wg.Add(1)
						go func() {
							defer wg.Done()
							if err := j.Run(context.Background()); err != nil {
								t.Errorf("sla job: %v", err)
							}
						}()
					}
				}
			}
			wg.Wait()
			for _, id := range ids {
				if n := a.count(t, "SELECT COUNT(*) FROM contract_approvals WHERE contract_id = ?", id); n != 1 {
					t.Errorf("%s: %d approval rows, want 1", id, n)
				}
			}
		})

		if a.driver == "postgres" {
			t.Run("a node holding the job's lock keeps the other out", func(t *testing.T) {
				id := a.create(t, a.admin, nil).ID
				for _, n := range nodes {
					n.app.Clock.Advance(169 * time.Hour)
				}
				err := a.app.Kernel.App().DB.InTx(context.Background(), func(ctx context.Context) error {
					// The lock RunExclusive takes for the job named workflow.sla.
					if err := a.app.Kernel.App().DB.Conn(ctx).Exec("SELECT pg_advisory_xact_lock(7312, hashtext(current_schema() || '/workflow.sla'))").Error; err != nil {
						return err
					}
					b.runSLA(t)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := a.get(t, a.admin, id); got.Phase != DangSoanThao {
					t.Fatalf("moved to %s while another node held the lock", got.Phase)
				}
				b.runSLA(t)
				if got := a.get(t, a.admin, id); got.Phase != DangDamPhan {
					t.Fatalf("not moved once the lock was free: %s", got.Phase)
				}
			})
		}
	})
}
