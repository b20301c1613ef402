package contracts_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

// The dashboard's totals (contract_totals) and the inbox counts
// (workflow_counts) are kept by triggers in every writer's transaction.
// After random concurrent creates, edits, moves, rejections, returns,
// deletes and the SLA job's auto-advance, each must equal a recount from
// the rows.
func TestCountersMatchTheRowsAfterConcurrentWrites(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d)
		supplier2 := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC002", "name": "Công ty B", "supplierType": "Material"})
		project2 := e.masterdata(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
		suppliers, projects := []string{e.supplier, supplier2}, []any{e.project, project2, nil} // nil last

		const workers, perWorker = 4, 12
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for i := range perWorker {
					if err := e.randomLife(rng, suppliers, projects, i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// The SLA job moves every overdue contract on, as the system.
		e.app.Clock.Advance(200 * time.Hour)
		e.runSLA(t)
		e.wantCountersMatchRows(t)
	})
}

// randomLife drafts a contract and does a few random things to it.
func (e *env) randomLife(rng *rand.Rand, suppliers []string, projects []any, i int) error {
	// A framework contract may name no project; a subcontract must.
	project := projects[rng.IntN(len(projects))]
	contractType := "FrameworkSupply"
	if project != nil && rng.IntN(2) == 0 {
		contractType = "Subcontract"
	}
	pick := func() any {
		if contractType == "Subcontract" {
			return projects[rng.IntN(len(projects)-1)] // the last is nil
		}
		return projects[rng.IntN(len(projects))]
	}
	over := map[string]any{"contractType": contractType, "supplierId": suppliers[rng.IntN(len(suppliers))], "projectId": project,
		"value": 1_000_000 + rng.IntN(9_000_000)}
	status, body, err := e.raw("POST", "/api/contracts", e.admin, e.body(over))
	if err != nil || status != 201 {
		return fmt.Errorf("create: %d %s %v", status, body, err)
	}
	var c contract
	if err := c.unmarshal(body); err != nil {
		return err
	}
	if rng.IntN(3) == 0 { // an edit of the draft: value, supplier, project
		edit := e.body(map[string]any{"title": c.Title, "contractType": contractType, "supplierId": suppliers[rng.IntN(len(suppliers))],
			"projectId": pick(), "value": 2_000_000 + i, "version": c.Version})
		if status, body, err := e.raw("PUT", "/api/contracts/"+c.ID, e.admin, edit); err != nil || status != 200 {
			return fmt.Errorf("edit: %d %s %v", status, body, err)
		}
	}
	switch rng.IntN(5) {
	case 0: // stays a draft
		return nil
	case 1:
		status, body, err := e.raw("DELETE", "/api/contracts/"+c.ID, e.admin, nil)
		if err != nil || status != 204 {
			return fmt.Errorf("delete: %d %s %v", status, body, err)
		}
		return nil
	}
	target := normalPath[1+rng.IntN(len(normalPath)-1)]
	if err := e.tryDrive(c.ID, target); err != nil {
		return err
	}
	switch rng.IntN(3) {
	case 0:
		if target == DangTrinhKy {
			status, body, err := e.raw("POST", "/api/contracts/"+c.ID+"/transitions", e.admin, map[string]any{"toPhase": TuChoi, "comment": "Từ chối."})
			if err != nil || status != 200 {
				return fmt.Errorf("reject: %d %s %v", status, body, err)
			}
		}
	case 1:
		if target == DangDamPhan {
			status, body, err := e.raw("POST", "/api/contracts/"+c.ID+"/transitions", e.admin, map[string]any{"toPhase": DangSoanThao, "comment": "Sửa lại."})
			if err != nil || status != 200 {
				return fmt.Errorf("return: %d %s %v", status, body, err)
			}
		}
	}
	return nil
}

// wantCountersMatchRows recounts every figure from the rows.
func (e *env) wantCountersMatchRows(t *testing.T) {
	t.Helper()
	conn := e.app.Kernel.App().DB.Conn(context.Background())
	day, hour := "strftime('%Y-%m-%d', created_at)", "strftime('%Y-%m-%d %H', created_at)"
	pday, phour := "strftime('%Y-%m-%d', approved_at)", "strftime('%Y-%m-%d %H', approved_at)"
	dday, dhour := "phase || ' ' || strftime('%Y-%m-%d', sla_deadline)", "phase || ' ' || strftime('%Y-%m-%d %H', sla_deadline)"
	if e.driver == "postgres" {
		day, hour = "to_char(created_at, 'YYYY-MM-DD')", "to_char(created_at, 'YYYY-MM-DD HH24')"
		pday, phour = "to_char(approved_at, 'YYYY-MM-DD')", "to_char(approved_at, 'YYYY-MM-DD HH24')"
		dday, dhour = "phase || ' ' || to_char(sla_deadline, 'YYYY-MM-DD')", "phase || ' ' || to_char(sla_deadline, 'YYYY-MM-DD HH24')"
	}
	live := "FROM contracts WHERE deleted_at IS NULL"
	want := map[string]string{
		"phase":    "SELECT phase AS bucket, COUNT(*) AS n, SUM(value) AS value " + live + " GROUP BY phase",
		"supplier": "SELECT supplier_id AS bucket, COUNT(*) AS n, SUM(value) AS value " + live + " AND phase <> 'TuChoi' GROUP BY supplier_id",
		"project":  "SELECT project_id AS bucket, COUNT(*) AS n, SUM(value) AS value " + live + " AND phase <> 'TuChoi' AND project_id IS NOT NULL GROUP BY project_id",
		"cday":     "SELECT " + day + " AS bucket, COUNT(*) AS n, SUM(value) AS value " + live + " GROUP BY " + day,
		"chour":    "SELECT " + hour + " AS bucket, COUNT(*) AS n, SUM(value) AS value " + live + " GROUP BY " + hour,
		"pday": "SELECT " + pday + " AS bucket, COUNT(*) AS n, 0 AS value FROM contract_approvals " +
			"WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY " + pday,
		"dday":  "SELECT " + dday + " AS bucket, COUNT(*) AS n, 0 AS value " + live + " AND sla_deadline IS NOT NULL GROUP BY " + dday,
		"dhour": "SELECT " + dhour + " AS bucket, COUNT(*) AS n, 0 AS value " + live + " AND sla_deadline IS NOT NULL GROUP BY " + dhour,
		"phour": "SELECT " + phour + " AS bucket, COUNT(*) AS n, 0 AS value FROM contract_approvals " +
			"WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY " + phour,
	}
	type total struct {
		Bucket string
		N      int64
		Value  int64
	}
	read := func(sql string, args ...any) map[string]total {
		var rows []total
		if err := conn.Raw(sql, args...).Scan(&rows).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		out := map[string]total{}
		for _, r := range rows {
			if r.N != 0 || r.Value != 0 {
				out[r.Bucket] = r
			}
		}
		return out
	}
	for dim, sql := range want {
		rows := read(sql)
		kept := read(`SELECT bucket, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(value) AS BIGINT) AS value FROM contract_totals WHERE dim = ? GROUP BY bucket`, dim)
		if len(rows) == 0 && dim != "pday" && dim != "phour" {
			t.Fatalf("%s: no rows to compare", dim)
		}
		if fmt.Sprint(rows) != fmt.Sprint(kept) {
			t.Errorf("contract_totals %s:\n kept    %v\n from rows %v", dim, kept, rows)
		}
	}
	rows := read(`SELECT workflow_definition_id || '/' || phase || '/' || CASE WHEN sla_deadline IS NULL THEN '0' ELSE '1' END AS bucket,
		COUNT(*) AS n, 0 AS value ` + live + ` GROUP BY workflow_definition_id, phase, CASE WHEN sla_deadline IS NULL THEN '0' ELSE '1' END`)
	kept := read(`SELECT definition_id || '/' || phase || '/' || CAST(dated AS VARCHAR(1)) AS bucket, CAST(SUM(n) AS BIGINT) AS n, 0 AS value
		FROM workflow_counts WHERE kind = 'contract' GROUP BY definition_id, phase, dated`)
	if fmt.Sprint(rows) != fmt.Sprint(kept) {
		t.Errorf("workflow_counts:\n kept      %v\n from rows %v", kept, rows)
	}
}
