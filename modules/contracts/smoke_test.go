package contracts_test

import (
	"testing"

	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestSmokeFullRun(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)
		var sup, prj struct{ ID string }
		r := app.Do(testkit.Request{Method: "POST", Path: "/api/suppliers", Token: admin, Body: map[string]any{"code": "NCC01", "name": "Công ty A", "supplierType": "Material"}})
		if r.Status != 201 {
			t.Fatalf("supplier %d %s", r.Status, r.Body)
		}
		r.JSON(t, &sup)
		r = app.Do(testkit.Request{Method: "POST", Path: "/api/projects", Token: admin, Body: map[string]any{"code": "DA001", "name": "Dự án 1"}})
		if r.Status != 201 {
			t.Fatalf("project %d %s", r.Status, r.Body)
		}
		r.JSON(t, &prj)
		r = app.Do(testkit.Request{Method: "POST", Path: "/api/contracts", Token: admin, Body: map[string]any{
			"title": "HĐ thầu phụ", "contractType": "Subcontract", "supplierId": sup.ID, "projectId": prj.ID, "value": 1500000000.5}})
		if r.Status != 201 {
			t.Fatalf("contract %d %s", r.Status, r.Body)
		}
		var c struct {
			ID, Phase string
			MaHopDong *string
		}
		r.JSON(t, &c)
		for _, to := range []string{"DangDamPhan", "DangGopY", "DangInKy", "DangKiemTraCCM", "DangTrinhKy", "DangDongDau", "DaPhatHanh"} {
			r = app.Do(testkit.Request{Method: "POST", Path: "/api/contracts/" + c.ID + "/transitions", Token: admin, Body: map[string]any{"toPhase": to}})
			if r.Status != 200 {
				t.Fatalf("to %s: %d %s", to, r.Status, r.Body)
			}
		}
		var detail struct {
			Phase     string
			MaHopDong string
			Approvals []any
		}
		r.JSON(t, &detail)
		if detail.Phase != "DaPhatHanh" || detail.MaHopDong != "DA001-HDTP-001" || len(detail.Approvals) != 7 {
			t.Fatalf("%+v", detail)
		}
		r = app.Do(testkit.Request{Method: "GET", Path: "/api/contracts/inbox", Token: admin})
		if r.Status != 200 {
			t.Fatalf("inbox %d %s", r.Status, r.Body)
		}
		r = app.Do(testkit.Request{Method: "GET", Path: "/api/contracts?search=thầu", Token: admin})
		if r.Status != 200 {
			t.Fatalf("list %d %s", r.Status, r.Body)
		}
	})
}
