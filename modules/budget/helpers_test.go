package budget_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/contractflow/contractflow/modules/budget" // the module under test
	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// t0 is when every test instance's clock starts.
var t0 = time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC)

// The contract phases the tests drive through.
const (
	DangSoanThao   = "DangSoanThao"
	DangDamPhan    = "DangDamPhan"
	DangGopY       = "DangGopY"
	DangInKy       = "DangInKy"
	DangKiemTraCCM = "DangKiemTraCCM"
	DangTrinhKy    = "DangTrinhKy"
	DangDongDau    = "DangDongDau"
	DaPhatHanh     = "DaPhatHanh"
	TuChoi         = "TuChoi"
)

var normalPath = []string{DangSoanThao, DangDamPhan, DangGopY, DangInKy, DangKiemTraCCM, DangTrinhKy, DangDongDau, DaPhatHanh}

// env is one running instance with an administrator, supplier NCC001 and
// projects DA001 and DA002.
type env struct {
	app      *testkit.App
	driver   string
	admin    string
	supplier string
	project  string
	project2 string
}

func start(t *testing.T, driver string, opts ...testkit.Option) *env {
	t.Helper()
	all := append([]testkit.Option{
		testkit.WithClock(clock.NewManual(t0)),
		testkit.WithConfig("jwt.accessTokenMinutes", 60*24*365),
		testkit.WithConfig("rateLimit.enabled", false),
		testkit.WithConfig("modules.forms.enabled", false),
	}, opts...)
	app := identitytest.Start(t, driver, all...)
	e := &env{app: app, driver: driver, admin: identitytest.AdminToken(t, app)}
	e.supplier = e.post(t, "/api/suppliers", map[string]any{"code": "NCC001", "name": "Công ty Vật tư A", "supplierType": "Material"})
	e.project = e.post(t, "/api/projects", map[string]any{"code": "DA001", "name": "Dự án Một"})
	e.project2 = e.post(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
	return e
}

// forEachDriver starts an instance per database, as parallel subtests of a
// parallel test.
func forEachDriver(t *testing.T, fn func(t *testing.T, e *env), opts ...testkit.Option) {
	t.Helper()
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) { fn(t, start(t, d, opts...)) })
}

func (e *env) do(method, path, token string, body any) *testkit.Response {
	return e.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
}

// post creates something as the administrator and returns its id.
func (e *env) post(t testing.TB, path string, body any) string {
	t.Helper()
	r := e.do("POST", path, e.admin, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID
}

// raw sends a request without checking the answer against the OpenAPI
// document: bulk and concurrent set-up only (the checker serializes).
func (e *env) raw(method, path, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.app.Kernel.HTTP().Test(req, -1)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// token returns the access token of a fresh user holding roles.
func (e *env) token(t testing.TB, roles ...string) string {
	t.Helper()
	_, _, tok := identitytest.NewUser(t, e.app, roles...)
	return tok
}

type entry struct {
	ID, BudgetLineID, Kind, Note, Source string
	ContractID                           *string
	Amount                               json.Number
}

type adjustment struct {
	ID, BudgetLineID, Reason string
	Delta                    json.Number
}

type line struct {
	ID, BudgetID, Code, Name                        string
	Category                                        *string
	OriginalAmount, AdjustmentsTotal, PlannedAmount json.Number
	ReservedAmount, CommittedAmount, ActualAmount   json.Number
	Remaining                                       json.Number
	Version                                         int
	Commitments                                     []entry
	Adjustments                                     []adjustment
}

type budget struct {
	ID, Code, Name, Currency, Status, OnExceed, Description string
	ProjectID, DepartmentID                                 *string
	FiscalYear, Version                                     int
	PlannedTotal, AdjustmentsTotal, ReservedTotal           json.Number
	CommittedTotal, ActualTotal, Remaining                  json.Number
	Lines                                                   []line
}

func (b budget) line(code string) line {
	for _, l := range b.Lines {
		if l.Code == code {
			return l
		}
	}
	return line{}
}

var codeSeq atomic.Int64

// newBudget creates a Draft budget (body changed by over; a nil value
// removes the key) as the administrator.
func (e *env) newBudget(t testing.TB, over map[string]any) budget {
	t.Helper()
	body := map[string]any{"code": fmt.Sprintf("NS-%03d", codeSeq.Add(1)), "name": "Ngân sách thử", "fiscalYear": 2026,
		"projectId": e.project, "onExceed": "Block"}
	for k, v := range over {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	r := e.do("POST", "/api/budgets", e.admin, body)
	if r.Status != 201 {
		t.Fatalf("create budget: %d %s", r.Status, r.Body)
	}
	var b budget
	r.JSON(t, &b)
	return b
}

func (e *env) addLine(t testing.TB, budgetID, code string, planned any) line {
	t.Helper()
	r := e.do("POST", "/api/budgets/"+budgetID+"/lines", e.admin, map[string]any{"code": code, "name": "Dòng " + code, "plannedAmount": planned})
	if r.Status != 201 {
		t.Fatalf("add line: %d %s", r.Status, r.Body)
	}
	var l line
	r.JSON(t, &l)
	return l
}

func (e *env) approve(t testing.TB, budgetID string) budget {
	t.Helper()
	r := e.do("POST", "/api/budgets/"+budgetID+"/approve", e.admin, nil)
	if r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	var b budget
	r.JSON(t, &b)
	return b
}

// approvedLine is an Approved budget (onExceed as given) of project with
// one line L1 planning planned.
func (e *env) approvedLine(t testing.TB, onExceed string, planned any) (budget, line) {
	t.Helper()
	b := e.newBudget(t, map[string]any{"onExceed": onExceed})
	e.addLine(t, b.ID, "L1", planned)
	b = e.approve(t, b.ID)
	return b, b.line("L1")
}

func (e *env) get(t testing.TB, id string) budget {
	t.Helper()
	r := e.do("GET", "/api/budgets/"+id, e.admin, nil)
	if r.Status != 200 {
		t.Fatalf("get budget: %d %s", r.Status, r.Body)
	}
	var b budget
	r.JSON(t, &b)
	return b
}

// snapshot is the budget detail as raw JSON, to show nothing was written.
func (e *env) snapshot(t testing.TB, id string) string {
	t.Helper()
	r := e.do("GET", "/api/budgets/"+id, e.admin, nil)
	if r.Status != 200 {
		t.Fatalf("get budget: %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

type contract struct {
	ID, Phase string
	Version   int
	Warnings  []string
	Approvals []struct{ FromPhase, ToPhase, Decision, Comment string }
}

var titleSeq atomic.Int64

// contractBody is a valid create payload changed by over.
func (e *env) contractBody(over map[string]any) map[string]any {
	b := map[string]any{"title": fmt.Sprintf("Hợp đồng %d", titleSeq.Add(1)), "contractType": "Subcontract",
		"supplierId": e.supplier, "projectId": e.project, "value": 1000}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

func (e *env) newContract(t testing.TB, over map[string]any) contract {
	t.Helper()
	r := e.do("POST", "/api/contracts", e.admin, e.contractBody(over))
	if r.Status != 201 {
		t.Fatalf("create contract: %d %s", r.Status, r.Body)
	}
	var c contract
	r.JSON(t, &c)
	return c
}

func (e *env) contract(t testing.TB, id string) contract {
	t.Helper()
	r := e.do("GET", "/api/contracts/"+id, e.admin, nil)
	if r.Status != 200 {
		t.Fatalf("get contract: %d %s", r.Status, r.Body)
	}
	var c contract
	r.JSON(t, &c)
	return c
}

func (e *env) move(id, to, comment string) *testkit.Response {
	body := map[string]any{"toPhase": to}
	if comment != "" {
		body["comment"] = comment
	}
	return e.do("POST", "/api/contracts/"+id+"/transitions", e.admin, body)
}

// tryDrive moves a contract as the administrator along the normal path
// until it reaches phase (the contracts tests' helper of the same name).
func (e *env) tryDrive(id, phase string) error {
	status, body, err := e.raw("GET", "/api/contracts/"+id, e.admin, nil)
	var c contract
	if err != nil || status != 200 || json.Unmarshal(body, &c) != nil {
		return fmt.Errorf("get %s: %d %s %v", id, status, body, err)
	}
	for c.Phase != phase {
		i := slices.Index(normalPath, c.Phase)
		if i < 0 || i == len(normalPath)-1 {
			return fmt.Errorf("cannot drive %s from %s to %s", id, c.Phase, phase)
		}
		next := normalPath[i+1]
		status, body, err := e.raw("POST", "/api/contracts/"+id+"/transitions", e.admin, map[string]any{"toPhase": next})
		if err != nil || status != 200 || json.Unmarshal(body, &c) != nil {
			return &moveError{status: status, body: string(body), err: err, to: next}
		}
	}
	return nil
}

type moveError struct {
	status int
	body   string
	to     string
	err    error
}

func (m *moveError) Error() string {
	return fmt.Sprintf("move to %s: %d %s %v", m.to, m.status, m.body, m.err)
}

func (e *env) drive(t testing.TB, id, phase string) {
	t.Helper()
	if err := e.tryDrive(id, phase); err != nil {
		t.Fatal(err)
	}
}

// wantAmounts compares figures as the API writes them.
func wantAmounts(t testing.TB, what string, got []json.Number, want ...string) {
	t.Helper()
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

// lineFigures are a line's planned, reserved, committed, actual, remaining.
func lineFigures(l line) []json.Number {
	return []json.Number{l.PlannedAmount, l.ReservedAmount, l.CommittedAmount, l.ActualAmount, l.Remaining}
}

// budgetFigures are a budget's planned, reserved, committed, actual, remaining.
func budgetFigures(b budget) []json.Number {
	return []json.Number{b.PlannedTotal, b.ReservedTotal, b.CommittedTotal, b.ActualTotal, b.Remaining}
}

// count runs a COUNT(*) query.
func (e *env) count(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.app.Kernel.App().DB.Conn(context.Background()).Raw(sql, args...).Scan(&n).Error; err != nil {
		t.Fatalf("query %s: %v", sql, err)
	}
	return n
}

// checkTotals recomputes every total from the rows and compares it with
// what is stored, for every line and budget of the instance.
func (e *env) checkTotals(t testing.TB) {
	t.Helper()
	conn := e.app.Kernel.App().DB.Conn(context.Background())
	var bad []map[string]any
	err := conn.Raw(`SELECT l.id, l.planned_amount, l.reserved_amount, l.committed_amount, l.actual_amount, l.remaining, l.adjustments_total FROM budget_lines l
		WHERE l.adjustments_total <> COALESCE((SELECT SUM(delta) FROM budget_adjustments a WHERE a.budget_line_id = l.id), 0)
		   OR l.planned_amount <> l.original_amount + l.adjustments_total
		   OR l.reserved_amount <> COALESCE((SELECT SUM(amount) FROM budget_commitments c WHERE c.budget_line_id = l.id AND c.closed_at IS NULL AND c.kind = 'Reserved'), 0)
		   OR l.committed_amount <> COALESCE((SELECT SUM(amount) FROM budget_commitments c WHERE c.budget_line_id = l.id AND c.closed_at IS NULL AND c.kind = 'Committed'), 0)
		   OR l.actual_amount <> COALESCE((SELECT SUM(amount) FROM budget_commitments c WHERE c.budget_line_id = l.id AND c.closed_at IS NULL AND c.kind = 'Actual'), 0)
		   OR l.remaining <> l.planned_amount - l.reserved_amount - l.committed_amount - l.actual_amount`).Scan(&bad).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("lines whose totals differ from their rows: %v", bad)
	}
	bad = nil
	sum := func(col string) string {
		return `COALESCE((SELECT SUM(l.` + col + `) FROM budget_lines l WHERE l.budget_id = b.id AND l.deleted_at IS NULL), 0)`
	}
	err = conn.Raw(`SELECT b.id, b.code FROM budgets b WHERE b.planned_total <> ` + sum("planned_amount") +
		` OR b.adjustments_total <> ` + sum("adjustments_total") + ` OR b.reserved_total <> ` + sum("reserved_amount") +
		` OR b.committed_total <> ` + sum("committed_amount") + ` OR b.actual_total <> ` + sum("actual_amount") +
		` OR b.remaining <> b.planned_total - b.reserved_total - b.committed_total - b.actual_total`).Scan(&bad).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("budgets whose totals differ from their lines: %v", bad)
	}
	// A contract holds at most one open entry per line.
	var dup int64
	if err := conn.Raw(`SELECT COUNT(*) FROM (SELECT contract_id, budget_line_id FROM budget_commitments
		WHERE closed_at IS NULL AND source = 'contract' GROUP BY contract_id, budget_line_id HAVING COUNT(*) > 1) x`).Scan(&dup).Error; err != nil {
		t.Fatal(err)
	}
	if dup > 0 {
		t.Errorf("%d contracts hold more than one open entry on a line", dup)
	}
}
