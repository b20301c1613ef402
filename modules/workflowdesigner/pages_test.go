package workflowdesigner_test

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	// The pages are tested with the real document kinds: contracts (and the
	// reports module, whose dashboard the browser test opens).
	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/reports"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/platform/web/webtest"
)

// pagesWorld is an instance with every module the pages need, served on a
// real port, and the administrator's API token for arranging data.
type pagesWorld struct {
	app   *testkit.App
	base  string
	admin string
}

func startPages(t *testing.T, driver string) *pagesWorld {
	t.Helper()
	app := identitytest.Start(t, driver)
	return &pagesWorld{app: app, base: webtest.Serve(t, app), admin: identitytest.AdminToken(t, app)}
}

// api calls the API as the administrator and decodes the answer.
func (w *pagesWorld) api(t *testing.T, method, path string, body any, status int, out any) {
	t.Helper()
	r := w.app.Do(testkit.Request{Method: method, Path: path, Token: w.admin, Body: body})
	if r.Status != status {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	if out != nil {
		r.JSON(t, out)
	}
}

// contractDefault is the seeded, published contract workflow.
func (w *pagesWorld) contractDefault(t *testing.T) wfDef {
	t.Helper()
	var defs []wfDef
	w.api(t, "GET", "/api/workflows?documentKind=contract", nil, 200, &defs)
	for _, d := range defs {
		if d.Key == "contract-default" && d.Version == 1 {
			return d
		}
	}
	t.Fatalf("no contract-default v1 among %v", defs)
	return wfDef{}
}

// draftForm is the edit page's form for a definition's content, as a
// browser sends it.
func draftForm(d wfDraft) url.Values {
	f := url.Values{"name": {d.Name}, "initialPhase": {d.InitialPhase},
		"steps.count": {strconv.Itoa(len(d.Steps))}, "moves.count": {strconv.Itoa(len(d.Transitions))}}
	for i, s := range d.Steps {
		at := fmt.Sprintf("steps.%d.", i)
		f.Set(at+"phase", s.Phase)
		f.Set(at+"slaHours", strconv.Itoa(s.SLAHours))
		f.Set(at+"inboxRoles", strings.Join(s.InboxRoles, ", "))
		f.Set(at+"onSlaBreach", s.OnSLABreach)
		if s.Terminal {
			f.Set(at+"terminal", "true")
		}
	}
	for i, m := range d.Transitions {
		at := fmt.Sprintf("moves.%d.", i)
		f.Set(at+"from", m.From)
		f.Set(at+"to", m.To)
		f.Set(at+"kind", m.Kind)
		f.Set(at+"roles", strings.Join(m.Roles, ","))
		f.Set(at+"guard", m.Guard)
		f.Set(at+"precondition", m.Precondition)
		if m.Normal {
			f.Set(at+"normal", "true")
		}
	}
	return f
}

// wellFormedSVG returns the page's <svg id=id> after parsing it as XML.
func wellFormedSVG(t *testing.T, body, id string) string {
	t.Helper()
	s := regexp.MustCompile(`(?s)<svg\b[^>]*\bid="` + id + `".*?</svg>`).FindString(body)
	if s == "" {
		t.Fatalf("no SVG %s on the page", id)
	}
	dec := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return s
		}
		if err != nil {
			t.Fatalf("SVG %s is not well-formed XML: %v\n%s", id, err, s)
		}
	}
}

// TestWorkflowPages drives the workflow administration through its pages:
// access, CSRF, the drawing, a draft from the published contract workflow,
// validation problems in words, publish, assignments and the in-flight
// migration with its dry run.
func TestWorkflowPages(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startPages(t, driver)
		v1 := w.contractDefault(t)

		anon := webtest.NewClient(t, w.base)
		if r := anon.Get("/admin/workflows/" + v1.ID); r.Status != http.StatusSeeOther || r.Location != "/login?next="+url.QueryEscape("/admin/workflows/"+v1.ID) {
			t.Fatalf("signed out: %d → %q", r.Status, r.Location)
		}
		_, email, _ := identitytest.NewUser(t, w.app, identity.RoleDrafter)
		drafter := webtest.NewClient(t, w.base)
		drafter.SignIn(email, identitytest.Password)
		webtest.WantPage(t, drafter.Get("/admin/workflows"), http.StatusForbidden, "Không được phép")
		webtest.WantPage(t, drafter.Post("/admin/workflows/"+v1.ID+"/publish", nil), http.StatusForbidden, "Không được phép")
		if strings.Contains(drafter.Get("/").Body, `href="/admin/workflows"`) {
			t.Errorf("a Drafter's menu links to the workflows")
		}

		admin := webtest.NewClient(t, w.base)
		admin.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		list := admin.Get("/admin/workflows")
		webtest.WantPage(t, list, 200, "Quy trình duyệt", "contract-default", "Đã ban hành", "Hợp đồng")
		if !strings.Contains(list.Body, `href="/admin/workflows"`) || !strings.Contains(list.Body, `href="/admin/workflows/`+v1.ID+`"`) {
			t.Fatalf("list lacks the menu entry or the definition's link")
		}

		// The drawing: one box per step, one arrow per move, valid XML.
		detail := admin.Get("/admin/workflows/" + v1.ID)
		webtest.WantPage(t, detail, 200, "Sơ đồ các bước", "Đang soạn thảo", "Đang trình ký", "Từ chối", "Trả lại")
		svg := wellFormedSVG(t, detail.Body, "wf-drawing")
		if n := strings.Count(svg, `<g class="step`); n != len(v1.Steps) {
			t.Errorf("drawing has %d steps, want %d", n, len(v1.Steps))
		}
		if n := strings.Count(svg, `<path class="move`); n != len(v1.Transitions) {
			t.Errorf("drawing has %d moves, want %d", n, len(v1.Transitions))
		}

		// A POST without the CSRF token, or from another site, is refused.
		if r := admin.Post("/admin/workflows", url.Values{"csrf_token": {""}, "documentKind": {"contract"}}); r.Status != http.StatusForbidden {
			t.Fatalf("no CSRF token: %d", r.Status)
		}
		if r := admin.Do("POST", "/admin/workflows", strings.NewReader("csrf_token="+admin.CSRF()),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}); r.Status != http.StatusForbidden {
			t.Fatalf("foreign origin: %d", r.Status)
		}

		// A refused draft is shown on the form, next to the field, in words.
		r := admin.Post("/admin/workflows", url.Values{"documentKind": {"contract"}, "key": {"bad key!"}, "name": {""}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.", "Bắt buộc nhập.")
		if !regexp.MustCompile(`id="f-Key"[\s\S]*?class="field-error"`).MatchString(r.Body) {
			t.Errorf("the key's problem is not next to its field")
		}

		// A draft from the published contract workflow.
		r = admin.Post("/admin/workflows", url.Values{"documentKind": {"contract"}, "key": {"contract-default"},
			"name": {"Quy trình hợp đồng 2"}, "fromId": {v1.ID}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/admin/workflows/") {
			t.Fatalf("create draft: %d %s", r.Status, webtest.Text(r.Body))
		}
		v2ID := strings.TrimPrefix(r.Location, "/admin/workflows/")
		webtest.WantPage(t, admin.Get(r.Location), 200, "Đã tạo bản nháp.", "contract-default v2", "Bản nháp")
		webtest.WantPage(t, admin.Get(r.Location+"/edit"), 200, "Sửa bản nháp quy trình", "Đang kiểm tra CCM")

		// Edits the form cannot read, then rules the draft breaks.
		good := draftForm(v1.wfDraft)
		good.Set("name", "Quy trình hợp đồng 2")
		bad := draftForm(v1.wfDraft)
		bad.Set("steps.1.slaHours", "abc")
		r = admin.Post("/admin/workflows/"+v2ID, bad)
		webtest.WantPage(t, r, 400, "Phải là một số nguyên.")
		if !strings.Contains(r.Body, `id="f-Steps[1].SlaHours"`) {
			t.Errorf("the edit form is not shown again")
		}
		bad.Set("steps.1.slaHours", "0")
		n := len(v1.Transitions)
		bad.Set("moves.count", strconv.Itoa(n+1))
		bad.Set(fmt.Sprintf("moves.%d.from", n), "DangGopY")
		bad.Set(fmt.Sprintf("moves.%d.to", n), "DangSoanThao")
		bad.Set(fmt.Sprintf("moves.%d.kind", n), "return")
		bad.Set(fmt.Sprintf("moves.%d.roles", n), "Nobody")
		if r := admin.Post("/admin/workflows/"+v2ID, bad); r.Status != http.StatusSeeOther {
			t.Fatalf("save a draft that breaks rules: %d %s", r.Status, webtest.Text(r.Body))
		}
		r = admin.Post("/admin/workflows/"+v2ID+"/validate", nil)
		webtest.WantPage(t, r, 200, "Quy trình còn 2 lỗi", "Số giờ SLA phải lớn hơn 0", "bad_sla", "bước Đang đàm phán",
			"Vai trò không tồn tại", "unknown_role", "bước chuyển Đang góp ý → Đang soạn thảo")
		wellFormedSVG(t, r.Body, "wf-drawing")
		r = admin.Post("/admin/workflows/"+v2ID+"/publish", nil)
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.", "Số giờ SLA phải lớn hơn 0", "Vai trò không tồn tại")
		if strings.Contains(r.Body, "SLA hours must be above zero</a>") {
			t.Errorf("publish's refusal repeats the field messages")
		}

		// Fixed, validated and published.
		if r := admin.Post("/admin/workflows/"+v2ID, good); r.Status != http.StatusSeeOther {
			t.Fatalf("save: %d %s", r.Status, webtest.Text(r.Body))
		}
		webtest.WantPage(t, admin.Post("/admin/workflows/"+v2ID+"/validate", nil), 200, "Quy trình hợp lệ")
		if r := admin.Post("/admin/workflows/"+v2ID+"/publish", nil); r.Status != http.StatusSeeOther {
			t.Fatalf("publish: %d %s", r.Status, webtest.Text(r.Body))
		}
		webtest.WantPage(t, admin.Get("/admin/workflows/"+v2ID), 200, "Đã ban hành quy trình.", "Đã ban hành")
		webtest.WantPage(t, admin.Post("/admin/workflows/"+v2ID+"/publish", nil), http.StatusConflict, "Hồ sơ không còn sửa được")
		if r := admin.Get("/admin/workflows/" + v2ID + "/edit"); r.Status != http.StatusSeeOther {
			t.Errorf("edit a published workflow: %d", r.Status)
		}

		// Two contracts in flight on v1.
		var sup, prj struct{ ID string }
		w.api(t, "POST", "/api/suppliers", map[string]any{"code": "NCC01", "name": "Nhà cung cấp 1", "supplierType": "Material"}, 201, &sup)
		w.api(t, "POST", "/api/projects", map[string]any{"code": "DA01", "name": "Dự án 1"}, 201, &prj)
		var ids []string
		for i := range 2 {
			var c struct{ ID string }
			w.api(t, "POST", "/api/contracts", map[string]any{"title": fmt.Sprintf("HĐ %d", i), "contractType": "Subcontract",
				"supplierId": sup.ID, "projectId": prj.ID, "value": 1000000}, 201, &c)
			ids = append(ids, c.ID)
		}
		w.api(t, "POST", "/api/contracts/"+ids[1]+"/transitions", map[string]any{"toPhase": "DangDamPhan"}, 200, nil)

		// The dry run shows the plan and changes nothing; the migration moves them.
		webtest.WantPage(t, admin.Get("/admin/workflows/"+v1.ID), 200, "2 hồ sơ chưa kết thúc.")
		r = admin.Post("/admin/workflows/"+v1.ID+"/migrate", url.Values{"toDefinitionId": {v2ID}, "dryRun": {"true"}})
		webtest.WantPage(t, r, 200, "Kết quả chạy thử", "Đang soạn thảo", "Đang đàm phán", "Chuyển 2 hồ sơ")
		var plan struct{ Total int64 }
		w.api(t, "GET", "/api/workflows/"+v1.ID+"/in-flight", nil, 200, &plan)
		if plan.Total != 2 {
			t.Fatalf("after the dry run, %d in flight on v1, want 2", plan.Total)
		}
		r = admin.Post("/admin/workflows/"+v1.ID+"/migrate", url.Values{"toDefinitionId": {"not-an-id"}, "dryRun": {"true"}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.")
		if !regexp.MustCompile(`id="f-ToDefinitionId"[\s\S]*?class="field-error"`).MatchString(r.Body) {
			t.Errorf("the target's problem is not next to its field")
		}
		r = admin.Post("/admin/workflows/"+v1.ID+"/migrate", url.Values{"toDefinitionId": {v2ID}, "dryRun": {"false"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("migrate: %d %s", r.Status, webtest.Text(r.Body))
		}
		webtest.WantPage(t, admin.Get(r.Location), 200, "Đã chuyển các hồ sơ sang phiên bản đích.", "0 hồ sơ chưa kết thúc.")
		w.api(t, "GET", "/api/workflows/"+v2ID+"/in-flight", nil, 200, &plan)
		if plan.Total != 2 {
			t.Fatalf("after the migration, %d in flight on v2, want 2", plan.Total)
		}

		// Assignments: read, change, and a refusal next to its row.
		webtest.WantPage(t, admin.Get("/admin/workflows/assignments"), 200, "Hợp đồng thầu phụ", "contract-default v1")
		r = admin.Post("/admin/workflows/assignments", url.Values{"documentType": {"contract.Subcontract"}, "workflowDefinitionId": {v2ID}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("assign: %d %s", r.Status, webtest.Text(r.Body))
		}
		var as []struct {
			DocumentType string
			Version      *int
		}
		w.api(t, "GET", "/api/workflows/assignments", nil, 200, &as)
		for _, a := range as {
			if a.DocumentType == "contract.Subcontract" && (a.Version == nil || *a.Version != 2) {
				t.Errorf("Subcontract assigned to %v, want version 2", a.Version)
			}
		}
		var draft struct{ ID string }
		w.api(t, "POST", "/api/workflows", map[string]any{"documentKind": "contract", "key": "contract-default", "name": "v3", "fromId": v2ID}, 201, &draft)
		r = admin.Post("/admin/workflows/assignments", url.Values{"documentType": {"contract.Service"}, "workflowDefinitionId": {draft.ID}})
		webtest.WantPage(t, r, 400, "Vui lòng sửa các trường bị đánh dấu.", "Is a draft; publish it first.")
		if !regexp.MustCompile(`id="assign-contract.Service"[\s\S]*?class="field-error"`).MatchString(r.Body) {
			t.Errorf("the assignment's problem is not on its row")
		}

		// A draft is deleted through its page; a published one is not.
		if r := admin.Post("/admin/workflows/"+draft.ID+"/delete", nil); r.Status != http.StatusSeeOther {
			t.Fatalf("delete draft: %d", r.Status)
		}
		webtest.WantPage(t, admin.Post("/admin/workflows/"+v1.ID+"/delete", nil), http.StatusConflict, "Hồ sơ không xoá được")
		if r := admin.Get("/admin/workflows/" + draft.ID); r.Status != http.StatusNotFound {
			t.Errorf("deleted draft: %d", r.Status)
		}
	})
}

// TestWorkflowPagesModuleOff: without the workflow module its pages are not there.
func TestWorkflowPagesModuleOff(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver, testkit.WithModules(func() kernel.Module { return identity.New() }))
		c := webtest.NewClient(t, webtest.Serve(t, app))
		c.SignIn(identitytest.AdminEmail, identitytest.AdminPassword)
		for _, path := range []string{"/admin/workflows", "/admin/workflows/assignments"} {
			if r := c.Get(path); r.Status != http.StatusNotFound {
				t.Errorf("%s without the workflow module: %d", path, r.Status)
			}
		}
	})
}
