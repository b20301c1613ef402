package contracts_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// templateID finds a seeded template by form code through the forms API.
func (e *env) templateID(t testing.TB, formCode string) string {
	t.Helper()
	r := e.do("GET", "/api/forms/templates?pageSize=100", e.admin, nil)
	if r.Status != 200 {
		t.Fatalf("templates: %d %s", r.Status, r.Body)
	}
	var p struct {
		Items []struct{ ID, FormCode string }
	}
	r.JSON(t, &p)
	for _, it := range p.Items {
		if it.FormCode == formCode {
			return it.ID
		}
	}
	t.Fatalf("no template %s", formCode)
	return ""
}

// docxText returns the text of word/document.xml.
func docxText(t testing.TB, b []byte) string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	for _, f := range z.File {
		if f.Name == "word/document.xml" {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			out, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
	}
	t.Fatal("no word/document.xml")
	return ""
}

// TestTemplateOfContract: a contract's template must exist and be for its
// contract type.
func TestTemplateOfContract(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, withForms)
		hdtp := e.templateID(t, "HDTP-01")
		ncc := e.templateID(t, "NCC-01")
		drafter := e.user(t, "Drafter")
		c := e.create(t, drafter.token, map[string]any{"templateId": hdtp})
		if c.TemplateID == nil || *c.TemplateID != hdtp {
			t.Fatalf("templateId %v", c.TemplateID)
		}
		if s := e.create(t, drafter.token, map[string]any{"contractType": "Supply", "templateId": ncc}); *s.TemplateID != ncc {
			t.Fatal("supply template not kept")
		}
		post := func(over map[string]any) testkit.Request {
			return testkit.Request{Method: "POST", Path: "/api/contracts", Token: drafter.token, Body: e.body(over)}
		}
		put := func(over map[string]any) testkit.Request {
			over["title"] = c.Title
			return testkit.Request{Method: "PUT", Path: "/api/contracts/" + c.ID, Token: drafter.token, Body: e.body(over)}
		}
		bad := func(name string, req testkit.Request) testkit.Scenario {
			return testkit.Scenario{Name: name, Request: req, Status: 400, Code: "validation_failed", Fields: []string{"TemplateId"}}
		}
		n := e.count(t, "SELECT COUNT(*) FROM contracts")
		e.app.Run(t, []testkit.Scenario{
			bad("unknown template", post(map[string]any{"templateId": "0190f5f2-7a3b-7c4d-8e5f-000000000001"})),
			bad("template of another type", post(map[string]any{"templateId": ncc})),
			bad("template not a UUID", post(map[string]any{"templateId": "HDTP-01"})),
			bad("update to another type's template", put(map[string]any{"templateId": ncc})),
		})
		if got := e.count(t, "SELECT COUNT(*) FROM contracts"); got != n {
			t.Fatalf("%d contracts written by refused requests", got-n)
		}
		if got := e.get(t, drafter.token, c.ID); got.TemplateID == nil || *got.TemplateID != hdtp {
			t.Fatal("refused update changed the template")
		}

		t.Run("a switched-off template", func(t *testing.T) {
			r := e.do("GET", "/api/forms/templates/"+hdtp, e.admin, nil)
			var tpl map[string]any
			r.JSON(t, &tpl)
			tpl["isActive"] = false
			r = e.do("PUT", "/api/forms/templates/"+hdtp, e.admin, tpl)
			if r.Status != 200 {
				t.Fatalf("switch off: %d %s", r.Status, r.Body)
			}
			testkit.WantProblem(t, e.do("POST", "/api/contracts", drafter.token, e.body(map[string]any{"templateId": hdtp})), 400, "validation_failed", "TemplateId")
		})
	})
}

// TestDraftExport renders the contract's template with its draft data and
// facts and keeps the file as a DraftExport attachment.
func TestDraftExport(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		dir := t.TempDir()
		e := start(t, d, withForms, testkit.WithConfig("storage.path", dir))
		hdtp := e.templateID(t, "HDTP-01")
		drafter := e.user(t, "Drafter")
		c := e.create(t, drafter.token, map[string]any{"templateId": hdtp, "value": 1500000000.5,
			"draftData": map[string]any{"partyAName": "Công ty Xây dựng ContractFlow", "partyBName": "tên do người soạn gõ"}})
		path := "/api/contracts/" + c.ID + "/draft-export"
		r := e.do("POST", path, drafter.token, nil)
		if r.Status != 201 {
			t.Fatalf("draft export: %d %s", r.Status, r.Body)
		}
		var a attachment
		r.JSON(t, &a)
		if a.Purpose != "DraftExport" || a.ContentType != "application/vnd.openxmlformats-officedocument.wordprocessingml.document" ||
			!strings.HasSuffix(a.FileName, ".docx") || a.UploadedBy != drafter.id || a.Size <= 0 {
			t.Fatalf("attachment %+v", a)
		}
		if r.Header.Get("Location") != "/api/contracts/"+c.ID+"/attachments/"+a.ID {
			t.Fatalf("location %q", r.Header.Get("Location"))
		}
		dl := e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, drafter.token, nil)
		if dl.Status != 200 || int64(len(dl.Body)) != a.Size {
			t.Fatalf("download: %d, %d bytes", dl.Status, len(dl.Body))
		}
		text := docxText(t, dl.Body)
		for _, want := range []string{"Công ty Xây dựng ContractFlow", "Công ty Vật tư A", "Dự án Một"} {
			if !strings.Contains(text, want) {
				t.Errorf("the rendered draft lacks %q", want)
			}
		}
		if strings.Contains(text, "tên do người soạn gõ") {
			t.Error("draft data overrode the supplier's name")
		}
		if strings.Contains(text, "{{partyBName}}") || strings.Contains(text, "{{contractValue}}") {
			t.Error("placeholders of contract facts left unfilled")
		}
		if got := e.get(t, drafter.token, c.ID).Attachments; len(got) != 1 || got[0].Purpose != "DraftExport" {
			t.Fatalf("detail attachments %+v", got)
		}
		for _, f := range storedFiles(t, dir) {
			if strings.HasPrefix(f, "contracts/") && !generatedName.MatchString(f) {
				t.Errorf("stored name %q is not generated", f)
			}
		}

		t.Run("refusals write nothing", func(t *testing.T) {
			files := len(storedFiles(t, dir))
			rows := e.count(t, "SELECT COUNT(*) FROM contract_attachments")
			noTemplate := e.create(t, drafter.token, nil)
			noPartyA := e.create(t, drafter.token, map[string]any{"templateId": hdtp})
			e.app.Run(t, []testkit.Scenario{
				{Name: "no template", Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + noTemplate.ID + "/draft-export", Token: drafter.token},
					Status: 409, Code: "not_editable"},
				{Name: "required placeholder missing", Request: testkit.Request{Method: "POST", Path: "/api/contracts/" + noPartyA.ID + "/draft-export", Token: drafter.token},
					Status: 400, Code: "validation_failed", Fields: []string{"PartyAName"}},
				{Name: "unknown contract", Request: testkit.Request{Method: "POST", Path: "/api/contracts/0190f5f2-7a3b-7c4d-8e5f-000000000001/draft-export", Token: drafter.token},
					Status: 404, Code: "not_found"},
			})
			if got := len(storedFiles(t, dir)); got != files {
				t.Fatalf("%d files left by refused exports", got-files)
			}
			if got := e.count(t, "SELECT COUNT(*) FROM contract_attachments"); got != rows {
				t.Fatalf("%d rows left by refused exports", got-rows)
			}
		})
	})
}
