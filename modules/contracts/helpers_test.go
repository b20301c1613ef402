package contracts_test

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

	_ "github.com/contractflow/contractflow/modules/contracts" // the module under test
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// t0 is when every test instance's clock starts: whole seconds, so
// deadlines compare exactly after a round trip through either database.
var t0 = time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC)

// The phases in the order of the normal path, and the two terminal ones.
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

// slaHours of contract-default v1 (DESIGN §4).
var slaHours = map[string]int{DangSoanThao: 168, DangDamPhan: 120, DangGopY: 72, DangInKy: 48, DangKiemTraCCM: 48,
	DangTrinhKy: 72, DangDongDau: 24}

// env is one running instance with an administrator and the master data
// most contracts use: supplier NCC001 and project DA001.
type env struct {
	app      *testkit.App
	driver   string
	admin    string
	supplier string
	project  string
}

// start runs an instance on a manual clock at t0, with access tokens that
// outlive every clock advance of the tests.
func start(t *testing.T, driver string, opts ...testkit.Option) *env {
	t.Helper()
	return startWith(t, driver, startOptions{}, opts...)
}

type startOptions struct {
	bare bool // no master data: a second node of an instance that has it
}

func startWith(t *testing.T, driver string, o startOptions, opts ...testkit.Option) *env {
	t.Helper()
	all := append([]testkit.Option{
		testkit.WithClock(clock.NewManual(t0)),
		testkit.WithConfig("jwt.accessTokenMinutes", 60*24*365),
		// No rate limiting: on Postgres its counter would add a commit to
		// every request, and these tests do not exercise it.
		testkit.WithConfig("rateLimit.enabled", false),
		// The forms module is optional for contracts; its seed inspects
		// every template file, so only the tests of templates turn it on
		// (withForms).
		testkit.WithConfig("modules.forms.enabled", false),
	}, opts...)
	app := identitytest.Start(t, driver, all...)
	e := &env{app: app, driver: driver, admin: identitytest.AdminToken(t, app)}
	if o.bare {
		return e
	}
	e.supplier = e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC001", "name": "Công ty Vật tư A", "supplierType": "Material"})
	e.project = e.masterdata(t, "/api/projects", map[string]any{"code": "DA001", "name": "Dự án Một"})
	return e
}

// forEachDriver starts a default instance per database, as parallel
// subtests of a parallel test: every instance has its own database, files
// and clock, so tests never share state.
func forEachDriver(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) { fn(t, start(t, d)) })
}

// withForms turns the forms module on: template checks and draft exports.
var withForms = testkit.WithConfig("modules.forms.enabled", true)

// masterdata creates a supplier, project or department as the administrator.
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

// raw sends a request without checking the answer against the OpenAPI
// document. Only bulk set-up uses it (tens of contracts driven through
// phases whose answers other tests check one by one): the checker compiles
// the response schema on every call, under one lock, which would make the
// set-up of the concurrency tests take most of the suite's time.
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

// user is a signed-in user holding some roles.
type user struct {
	id, email, token, name string
}

func (e *env) user(t testing.TB, roles ...string) user {
	t.Helper()
	id, email, token := identitytest.NewUser(t, e.app, roles...)
	return user{id: id, email: email, token: token, name: "Test " + email}
}

// setRoles replaces a user's roles and signs them in again (the old token
// is revoked with the role change).
func (e *env) setRoles(t testing.TB, u *user, roles ...string) {
	t.Helper()
	r := e.do("PUT", "/api/users/"+u.id+"/roles", e.admin, map[string]any{"roles": roles})
	if r.Status != 200 {
		t.Fatalf("set roles: %d %s", r.Status, r.Body)
	}
	u.token = identitytest.Login(t, e.app, u.email, identitytest.Password)
}

type ref struct{ ID, Code, Name string }

type approval struct {
	ID, FromPhase, ToPhase, Decision, Comment string
	ApproverUserID, ApproverName              *string
	ApprovedAt                                time.Time
}

type comment struct {
	ID, Phase, Content, AuthorID, AuthorName string
	CreatedAt                                time.Time
}

type attachment struct {
	ID, FileName, Purpose, ContentType, UploadedBy, UploadedByName string
	Size                                                           int64
	CreatedAt                                                      time.Time
	UnfilledPlaceholders                                           []string
}

type allowedMove struct {
	ToPhase, Kind   string
	CommentRequired bool
}

// contract holds the fields of the summary, the detail and an inbox item.
type contract struct {
	ID, Title, ContractType, Phase string
	MaHopDong                      *string
	Supplier, Project              *ref
	Value                          json.Number
	Currency                       string
	BypassProcurementAndCCM        bool
	SLADeadline                    *time.Time
	DrafterID, DrafterName         string
	CreatedAt                      time.Time
	Version                        int

	SupplierID                          string
	TemplateID, ProjectID, DepartmentID *string
	SLAWarningSent                      bool
	DraftData                           json.RawMessage
	WorkflowDefinitionID                string
	Description                         string
	StartDate, EndDate                  *string
	Approvals                           []approval
	Comments                            []comment
	Attachments                         []attachment
	AllowedTransitions                  []allowedMove

	Overdue        bool
	HoursRemaining float64
}

func (c *contract) unmarshal(b []byte) error { return json.Unmarshal(b, c) }

func (c contract) code() string {
	if c.MaHopDong == nil {
		return ""
	}
	return *c.MaHopDong
}

func (c contract) allowed() []string {
	out := []string{}
	for _, m := range c.AllowedTransitions {
		out = append(out, m.ToPhase)
	}
	return out
}

type page struct {
	Items                                  []contract
	Page, PageSize, TotalCount, TotalPages int
}

func (p page) ids() []string {
	out := []string{}
	for _, c := range p.Items {
		out = append(out, c.ID)
	}
	return out
}

var titleSeq atomic.Int64

// body is a valid create payload, changed by over (a nil value removes the key).
func (e *env) body(over map[string]any) map[string]any {
	b := map[string]any{"title": fmt.Sprintf("Hợp đồng thầu phụ %d", titleSeq.Add(1)), "contractType": "Subcontract",
		"supplierId": e.supplier, "projectId": e.project, "value": 1500000}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// create drafts a contract, failing unless 201.
func (e *env) create(t testing.TB, token string, over map[string]any) contract {
	t.Helper()
	r := e.do("POST", "/api/contracts", token, e.body(over))
	if r.Status != 201 {
		t.Fatalf("create contract: %d %s", r.Status, r.Body)
	}
	var c contract
	r.JSON(t, &c)
	return c
}

func (e *env) get(t testing.TB, token, id string) contract {
	t.Helper()
	r := e.do("GET", "/api/contracts/"+id, token, nil)
	if r.Status != 200 {
		t.Fatalf("get contract: %d %s", r.Status, r.Body)
	}
	var c contract
	r.JSON(t, &c)
	return c
}

func (e *env) move(token, id, to, comment string) *testkit.Response {
	body := map[string]any{"toPhase": to}
	if comment != "" {
		body["comment"] = comment
	}
	return e.do("POST", "/api/contracts/"+id+"/transitions", token, body)
}

func (e *env) mustMove(t testing.TB, token, id, to, comment string) contract {
	t.Helper()
	r := e.move(token, id, to, comment)
	if r.Status != 200 {
		t.Fatalf("move %s to %s: %d %s", id, to, r.Status, r.Body)
	}
	var c contract
	r.JSON(t, &c)
	if c.Phase != to {
		t.Fatalf("moved to %s, want %s", c.Phase, to)
	}
	return c
}

// drive moves a contract as the administrator along the normal path (the
// bypass when its flag is set) until it reaches phase; TuChoi is reached by
// rejecting in DangTrinhKy. It is set-up, so its answers are not checked
// against the OpenAPI document (see raw); the moves themselves are checked
// by the tests of transitions.
func (e *env) drive(t testing.TB, id, phase string) contract {
	t.Helper()
	target := phase
	if phase == TuChoi {
		target = DangTrinhKy
	}
	if err := e.tryDrive(id, target); err != nil {
		t.Fatal(err)
	}
	if phase == TuChoi {
		return e.mustMove(t, e.admin, id, TuChoi, "Từ chối ký.")
	}
	return e.get(t, e.admin, id)
}

func (e *env) list(t testing.TB, token, query string) page {
	t.Helper()
	return e.page(t, token, "/api/contracts"+query)
}

func (e *env) inbox(t testing.TB, token, query string) page {
	t.Helper()
	return e.page(t, token, "/api/contracts/inbox"+query)
}

func (e *env) page(t testing.TB, token, path string) page {
	t.Helper()
	r := e.do("GET", path, token, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var p page
	r.JSON(t, &p)
	return p
}

// exec runs SQL on the instance's database, for states the API cannot
// produce (a broken row, a code set from outside).
func (e *env) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := e.app.Kernel.App().DB.Conn(context.Background()).Exec(sql, args...).Error; err != nil {
		t.Fatalf("exec %s: %v", sql, err)
	}
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

// runSLA runs one batch of the SLA job, found among the kernel's jobs.
func (e *env) runSLA(t testing.TB) { e.runJob(t, "workflow.sla") }

// runJob runs one batch of the background job called name.
func (e *env) runJob(t testing.TB, name string) {
	t.Helper()
	for _, j := range e.app.Kernel.Jobs() {
		if j.Name == name {
			if err := j.Run(context.Background()); err != nil {
				t.Fatalf("%s job: %v", name, err)
			}
			return
		}
	}
	if name == "contracts.search" && e.driver != "sqlite" {
		return // the index by phase is SQLite's
	}
	t.Fatalf("no %s job", name)
}

func wantDeadline(t testing.TB, c contract, want time.Time) {
	t.Helper()
	if c.SLADeadline == nil || !c.SLADeadline.Equal(want) {
		t.Fatalf("slaDeadline %v, want %v", c.SLADeadline, want)
	}
}
