package contracts_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// endpoint is one contract route with a body that would otherwise pass.
type endpoint struct {
	name, method, path, policy string
	body                       any
	contentType                string
}

func (e *env) endpoints(t testing.TB, c contract, attachmentID string) []endpoint {
	form, formType := multipartBody(t, map[string]string{"purpose": "ScannedSigned"}, "file", "a.pdf", pdfFile())
	id := "/api/contracts/" + c.ID
	return []endpoint{
		{"list", "GET", "/api/contracts", "Read", nil, ""},
		{"inbox", "GET", "/api/contracts/inbox", "Read", nil, ""},
		{"detail", "GET", id, "Read", nil, ""},
		{"create", "POST", "/api/contracts", "Create", e.body(nil), ""},
		{"update", "PUT", id, "Update", e.body(map[string]any{"title": c.Title}), ""},
		{"delete", "DELETE", id, "Delete", nil, ""},
		{"transition", "POST", id + "/transitions", "Read", map[string]any{"toPhase": DangDamPhan}, ""},
		{"comment", "POST", id + "/comments", "Read", map[string]any{"content": "x"}, ""},
		{"upload", "POST", id + "/attachments", "Update", form, formType},
		{"download", "GET", id + "/attachments/" + attachmentID, "Read", nil, ""},
		{"delete attachment", "DELETE", id + "/attachments/" + attachmentID, "Update", nil, ""},
		{"draft export", "POST", id + "/draft-export", "Update", nil, ""},
	}
}

// TestAuthorization: every endpoint answers 401 without a valid token and
// 403 to a caller whose roles lack its policy (DESIGN §2 defaults), before
// it looks at the contract.
func TestAuthorization(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		c := e.create(t, e.admin, nil)
		up := e.upload(t, e.admin, c.ID, "ScannedSigned", "a.pdf", pdfFile())
		var att attachment
		up.JSON(t, &att)
		noRoles := e.user(t)
		signer := e.user(t, "AuthorizedSigner") // Contracts R
		hr := e.user(t, "HrAdmin")              // Contracts RU
		director := e.user(t, "Director")       // Contracts R
		grants := map[string]map[string]bool{
			"AuthorizedSigner": {"Read": true},
			"Director":         {"Read": true},
			"HrAdmin":          {"Read": true, "Update": true},
		}
		var scenarios []testkit.Scenario
		unknown := contract{ID: "0190f5f2-7a3b-7c4d-8e5f-000000000001", Title: "x"}
		for _, ep := range append(e.endpoints(t, c, att.ID), e.endpoints(t, unknown, att.ID)...) {
			req := testkit.Request{Method: ep.method, Path: ep.path, Body: ep.body, ContentType: ep.contentType}
			scenarios = append(scenarios, testkit.Scenario{Name: ep.name + " " + ep.path + " without a token", Request: req, Status: 401, Code: "token_invalid"})
			bad := req
			bad.Token = "not-a-jwt"
			scenarios = append(scenarios, testkit.Scenario{Name: ep.name + " " + ep.path + " with a bad token", Request: bad, Status: 401, Code: "token_invalid"})
			req.Token = noRoles.token
			scenarios = append(scenarios, testkit.Scenario{Name: ep.name + " " + ep.path + " without roles", Request: req, Status: 403, Code: "forbidden"})
			for role, u := range map[string]user{"AuthorizedSigner": signer, "HrAdmin": hr, "Director": director} {
				if grants[role][ep.policy] {
					continue
				}
				req.Token = u.token
				scenarios = append(scenarios, testkit.Scenario{Name: fmt.Sprintf("%s %s as %s", ep.name, ep.path, role), Request: req, Status: 403, Code: "forbidden",
					Check: func(t *testing.T, r *testkit.Response) {
						if p := r.Problem(t); p.Detail != "You need the Contracts."+ep.policy+" permission." {
							t.Errorf("refused by %q, not by the policy", p.Detail)
						}
					}})
			}
		}
		e.app.Run(t, scenarios)
		if got := e.get(t, e.admin, c.ID); got.Phase != DangSoanThao || len(got.Comments) != 0 || len(got.Attachments) != 1 {
			t.Fatalf("refused requests changed the contract: %+v", got)
		}
		if n := e.count(t, "SELECT COUNT(*) FROM contracts"); n != 1 {
			t.Fatalf("%d contracts", n)
		}

		t.Run("the permission matrix, not the role name, decides", func(t *testing.T) {
			testkit.WantProblem(t, e.do("POST", "/api/contracts", signer.token, e.body(nil)), 403, "forbidden")
			r := e.do("PUT", "/api/permissions", e.admin, map[string]any{"role": "AuthorizedSigner", "menuKey": "Contracts",
				"canRead": true, "canCreate": true, "canUpdate": false, "canDelete": false})
			if r.Status != 200 {
				t.Fatalf("grant: %d %s", r.Status, r.Body)
			}
			if r := e.do("POST", "/api/contracts", signer.token, e.body(nil)); r.Status != 201 {
				t.Fatalf("after the grant: %d %s", r.Status, r.Body)
			}
		})
	})
}

// TestMasterDataInUse: a supplier, project or department that a live
// contract references cannot be deleted; once the contract is deleted it can.
func TestMasterDataInUse(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		sup := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC002", "name": "Công ty B", "supplierType": "Service"})
		prj := e.masterdata(t, "/api/projects", map[string]any{"code": "DA002", "name": "Dự án Hai"})
		dept := e.masterdata(t, "/api/departments", map[string]any{"code": "PKT", "name": "Phòng Kỹ thuật"})
		spare := e.masterdata(t, "/api/projects", map[string]any{"code": "DA009", "name": "Dự án dự phòng"})
		c := e.create(t, e.admin, map[string]any{"supplierId": sup, "projectId": prj, "departmentId": dept})
		published := e.create(t, e.admin, nil) // NCC001, DA001
		e.drive(t, published.ID, DaPhatHanh)
		e.create(t, e.admin, map[string]any{"contractType": "FrameworkSupply", "projectId": nil})

		refs := map[string]string{"/api/suppliers/": sup, "/api/projects/": prj, "/api/departments/": dept}
		for path, id := range refs {
			testkit.WantProblem(t, e.do("DELETE", path+id, e.admin, nil), 409, "in_use")
		}
		// A published contract still uses its supplier and project.
		testkit.WantProblem(t, e.do("DELETE", "/api/suppliers/"+e.supplier, e.admin, nil), 409, "in_use")
		testkit.WantProblem(t, e.do("DELETE", "/api/projects/"+e.project, e.admin, nil), 409, "in_use")
		if r := e.do("DELETE", "/api/projects/"+spare, e.admin, nil); r.Status != 204 {
			t.Fatalf("unused project: %d %s", r.Status, r.Body)
		}

		if r := e.do("DELETE", "/api/contracts/"+c.ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete contract: %d %s", r.Status, r.Body)
		}
		for path, id := range refs {
			if r := e.do("DELETE", path+id, e.admin, nil); r.Status != 204 {
				t.Fatalf("%s after the contract went: %d %s", path, r.Status, r.Body)
			}
		}
	})
}

// TestCreateRacesSupplierDelete: a contract created while its supplier is
// being deleted either is refused or makes the delete fail; a live contract
// never ends up naming a deleted supplier.
func TestCreateRacesSupplierDelete(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		for i := range 15 {
			sup := e.masterdata(t, "/api/suppliers", map[string]any{"code": fmt.Sprintf("RACE%02d", i), "name": "Đua", "supplierType": "Service"})
			var created, deleted int
			var wg sync.WaitGroup
			start := make(chan struct{})
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				status, body, err := e.raw("POST", "/api/contracts", e.admin, e.body(map[string]any{"supplierId": sup}))
				switch {
				case err != nil:
					t.Error(err)
				case status == 201:
					created = 1
				case status != 400:
					t.Errorf("create: %d %s", status, body)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				status, body, err := e.raw("DELETE", "/api/suppliers/"+sup, e.admin, nil)
				switch {
				case err != nil:
					t.Error(err)
				case status == 204:
					deleted = 1
				case status != 409:
					t.Errorf("delete: %d %s", status, body)
				}
			}()
			close(start)
			wg.Wait()
			if created+deleted != 1 {
				t.Fatalf("round %d: contract created %v, supplier deleted %v", i, created == 1, deleted == 1)
			}
		}
	})
}
