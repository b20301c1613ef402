package procurement_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/procurement" // the module under test
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// t0 is when every test instance's clock starts: whole seconds, so
// deadlines compare exactly after a round trip through either database.
var t0 = time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC)

// The phases of DESIGN §7.
const (
	DangSoanThao     = "DangSoanThao"
	ChoDuAn          = "ChoDuAn"
	ChoYKienPhongBan = "ChoYKienPhongBan"
	ChoCCMKiemTra    = "ChoCCMKiemTra"
	ChoCEODuyetNCC   = "ChoCEODuyetNCC"
	DaDuyet          = "DaDuyet"
	TuChoi           = "TuChoi"
)

// The normal paths of the two policies.
var paths = map[string][]string{
	"A": {DangSoanThao, ChoDuAn, ChoCEODuyetNCC, DaDuyet},
	"B": {DangSoanThao, ChoDuAn, ChoYKienPhongBan, ChoCCMKiemTra, ChoCEODuyetNCC, DaDuyet},
}

const base = "/api/purchase-evaluations"

// env is one running instance with an administrator, users of the roles
// the workflow names, four active suppliers, an inactive one and a project.
type env struct {
	app       *testkit.App
	driver    string
	admin     string
	adminID   string
	suppliers []string // NCC-A … NCC-D, active
	inactive  string
	project   string
	users     map[string]user // one per role
}

type user struct{ id, email, token string }

var roles = []string{"Drafter", "DeptManager", "ProjectManager", "Procurement", "CostControl", "Finance", "Accounting",
	"Equipment", "Director", "AuthorizedSigner", "HrAdmin"}

func start(t *testing.T, driver string, opts ...testkit.Option) *env {
	t.Helper()
	all := append([]testkit.Option{
		testkit.WithClock(clock.NewManual(t0)),
		testkit.WithConfig("jwt.accessTokenMinutes", 60*24*365),
		testkit.WithConfig("rateLimit.enabled", false),
		testkit.WithConfig("modules.forms.enabled", false),
	}, opts...)
	app := identitytest.Start(t, driver, all...)
	e := &env{app: app, driver: driver, admin: identitytest.AdminToken(t, app), users: map[string]user{}}
	var me struct{ ID string }
	e.do("GET", "/api/auth/me", e.admin, nil).JSON(t, &me)
	e.adminID = me.ID
	if !e.enabled() {
		return e
	}
	for i := range 4 {
		e.suppliers = append(e.suppliers, e.masterdata(t, "/api/suppliers", map[string]any{"code": fmt.Sprintf("NCC-%c", 'A'+i),
			"name": fmt.Sprintf("Nhà cung cấp %c", 'A'+i), "supplierType": "Material"}))
	}
	e.inactive = e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC-OFF", "name": "Ngừng giao dịch",
		"supplierType": "Material", "isActive": false})
	e.project = e.masterdata(t, "/api/projects", map[string]any{"code": "DA001", "name": "Dự án Một"})
	for _, r := range roles {
		e.users[r] = e.user(t, r)
	}
	return e
}

// enabled reports whether procurement's routes are mounted.
func (e *env) enabled() bool {
	for _, r := range e.app.Kernel.Routes() {
		if r.Module == "procurement" {
			return true
		}
	}
	return false
}

// forEachDriver starts an instance per database, as parallel subtests.
func forEachDriver(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) { fn(t, start(t, d)) })
}

func (e *env) masterdata(t testing.TB, path string, body map[string]any) string {
	t.Helper()
	r := e.do("POST", path, e.admin, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var out struct{ ID string }
	r.JSON(t, &out)
	return out.ID
}

func (e *env) do(method, path, token string, body any) *testkit.Response {
	return e.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
}

// raw sends a request without the OpenAPI check, for the bulk set-up and
// the races (the checker serialises on one lock).
func (e *env) raw(method, path, token string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.app.Kernel.HTTP().Test(req, -1)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (e *env) user(t testing.TB, roles ...string) user {
	t.Helper()
	id, email, token := identitytest.NewUser(t, e.app, roles...)
	return user{id: id, email: email, token: token}
}

func (e *env) token(role string) string {
	if role == "Admin" {
		return e.admin
	}
	return e.users[role].token
}

type ref struct{ ID, Code, Name string }

type quotation struct {
	ID, SupplierID              string
	Supplier                    *ref
	Amount                      json.Number
	DeliveryDays, WarrantyMonth *int
	Notes                       string
	Rank                        int
	DiffToCheapest              json.Number
	DiffToCheapestPercent       float64
	Selected                    bool
}

type opinion struct {
	ID, Kind, Verdict, Comment, UserID, UserName string
	CreatedAt, UpdatedAt                         time.Time
}

type history struct {
	FromPhase, ToPhase, Decision, Comment string
	ApproverUserID, ApproverName          *string
}

type allowedMove struct{ ToPhase, Kind string }

type paymentTerm struct {
	Milestone string
	Percent   json.Number
	DueDays   *int
}

// evaluation holds the fields of the summary, the detail and an inbox item.
type evaluation struct {
	ID, MaPhieu, Policy, Title, Phase string
	Category                          *string
	Project, Department               *ref
	EstimatedValue                    json.Number
	Currency                          string
	SLADeadline                       *time.Time
	SelectedQuotationID, ContractID   *string
	CreatedBy, CreatedByName          string
	CreatedAt                         time.Time
	Version                           int

	ProjectID            string
	DepartmentID         *string
	Description          string
	Quotations           []quotation
	SelectionReason      string
	PaymentTerms         []paymentTerm
	RequiredOpinions     []string
	Opinions             []opinion
	History              []history
	ApprovedAt           *time.Time
	WorkflowDefinitionID string
	AllowedTransitions   []allowedMove

	Overdue        bool
	HoursRemaining float64
}

func (v evaluation) allowed() []string {
	out := []string{}
	for _, m := range v.AllowedTransitions {
		out = append(out, m.ToPhase)
	}
	return out
}

type page struct {
	Items                                  []evaluation
	Page, PageSize, TotalCount, TotalPages int
}

func (p page) ids() []string {
	out := []string{}
	for _, v := range p.Items {
		out = append(out, v.ID)
	}
	return out
}

var titleSeq atomic.Int64

// body is a valid create payload, changed by over (a nil value removes the key).
func (e *env) body(over map[string]any) map[string]any {
	b := map[string]any{"title": fmt.Sprintf("Đánh giá mua thép %d", titleSeq.Add(1)), "projectId": e.project,
		"estimatedValue": 120000000, "category": "Material"}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

func (e *env) create(t testing.TB, token string, over map[string]any) evaluation {
	t.Helper()
	r := e.do("POST", base, token, e.body(over))
	if r.Status != 201 {
		t.Fatalf("create evaluation: %d %s", r.Status, r.Body)
	}
	var v evaluation
	r.JSON(t, &v)
	return v
}

func (e *env) get(t testing.TB, token, id string) evaluation {
	t.Helper()
	r := e.do("GET", base+"/"+id, token, nil)
	if r.Status != 200 {
		t.Fatalf("get evaluation: %d %s", r.Status, r.Body)
	}
	var v evaluation
	r.JSON(t, &v)
	return v
}

func (e *env) quote(t testing.TB, token, id, supplier string, amount any) evaluation {
	t.Helper()
	r := e.do("POST", base+"/"+id+"/quotations", token, map[string]any{"supplierId": supplier, "amount": amount, "deliveryDays": 10})
	if r.Status != 201 {
		t.Fatalf("add quotation: %d %s", r.Status, r.Body)
	}
	var v evaluation
	r.JSON(t, &v)
	return v
}

func (e *env) move(token, id, to, comment string) *testkit.Response {
	body := map[string]any{"toPhase": to}
	if comment != "" {
		body["comment"] = comment
	}
	return e.do("POST", base+"/"+id+"/transitions", token, body)
}

func (e *env) mustMove(t testing.TB, token, id, to, comment string) evaluation {
	t.Helper()
	r := e.move(token, id, to, comment)
	if r.Status != 200 {
		t.Fatalf("move %s to %s: %d %s", id, to, r.Status, r.Body)
	}
	var v evaluation
	r.JSON(t, &v)
	if v.Phase != to {
		t.Fatalf("moved to %s, want %s", v.Phase, to)
	}
	return v
}

func (e *env) opinion(token, id, kind, verdict string) *testkit.Response {
	return e.do("PUT", base+"/"+id+"/opinions/"+kind, token, map[string]any{"verdict": verdict, "comment": "Ý kiến " + kind})
}

// ready creates an evaluation of policy as the Procurement user, with
// enough quotations (cheapest first) and the cheapest chosen: ready to submit.
func (e *env) ready(t testing.TB, policy string) evaluation {
	t.Helper()
	return e.readyBy(t, e.token("Procurement"), policy)
}

// readyBy is ready for an evaluation created by token's user; its set-up
// answers are not checked against the OpenAPI document (see raw).
func (e *env) readyBy(t testing.TB, token, policy string) evaluation {
	t.Helper()
	var v evaluation
	call := func(method, path string, body any, want int) {
		st, b := e.raw(method, path, token, body)
		if st != want {
			t.Fatalf("%s %s: %d %s", method, path, st, b)
		}
		v = evaluation{}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
	}
	call("POST", base, e.body(map[string]any{"policy": policy}), 201)
	n := map[string]int{"A": 1, "B": 3}[policy]
	for i := range n {
		call("POST", base+"/"+v.ID+"/quotations", map[string]any{"supplierId": e.suppliers[i], "amount": 1000000 * (i + 1)}, 201)
	}
	call("POST", base+"/"+v.ID+"/select-winner", map[string]any{"quotationId": v.Quotations[0].ID}, 200)
	return v
}

// drive takes a ready evaluation along its policy's normal path to phase
// as the administrator, saving the required opinions on the way; TuChoi is
// reached by a rejection from the phase before it on the path.
func (e *env) drive(t testing.TB, v evaluation, phase string) evaluation {
	t.Helper()
	for _, p := range paths[v.Policy][1:] {
		if v.Phase == phase {
			return v
		}
		if v.Phase == ChoYKienPhongBan {
			for _, k := range []string{"PRO", "CCM", "FIN"} {
				if st, b := e.raw("PUT", base+"/"+v.ID+"/opinions/"+k, e.admin, map[string]any{"verdict": "Agree"}); st != 200 {
					t.Fatalf("opinion %s: %d %s", k, st, b)
				}
			}
		}
		if phase == TuChoi && p == DaDuyet {
			p = TuChoi
		}
		st, b := e.raw("POST", base+"/"+v.ID+"/transitions", e.admin, map[string]any{"toPhase": p, "comment": "Lý do."})
		if st != 200 {
			t.Fatalf("drive %s to %s: %d %s", v.ID, p, st, b)
		}
		v = evaluation{}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
	}
	if v.Phase != phase {
		t.Fatalf("drove to %s, want %s", v.Phase, phase)
	}
	return v
}

func (e *env) list(t testing.TB, token, query string) page {
	t.Helper()
	r := e.do("GET", base+query, token, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", base+query, r.Status, r.Body)
	}
	var p page
	r.JSON(t, &p)
	return p
}

func (e *env) count(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.app.Kernel.App().DB.Conn(context.Background()).Raw(sql, args...).Scan(&n).Error; err != nil {
		t.Fatalf("query %s: %v", sql, err)
	}
	return n
}

func (e *env) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := e.app.Kernel.App().DB.Conn(context.Background()).Exec(sql, args...).Error; err != nil {
		t.Fatalf("exec %s: %v", sql, err)
	}
}

func (e *env) runSLA(t testing.TB) {
	t.Helper()
	for _, j := range e.app.Kernel.Jobs() {
		if j.Name == "workflow.sla" {
			if err := j.Run(context.Background()); err != nil {
				t.Fatalf("sla job: %v", err)
			}
			return
		}
	}
	t.Fatal("no workflow.sla job")
}
