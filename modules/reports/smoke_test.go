package reports_test

import (
	"bytes"
	"testing"

	"github.com/xuri/excelize/v2"

	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/reports"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/testkit"
)

func TestSmoke(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)
		var sup, prj struct{ ID string }
		app.Do(testkit.Request{Method: "POST", Path: "/api/suppliers", Token: admin, Body: map[string]any{"code": "NCC01", "name": "Công ty A", "supplierType": "Material"}}).JSON(t, &sup)
		app.Do(testkit.Request{Method: "POST", Path: "/api/projects", Token: admin, Body: map[string]any{"code": "DA001", "name": "Dự án 1"}}).JSON(t, &prj)
		for range 3 {
			r := app.Do(testkit.Request{Method: "POST", Path: "/api/contracts", Token: admin, Body: map[string]any{
				"title": "HĐ", "contractType": "Subcontract", "supplierId": sup.ID, "projectId": prj.ID, "value": 1000000}})
			if r.Status != 201 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		}
		r := app.Do(testkit.Request{Method: "GET", Path: "/api/reports/dashboard", Token: admin})
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		t.Logf("%s", r.Body)
		r = app.Do(testkit.Request{Method: "GET", Path: "/api/reports/contracts/export", Token: admin})
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		f, err := excelize.OpenReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := f.GetRows("Contracts")
		t.Logf("%v", rows)
		v, _ := f.GetCellFormula("Contracts", "F5")
		t.Log(v)
	})
}
