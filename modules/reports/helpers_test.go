package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/reports"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// hcm is the business time zone of every test instance (the default
// business.timeZone): UTC+7 all year, so 17:00Z is local midnight.
var hcm = mustLoad("Asia/Ho_Chi_Minh")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// publishPath is the normal route from DangSoanThao to DaPhatHanh: seven moves.
var publishPath = []string{"DangDamPhan", "DangGopY", "DangInKy", "DangKiemTraCCM", "DangTrinhKy", "DangDongDau", "DaPhatHanh"}

// ref is a supplier or project as the tests created it.
type ref struct{ ID, Code, Name string }

// contract is one contract of the data set, with what the API last said of it.
type contract struct {
	Key, ID, Title, Type string
	Supplier, Project    *ref
	Value                string // exact decimal, as sent
	DrafterName          string
	Detail               detail
}

// detail is the part of the contract detail the reports show.
type detail struct {
	ID          string     `json:"id"`
	Phase       string     `json:"phase"`
	MaHopDong   *string    `json:"maHopDong"`
	SLADeadline *time.Time `json:"slaDeadline"`
	CreatedAt   time.Time  `json:"createdAt"`
	DrafterName string     `json:"drafterName"`
}

// world is a running instance with the data set the report tests build.
type world struct {
	app          *testkit.App
	adminTok     string
	drafterTok   string
	drafterEmail string
	drafterName  string
	suppliers    []*ref // S1..S8
	projects     []*ref // P1..P7
	contracts    map[string]*contract
	order        []string // keys in creation order
}

// startWorld starts an instance on a manual clock with master data and one
// Drafter user, but no contracts yet.
func startWorld(t *testing.T, driver string, suppliers, projects int, opts ...testkit.Option) *world {
	t.Helper()
	clk := clock.NewManual(utc("2025-11-01T00:00:00Z"))
	w := &world{app: identitytest.Start(t, driver, append([]testkit.Option{testkit.WithClock(clk)}, opts...)...), contracts: map[string]*contract{}}
	_, email, _ := identitytest.NewUser(t, w.app, "Drafter")
	w.drafterEmail, w.drafterName = email, "Test "+email
	w.at(t, "2025-11-01T00:00:00Z")
	for i := 1; i <= suppliers; i++ {
		r := &ref{Code: fmt.Sprintf("NCC%02d", i), Name: fmt.Sprintf("Nhà cung cấp số %d", i)}
		w.call(t, "POST", "/api/suppliers", w.adminTok, map[string]any{"code": r.Code, "name": r.Name, "supplierType": "Material"}, 201, r)
		w.suppliers = append(w.suppliers, r)
	}
	for i := 1; i <= projects; i++ {
		r := &ref{Code: fmt.Sprintf("DA%02d", i), Name: fmt.Sprintf("Dự án số %d", i)}
		w.call(t, "POST", "/api/projects", w.adminTok, map[string]any{"code": r.Code, "name": r.Name}, 201, r)
		w.projects = append(w.projects, r)
	}
	return w
}

// at moves the clock and signs both users in again: access tokens last 15
// minutes and the clock jumps by months.
func (w *world) at(t *testing.T, instant string) {
	t.Helper()
	w.app.Clock.Set(utc(instant))
	w.adminTok = identitytest.AdminToken(t, w.app)
	w.drafterTok = identitytest.Login(t, w.app, w.drafterEmail, identitytest.Password)
}

// call sends a request, requires status and decodes the body into out.
func (w *world) call(t *testing.T, method, path, token string, body any, status int, out any) *testkit.Response {
	t.Helper()
	r := w.app.Do(testkit.Request{Method: method, Path: path, Token: token, Body: body})
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	if out != nil {
		r.JSON(t, out)
	}
	return r
}

// create drafts contract key at the clock's time, as the admin or the drafter.
func (w *world) create(t *testing.T, key string, byDrafter bool, contractType string, supplier, project *ref, value string) {
	t.Helper()
	c := &contract{Key: key, Title: "Hợp đồng " + key, Type: contractType, Supplier: supplier, Project: project, Value: value, DrafterName: "Administrator"}
	token := w.adminTok
	if byDrafter {
		token, c.DrafterName = w.drafterTok, w.drafterName
	}
	body := map[string]any{"title": c.Title, "contractType": contractType, "supplierId": supplier.ID, "value": json.Number(value)}
	if project != nil {
		body["projectId"] = project.ID
	}
	w.call(t, "POST", "/api/contracts", token, body, 201, &c.Detail)
	c.ID = c.Detail.ID
	if !c.Detail.CreatedAt.Equal(w.app.Clock.Now()) {
		t.Fatalf("contract %s created at %v, want the clock's %v", key, c.Detail.CreatedAt, w.app.Clock.Now())
	}
	w.contracts[key] = c
	w.order = append(w.order, key)
}

// move walks contract key through phases as the admin; a rejection carries a comment.
func (w *world) move(t *testing.T, key string, phases ...string) {
	t.Helper()
	c := w.contracts[key]
	for _, p := range phases {
		body := map[string]any{"toPhase": p}
		if p == "TuChoi" {
			body["comment"] = "Giá vượt ngân sách"
		}
		w.call(t, "POST", "/api/contracts/"+c.ID+"/transitions", w.adminTok, body, 200, &c.Detail)
		if c.Detail.Phase != p {
			t.Fatalf("contract %s in %s after moving to %s", key, c.Detail.Phase, p)
		}
	}
}

// remove soft-deletes contract key as the admin.
func (w *world) remove(t *testing.T, key string) {
	t.Helper()
	w.call(t, "DELETE", "/api/contracts/"+w.contracts[key].ID, w.adminTok, nil, 204, nil)
	c := w.contracts[key]
	c.Detail.Phase = "deleted"
}

// buildKnownSet creates the data set every dashboard figure below is
// computed from by hand. Times are UTC; the business zone is UTC+7, so
// 16:59:59Z is 23:59:59 local and 17:00:00Z is the next local day.
//
//	key  created (UTC)         local month  sup prj  value         ends in
//	k1   2025-11-30T16:59:59Z  2025-11      S1  P1   1000000.50    DangSoanThao, overdue
//	k2   2025-11-30T17:00:00Z  2025-12      S2  P2   2000000       DaPhatHanh (2025-12-10)
//	k3   2026-03-10T05:00:00Z  2026-03      S3  P3   3000000       DangGopY, overdue (Service)
//	k4   2026-06-20T05:00:00Z  2026-06      S8  P7   90000000      TuChoi
//	k5   2026-09-05T05:00:00Z  2026-09      S7  P6   80000000      deleted
//	k6   2026-10-20T05:00:00Z  2026-10      S4  P4   4000000       DaPhatHanh at 2026-10-31T16:59:59Z (Oct local)
//	k7   2026-10-25T05:00:00Z  2026-10      S5  P5   5000000       DaPhatHanh at 2026-10-31T17:00:00Z (Nov local)
//	k8   2026-10-31T16:59:59Z  2026-10      S6  P1   600000        DangDamPhan (moved 11-10T00:00Z, due 11-15T00:00Z), overdue
//	k9   2026-10-31T17:00:00Z  2026-11      S1  P2   700000        DangSoanThao, overdue
//	k13  2026-11-01T10:00:00Z  2026-11      S5  P5   3000000       DaPhatHanh at 2026-11-15T02:59:59Z
//	k14  2026-11-08T03:00:00Z  2026-11      S4  P4   400000        DangSoanThao, due exactly at "now"
//	k10  2026-11-10T05:00:00Z  2026-11      S2  -    1500000       DangSoanThao (FrameworkSupply)
//	k11  2026-11-14T16:59:59Z  2026-11      S3  P3   250000.25     DangDongDau (moved 11-14T20:00Z)
//	k12  2026-11-15T02:00:00Z  2026-11      S6  P6   100           DangSoanThao
//
// "Now" for the dashboard is 2026-11-15T03:00:00Z (10:00 local).
func buildKnownSet(t *testing.T, driver string) *world {
	t.Helper()
	w := startWorld(t, driver, 8, 7)
	S, P := w.suppliers, w.projects
	steps := []struct {
		at string
		do func()
	}{
		{"2025-11-30T16:59:59Z", func() { w.create(t, "k1", false, "Subcontract", S[0], P[0], "1000000.50") }},
		{"2025-11-30T17:00:00Z", func() { w.create(t, "k2", true, "Subcontract", S[1], P[1], "2000000") }},
		{"2025-12-10T03:00:00Z", func() { w.move(t, "k2", publishPath...) }},
		{"2026-03-10T05:00:00Z", func() { w.create(t, "k3", true, "Service", S[2], P[2], "3000000") }},
		{"2026-03-11T05:00:00Z", func() { w.move(t, "k3", "DangDamPhan", "DangGopY") }},
		{"2026-06-20T05:00:00Z", func() { w.create(t, "k4", false, "Subcontract", S[7], P[6], "90000000") }},
		{"2026-06-25T05:00:00Z", func() { w.move(t, "k4", append(publishPath[:5:5], "TuChoi")...) }},
		{"2026-09-05T05:00:00Z", func() { w.create(t, "k5", true, "Subcontract", S[6], P[5], "80000000") }},
		{"2026-09-06T05:00:00Z", func() { w.remove(t, "k5") }},
		{"2026-10-20T05:00:00Z", func() { w.create(t, "k6", false, "Subcontract", S[3], P[3], "4000000") }},
		{"2026-10-25T05:00:00Z", func() { w.create(t, "k7", true, "Subcontract", S[4], P[4], "5000000") }},
		{"2026-10-31T16:59:59Z", func() {
			w.create(t, "k8", false, "Subcontract", S[5], P[0], "600000")
			w.move(t, "k6", publishPath...)
		}},
		{"2026-10-31T17:00:00Z", func() {
			w.create(t, "k9", true, "Subcontract", S[0], P[1], "700000")
			w.move(t, "k7", publishPath...)
		}},
		{"2026-11-01T10:00:00Z", func() { w.create(t, "k13", false, "Subcontract", S[4], P[4], "3000000") }},
		{"2026-11-08T03:00:00Z", func() { w.create(t, "k14", true, "Subcontract", S[3], P[3], "400000") }},
		{"2026-11-10T00:00:00Z", func() { w.move(t, "k8", "DangDamPhan") }},
		{"2026-11-10T05:00:00Z", func() { w.create(t, "k10", false, "FrameworkSupply", S[1], nil, "1500000") }},
		{"2026-11-14T16:59:59Z", func() { w.create(t, "k11", true, "Subcontract", S[2], P[2], "250000.25") }},
		{"2026-11-14T20:00:00Z", func() { w.move(t, "k11", publishPath[:6]...) }},
		{"2026-11-15T02:00:00Z", func() { w.create(t, "k12", false, "Subcontract", S[5], P[5], "100") }},
		{"2026-11-15T02:59:59Z", func() { w.move(t, "k13", publishPath...) }},
	}
	for _, s := range steps {
		w.at(t, s.at)
		s.do()
	}
	w.at(t, "2026-11-15T03:00:00Z")
	return w
}

// live lists the keys of live contracts in export order (creation time).
func (w *world) live() []string {
	var out []string
	for _, k := range w.order {
		if w.contracts[k].Detail.Phase != "deleted" {
			out = append(out, k)
		}
	}
	// Creation order above is already chronological except where steps
	// created two contracts at one instant; none do.
	return out
}

// openXLSX reads an export back.
func openXLSX(t *testing.T, body []byte) *excelize.File {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("export is not an xlsx workbook: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// localWall is the wall time of an instant in the business zone, as a
// spreadsheet (which has no zones) shows it.
func localWall(t time.Time) time.Time {
	l := t.In(hcm)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC)
}

// excelTime reads a raw date cell.
func excelTime(t *testing.T, raw string) time.Time {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(raw, &v); err != nil {
		t.Fatalf("date cell %q is not a number: %v", raw, err)
	}
	got, err := excelize.ExcelDateToTime(v, false)
	if err != nil {
		t.Fatalf("date cell %q: %v", raw, err)
	}
	return got.Round(time.Second)
}
