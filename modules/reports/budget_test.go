package reports_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestDashboardBudgetUtilisation: with the budget module on, the dashboard
// totals per project the budgets in force; without it the figure is absent.
func TestDashboardBudgetUtilisation(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		t.Run("budget module off", func(t *testing.T) {
			app := identitytest.Start(t, driver, testkit.WithConfig("modules.budget.enabled", false), testkit.WithConfig("modules.forms.enabled", false))
			r := app.Do(testkit.Request{Method: "GET", Path: "/api/reports/dashboard", Token: identitytest.AdminToken(t, app)})
			if r.Status != 200 || bytes.Contains(r.Body, []byte("budgetUtilisation")) {
				t.Errorf("dashboard without the budget module: %d %s", r.Status, r.Body)
			}
		})
		t.Run("budget module on", func(t *testing.T) {
			app := identitytest.Start(t, driver, testkit.WithConfig("modules.forms.enabled", false))
			admin := identitytest.AdminToken(t, app)
			call := func(method, path string, body any, status int) *testkit.Response {
				t.Helper()
				r := app.Do(testkit.Request{Method: method, Path: path, Token: admin, Body: body})
				if r.Status != status {
					t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
				}
				return r
			}
			id := func(r *testkit.Response) string {
				var out struct{ ID string }
				r.JSON(t, &out)
				return out.ID
			}
			if r := call("GET", "/api/reports/dashboard", nil, 200); !bytes.Contains(r.Body, []byte(`"budgetUtilisation":[]`)) {
				t.Errorf("no budgets: %s", r.Body)
			}
			supplier := id(call("POST", "/api/suppliers", map[string]any{"code": "NCC1", "name": "NCC", "supplierType": "Material"}, 201))
			project := id(call("POST", "/api/projects", map[string]any{"code": "DAB1", "name": "Dự án B"}, 201))
			budget := func(code string, projectID any, approve bool) string {
				b := id(call("POST", "/api/budgets", map[string]any{"code": code, "name": code, "fiscalYear": 2026, "projectId": projectID}, 201))
				line := id(call("POST", "/api/budgets/"+b+"/lines", map[string]any{"code": "L1", "name": "L1", "plannedAmount": 1000.5}, 201))
				if approve {
					call("POST", "/api/budgets/"+b+"/approve", nil, 200)
				}
				return line
			}
			line := budget("NS-1", project, true)
			budget("NS-DRAFT", project, false) // not in force
			budget("NS-ANY", nil, true)        // funds any project: not attributed
			c := id(call("POST", "/api/contracts", map[string]any{"title": "HĐ", "contractType": "Subcontract", "supplierId": supplier,
				"projectId": project, "value": 300, "budgetLineId": line}, 201))
			for _, to := range publishPath[:5] {
				call("POST", "/api/contracts/"+c+"/transitions", map[string]any{"toPhase": to}, 200)
			}
			var d struct{ BudgetUtilisation []map[string]any }
			call("GET", "/api/reports/dashboard", nil, 200).JSON(t, &d)
			want := []map[string]any{{"projectId": project, "code": "DAB1", "name": "Dự án B", "planned": json.Number("1000.5"),
				"committed": json.Number("0"), "reserved": json.Number("300")}}
			got, _ := json.Marshal(d.BudgetUtilisation)
			exp, _ := json.Marshal(want)
			if !bytes.Equal(got, exp) {
				t.Errorf("budgetUtilisation %s, want %s", got, exp)
			}
		})
	})
}
