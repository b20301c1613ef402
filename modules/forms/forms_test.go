package forms_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/xuri/excelize/v2"

	"github.com/contractflow/contractflow/modules/forms"
	"github.com/contractflow/contractflow/modules/forms/internal/core"
	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/openapi"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/seeds/templates"
)

const (
	docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

var seededCodes = []string{"HDDV-01", "HDGK-01", "HDKNCC-01", "HDKTP-01", "HDTP-01", "MB-01", "NCC-01", "NCC-PL01"}

// TestSeedFilesMatchFieldSpecs checks that each seeded record's fieldSpec
// lists exactly the placeholders of its file, and that every shipped file
// passes the upload checks.
func TestSeedFilesMatchFieldSpecs(t *testing.T) {
	specs := core.SeedSpecs()
	shipped, err := fs.Glob(templates.Files, "*.*")
	if err != nil {
		t.Fatal(err)
	}
	if len(shipped) != 8 || len(specs) != 8 {
		t.Fatalf("shipped %v, specs for %d files", shipped, len(specs))
	}
	for file, spec := range specs {
		t.Run(file, func(t *testing.T) {
			data, err := fs.ReadFile(templates.Files, file)
			if err != nil {
				t.Fatal(err)
			}
			info, err := render.Inspect(data, render.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range spec {
				names = append(names, f.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, info.Placeholders) {
				t.Errorf("fieldSpec %v\nfile      %v", names, info.Placeholders)
			}
			parts := zipFiles(t, data)
			checkXMLParts(t, parts)
			checkPackage(t, parts)
		})
	}
}

func TestSeededTemplates(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)

		all := listTemplates(t, app, admin, "")
		if all.TotalCount != 8 || len(all.Items) != 8 {
			t.Fatalf("want 8 seeded templates, got %d", all.TotalCount)
		}
		var codes []string
		for _, tpl := range all.Items {
			codes = append(codes, tpl.FormCode)
			if !tpl.IsActive || !tpl.FileAvailable || tpl.StoragePath == "" || !blobExists(t, app, tpl.StoragePath) {
				t.Errorf("%s: active %v, file %v (%s)", tpl.FormCode, tpl.IsActive, tpl.FileAvailable, tpl.StoragePath)
			}
			wantFormat := "docx"
			if tpl.FormCode == "NCC-PL01" {
				wantFormat = "xlsx"
			}
			if tpl.Format != wantFormat || !strings.HasSuffix(tpl.FileName, "."+wantFormat) {
				t.Errorf("%s: format %s, file %s", tpl.FormCode, tpl.Format, tpl.FileName)
			}
		}
		if !slices.Equal(codes, seededCodes) {
			t.Errorf("codes %v (sorted by formCode), want %v", codes, seededCodes)
		}
		types := map[string]string{}
		for _, tpl := range all.Items {
			types[tpl.FormCode] = tpl.ContractType
		}
		wantTypes := map[string]string{"HDTP-01": "Subcontract", "HDGK-01": "PieceWork", "NCC-01": "Supply", "HDDV-01": "Service",
			"MB-01": "Purchase", "HDKNCC-01": "FrameworkSupply", "HDKTP-01": "FrameworkSubcontract", "NCC-PL01": "Supply"}
		for code, ct := range wantTypes {
			if types[code] != ct {
				t.Errorf("%s: contract type %s, want %s", code, types[code], ct)
			}
		}

		// Seeding again changes nothing.
		files := storedFiles(t, app)
		if err := app.Kernel.Seed(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := listTemplates(t, app, admin, "").TotalCount; n != 8 {
			t.Errorf("after a second seed: %d templates", n)
		}
		if after := storedFiles(t, app); !slices.Equal(files, after) {
			t.Errorf("a second seed changed storage: %v → %v", files, after)
		}

		hdtp := byCode(t, app, admin, "HDTP-01")
		signer := identitytest.Token(t, app, identity.RoleAuthorizedSigner)
		app.Run(t, []testkit.Scenario{
			{Name: "list without a token", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates"}, Status: 401},
			{Name: "get without a token", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/" + hdtp.ID}, Status: 401},
			{Name: "render without a token", Request: testkit.Request{Method: "POST", Path: "/api/forms/templates/" + hdtp.ID + "/render",
				Body: map[string]any{}}, Status: 401},
			{Name: "AuthorizedSigner cannot get", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/" + hdtp.ID, Token: signer},
				Status: 403, Code: "forbidden"},
			{Name: "AuthorizedSigner cannot render", Request: testkit.Request{Method: "POST", Path: "/api/forms/templates/" + hdtp.ID + "/render",
				Token: signer, Body: valuesFor(hdtp.FieldSpec)}, Status: 403, Code: "forbidden"},
			{Name: "filter by contract type", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?contractType=Supply", Token: admin},
				Status: 200, Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if p.TotalCount != 2 || p.Items[0].FormCode != "NCC-01" || p.Items[1].FormCode != "NCC-PL01" {
						t.Errorf("Supply templates: %+v", p)
					}
				}},
			{Name: "unknown contract type", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?contractType=Lease", Token: admin},
				Status: 400, Code: "validation_failed", Fields: []string{"ContractType"}},
			{Name: "onlyActive not a boolean", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?onlyActive=maybe", Token: admin},
				Status: 400, Fields: []string{"OnlyActive"}},
			{Name: "unknown sort", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?sort=storagePath", Token: admin},
				Status: 400, Fields: []string{"Sort"}},
			{Name: "search and paging", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?search=khung&sort=-formCode&pageSize=1&page=2", Token: admin},
				Status: 200, Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if p.TotalCount != 2 || len(p.Items) != 1 || p.Items[0].FormCode != "HDKNCC-01" {
						t.Errorf("search 'khung', page 2 of 1: %+v", p)
					}
				}},
			{Name: "LIKE wildcards are searched as text", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates?search=%25", Token: admin},
				Status: 200, Check: func(t *testing.T, r *testkit.Response) {
					var p page
					r.JSON(t, &p)
					if p.TotalCount != 0 {
						t.Errorf("search '%%' matched %d templates", p.TotalCount)
					}
				}},
			{Name: "get one", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/" + hdtp.ID, Token: admin}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var tpl template
					r.JSON(t, &tpl)
					if tpl.FormCode != "HDTP-01" || len(tpl.FieldSpec) == 0 || tpl.Version != 1 {
						t.Errorf("got %+v", tpl)
					}
				}},
			{Name: "get unknown", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/" + uuid.NewString(), Token: admin}, Status: 404, Code: "not_found"},
			{Name: "get malformed id", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/nope", Token: admin}, Status: 404},
		})

		t.Run("a template whose file is gone is shown inactive", func(t *testing.T) {
			mb := byCode(t, app, admin, "MB-01")
			if err := app.Kernel.App().Blobs.Delete(context.Background(), mb.StoragePath); err != nil {
				t.Fatal(err)
			}
			got := getTemplate(t, app, admin, mb.ID)
			if got.IsActive || got.FileAvailable {
				t.Errorf("isActive %v, fileAvailable %v after the file was deleted", got.IsActive, got.FileAvailable)
			}
			active := listTemplates(t, app, admin, "?onlyActive=true")
			if active.TotalCount != 7 || slices.ContainsFunc(active.Items, func(x template) bool { return x.FormCode == "MB-01" }) {
				t.Errorf("onlyActive lists %d templates", active.TotalCount)
			}
			if n := listTemplates(t, app, admin, "?onlyActive=false").TotalCount; n != 8 {
				t.Errorf("onlyActive=false lists %d", n)
			}
			app.Run(t, []testkit.Scenario{
				{Name: "render", Request: testkit.Request{Method: "POST", Path: "/api/forms/templates/" + mb.ID + "/render", Token: admin,
					Body: valuesFor(mb.FieldSpec)}, Status: 409, Code: "template_file_missing"},
				{Name: "switching it on", Request: testkit.Request{Method: "PUT", Path: "/api/forms/templates/" + mb.ID, Token: admin,
					Body: map[string]any{"formCode": mb.FormCode, "name": mb.Name, "contractType": mb.ContractType, "fieldSpec": mb.FieldSpec, "isActive": true}},
					Status: 409, Code: "template_file_missing"},
			})
			data, _ := fs.ReadFile(templates.Files, "MB-01.docx")
			r := app.Do(uploadRequest(t, "PUT", "/api/forms/templates/"+mb.ID+"/file", admin, "MB-01.docx", data, nil))
			if r.Status != 200 {
				t.Fatalf("replace the file: %d %s", r.Status, r.Body)
			}
			if got := getTemplate(t, app, admin, mb.ID); !got.IsActive || !got.FileAvailable {
				t.Errorf("after a new file: isActive %v", got.IsActive)
			}
		})
	})
}

func TestRenderEverySeededTemplate(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		// A Drafter has Forms.Read, which is all rendering needs.
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		for _, tpl := range listTemplates(t, app, drafter, "").Items {
			t.Run(tpl.FormCode, func(t *testing.T) {
				values := valuesFor(tpl.FieldSpec)
				r := app.Do(testkit.Request{Method: "POST", Path: "/api/forms/templates/" + tpl.ID + "/render", Token: drafter, Body: values})
				if r.Status != 200 {
					t.Fatalf("render: %d %s", r.Status, r.Body)
				}
				wantType := docxType
				if tpl.Format == "xlsx" {
					wantType = xlsxType
				}
				if ct := r.Header.Get("Content-Type"); ct != wantType {
					t.Errorf("Content-Type %q", ct)
				}
				cd := r.Header.Get("Content-Disposition")
				wantName := tpl.FormCode + " " + tpl.Name + "." + tpl.Format
				_, encoded, _ := strings.Cut(cd, "; filename*=UTF-8''")
				if name, err := url.PathUnescape(encoded); !strings.HasPrefix(cd, "attachment; filename=\"") || err != nil || name != wantName {
					t.Errorf("Content-Disposition %q, want the name %q", cd, wantName)
				}
				if strings.ContainsFunc(cd, func(r rune) bool { return r > 0x7e }) {
					t.Errorf("Content-Disposition is not ASCII: %q", cd)
				}
				parts := zipFiles(t, r.Body)
				checkXMLParts(t, parts)
				checkPackage(t, parts)
				if tpl.Format == "docx" {
					checkRenderedDocx(t, parts)
				} else {
					checkRenderedXlsx(t, r.Body, parts)
				}
			})
		}
	})
}

func checkRenderedDocx(t *testing.T, parts map[string][]byte) {
	t.Helper()
	var all []string
	for _, name := range []string{"word/document.xml", "word/header1.xml", "word/footer1.xml"} {
		paras := wordParagraphs(t, parts[name])
		for _, p := range paras {
			if strings.Contains(p, "{{") || strings.Contains(p, "}}") {
				t.Errorf("%s: a placeholder is left: %q", name, p)
			}
		}
		all = append(all, strings.Join(paras, "\n"))
		if !strings.Contains(strings.Join(paras, "\n"), escapeProbe) && name != "word/header1.xml" {
			t.Errorf("%s does not show %q", name, escapeProbe)
		}
	}
	if !bytes.Contains(parts["word/document.xml"], []byte("&lt;b&gt;&amp;")) || bytes.Contains(parts["word/document.xml"], []byte("<b>")) {
		t.Error("the value is not escaped in document.xml")
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"1.250.000.000", "21/11/2026", "Giá trị partyAName – Hợp đồng số Giá trị contractCode", "Giá trị signingPlace"} {
		if !strings.Contains(text, want) {
			t.Errorf("the document does not show %q", want)
		}
	}
}

func checkRenderedXlsx(t *testing.T, data []byte, parts map[string][]byte) {
	t.Helper()
	if !bytes.Contains(parts["xl/sharedStrings.xml"], []byte("&lt;b&gt;&amp;")) {
		t.Error("the value is not escaped in sharedStrings.xml")
	}
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for _, v := range row {
				if strings.Contains(v, "{{") {
					t.Errorf("%s: a placeholder is left: %q", sheet, v)
				}
			}
		}
		hf, _ := f.GetHeaderFooter(sheet)
		if hf == nil || strings.Contains(hf.OddHeader+hf.OddFooter, "{{") || !strings.Contains(hf.OddFooter, `<b>&&"x"`) {
			t.Errorf("%s: header/footer %+v", sheet, hf)
		}
	}
	const bill = "Bảng giá"
	get := func(cell string) string {
		v, _ := f.GetCellValue(bill, cell, excelize.Options{RawCellValue: true})
		return v
	}
	if v := get("A4"); v != "Nhà cung cấp: "+escapeProbe+" – Mã số thuế: Giá trị partyBTaxCode" {
		t.Errorf("A4 = %q", v)
	}
	// Quantity and price cells become numbers; the amount formulas stay.
	for _, cell := range []string{"E8", "F8", "E10", "F10", "F12"} {
		typ, _ := f.GetCellType(bill, cell)
		if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
			t.Errorf("%s: type %v, want a number", cell, typ)
		}
		if _, err := strconv.ParseFloat(get(cell), 64); err != nil {
			t.Errorf("%s = %q, not a number", cell, get(cell))
		}
	}
	if fx, _ := f.GetCellFormula(bill, "G11"); fx != "SUM(G8:G10)" {
		t.Errorf("G11 formula %q", fx)
	}
	if fx, _ := f.GetCellFormula(bill, "G8"); fx != "E8*F8" {
		t.Errorf("G8 formula %q", fx)
	}
	// 3 lines × 10 × 1 250 000 000, plus 10% VAT.
	if v, err := f.CalcCellValue(bill, "G13", excelize.Options{RawCellValue: true}); err != nil || v != "41250000000" {
		t.Errorf("G13 computes %q (%v), want 41250000000", v, err)
	}
	if p, _ := f.GetCalcProps(); p.FullCalcOnLoad == nil || !*p.FullCalcOnLoad {
		t.Error("the workbook does not ask to be recalculated on open")
	}
}

func TestRenderSplitRunsAndBadValues(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)

		spec := []forms.Field{
			{Name: "partyBName", Label: "Bên B", Type: forms.FieldText, Required: true},
			{Name: "contractValue", Label: "Giá trị", Type: forms.FieldMoney, Required: true},
			{Name: "contractDate", Label: "Ngày", Type: forms.FieldDate},
			{Name: "contractCode", Label: "Số", Type: forms.FieldText},
			{Name: "notes", Label: "Ghi chú", Type: forms.FieldText},
			{Name: "unused", Label: "Không dùng", Type: forms.FieldNumber},
		}
		r := app.Do(uploadRequest(t, "POST", "/api/forms/templates", admin, "Hợp đồng thử.docx", splitDocx(t), map[string]string{
			"formCode": "test-01", "name": "Hợp đồng thử nghiệm", "contractType": "Subcontract", "fieldSpec": mustJSON(spec)}))
		if r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		var up uploadResult
		r.JSON(t, &up)
		if want := "contractCode,contractDate,contractValue,notGiven,notes,partyBName"; strings.Join(up.Placeholders, ",") != want {
			t.Errorf("placeholders %v, want %s", up.Placeholders, want)
		}
		if strings.Join(up.MissingFromSpec, ",") != "notGiven" || strings.Join(up.UnusedInSpec, ",") != "unused" {
			t.Errorf("comparison: missing %v, unused %v", up.MissingFromSpec, up.UnusedInSpec)
		}
		if up.Template.FormCode != "TEST-01" || up.Template.FileName != "Hợp đồng thử.docx" || !up.Template.IsActive {
			t.Errorf("template %+v", up.Template)
		}
		id := up.Template.ID
		renderPath := "/api/forms/templates/" + id + "/render"

		t.Run("split runs", func(t *testing.T) {
			r := app.Do(testkit.Request{Method: "POST", Path: renderPath, Token: admin, Body: map[string]any{
				"partyBName": escapeProbe, "contractValue": 98765432.5, "contractDate": "2026-02-01", "contractCode": "DA001-HDTP-007", "notes": "dòng 1\ndòng 2"}})
			if r.Status != 200 {
				t.Fatalf("render: %d %s", r.Status, r.Body)
			}
			parts := zipFiles(t, r.Body)
			checkXMLParts(t, parts)
			body := wordParagraphs(t, parts["word/document.xml"])
			want := []string{
				`Bên B: <b>&"x"` + ` – A & B`,
				"Giá: 98.765.432,5 đồng, {{ notGiven }}, ngày 01/02/2026.",
				"dòng 1dòng 2",
			}
			if strings.Join(body, "|") != strings.Join(want, "|") {
				t.Errorf("body %q\nwant %q", body, want)
			}
			doc := string(parts["word/document.xml"])
			if !strings.Contains(doc, `<w:rPr><w:b/></w:rPr><w:t xml:space="preserve">&lt;b&gt;&amp;&#34;x&#34;</w:t>`) {
				t.Errorf("the value is not in the first (bold) run of the placeholder:\n%s", doc)
			}
			if !strings.Contains(doc, "<w:br/>") {
				t.Error("the line break of notes is not a w:br")
			}
			if h := wordParagraphs(t, parts["word/header1.xml"]); strings.Join(h, "") != "Số DA001-HDTP-007" {
				t.Errorf("header %q", h)
			}
			if f := wordParagraphs(t, parts["word/footer1.xml"]); strings.Join(f, "") != `<b>&"x"`+" – trang 1" {
				t.Errorf("footer %q", f)
			}
			// Parts without placeholders are copied as they were.
			if !bytes.Equal(parts["word/_rels/document.xml.rels"], zipFiles(t, splitDocx(t))["word/_rels/document.xml.rels"]) {
				t.Error("an untouched part changed")
			}
		})

		huge := strings.Repeat("x", render.MaxTextLength+1)
		app.Run(t, []testkit.Scenario{
			{Name: "missing required", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin, Body: map[string]any{"notes": "n"}},
				Status: 400, Code: "validation_failed", Fields: []string{"PartyBName", "ContractValue"}},
			{Name: "blank required", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin, Body: map[string]any{"partyBName": " ", "contractValue": nil}},
				Status: 400, Fields: []string{"PartyBName", "ContractValue"}},
			{Name: "wrong types", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
				Body: map[string]any{"partyBName": true, "contractValue": "một tỷ", "contractDate": "01/02/2026", "unused": []int{1}}},
				Status: 400, Fields: []string{"PartyBName", "ContractValue", "ContractDate", "Unused"}},
			{Name: "numeric string is a number", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
				Body: map[string]any{"partyBName": "B", "contractValue": "1250000000"}}, Status: 200},
			{Name: "huge value", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
				Body: map[string]any{"partyBName": huge, "contractValue": 1}}, Status: 400, Fields: []string{"PartyBName"}},
			{Name: "too many digits", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
				Body: map[string]any{"partyBName": "B", "contractValue": json15()}}, Status: 400, Fields: []string{"ContractValue"}},
			{Name: "body is an array", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin, Body: []any{1}},
				Status: 400, Fields: []string{"Body"}},
			{Name: "body is not JSON", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin, Body: "partyBName=x", ContentType: "text/plain"},
				Status: 415, Code: "unsupported_media_type"},
			{Name: "unknown template", Request: testkit.Request{Method: "POST", Path: "/api/forms/templates/" + uuid.NewString() + "/render", Token: admin,
				Body: map[string]any{}}, Status: 404, Code: "not_found"},
		})

		t.Run("inactive template", func(t *testing.T) {
			r := app.Do(testkit.Request{Method: "PUT", Path: "/api/forms/templates/" + id, Token: admin, Body: map[string]any{
				"formCode": "TEST-01", "name": "Hợp đồng thử nghiệm", "contractType": "Subcontract", "fieldSpec": spec, "isActive": false, "version": 1}})
			if r.Status != 200 {
				t.Fatalf("switch off: %d %s", r.Status, r.Body)
			}
			app.Run(t, []testkit.Scenario{
				{Name: "render", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
					Body: map[string]any{"partyBName": "B", "contractValue": 1}}, Status: 409, Code: "template_inactive"},
				{Name: "invalid values are reported first", Request: testkit.Request{Method: "POST", Path: renderPath, Token: admin,
					Body: map[string]any{}}, Status: 400, Fields: []string{"PartyBName"}},
			})
			if got := getTemplate(t, app, admin, id); got.IsActive || !got.FileAvailable || got.Version != 2 {
				t.Errorf("after switching off: %+v", got)
			}
			_, err := renderer(t, app).RenderTemplate(context.Background(), id, map[string]any{"partyBName": "B", "contractValue": 1})
			if err == nil || !strings.Contains(err.Error(), "template_inactive") {
				t.Errorf("Renderer: %v", err)
			}
		})
	})
}

func json15() string { return strings.Repeat("9", 16) }

// TestRendererContract exercises the interface the contracts module uses.
func TestRendererContract(t *testing.T) {
	app := identitytest.Start(t, "sqlite")
	admin := identitytest.AdminToken(t, app)
	tpl := byCode(t, app, admin, "HDTP-01")
	rnd := renderer(t, app)
	data := valuesFor(tpl.FieldSpec)
	data["contractValue"] = "1250000000.00" // a decimal's String()
	doc, err := rnd.RenderTemplate(context.Background(), tpl.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ContentType != docxType || doc.FileName != "HDTP-01 Hợp đồng thầu phụ thi công xây dựng.docx" || len(doc.Body) == 0 {
		t.Errorf("document %s %s (%d bytes)", doc.FileName, doc.ContentType, len(doc.Body))
	}
	if _, err := rnd.RenderTemplate(context.Background(), uuid.NewString(), data); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("unknown template: %v", err)
	}
	_, err = rnd.RenderTemplate(context.Background(), tpl.ID, map[string]any{"contractValue": "x"})
	if err == nil || !strings.Contains(err.Error(), "[ContractValue PartyAName PartyBName]") {
		t.Errorf("bad values: %v", err)
	}
	info, err := kernelTemplates(t, app).TemplateInfo(context.Background(), tpl.ID)
	if err != nil || info.FormCode != "HDTP-01" || !info.IsActive || info.Format != "docx" || len(info.Fields) != len(tpl.FieldSpec) {
		t.Errorf("TemplateInfo %+v, %v", info, err)
	}
}

func TestUploadAndUpdate(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		signer := identitytest.Token(t, app, identity.RoleAuthorizedSigner)

		docx, _ := fs.ReadFile(templates.Files, "HDDV-01.docx")
		xlsx, _ := fs.ReadFile(templates.Files, "NCC-PL01.xlsx")
		meta := func(code string) map[string]string {
			return map[string]string{"formCode": code, "name": "Mẫu " + code, "contractType": "Service"}
		}
		up := func(token, name string, file []byte, fields map[string]string) testkit.Request {
			return uploadRequest(t, "POST", "/api/forms/templates", token, name, file, fields)
		}
		notDocx := zipOf(t, map[string]string{"[Content_Types].xml": `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`, "readme.txt": "hello"})
		corruptXlsx := bytes.Clone(xlsx[:len(xlsx)/2])
		badCRC := bytes.Clone(xlsx)
		badCRC[200] ^= 0xff
		bomb := zipBomb(t)

		before := storedFiles(t, app)
		app.Run(t, []testkit.Scenario{
			{Name: "no token", Request: up("", "a.docx", docx, meta("A-01")), Status: 401},
			{Name: "AuthorizedSigner cannot read", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates", Token: signer}, Status: 403, Code: "forbidden"},
			{Name: "Drafter cannot upload", Request: up(drafter, "a.docx", docx, meta("A-01")), Status: 403, Code: "forbidden"},
			{Name: "a zip that is not a docx", Request: up(admin, "a.docx", notDocx, meta("A-01")), Status: 400, Code: "validation_failed", Fields: []string{"File"}},
			{Name: "a truncated xlsx", Request: up(admin, "a.xlsx", corruptXlsx, meta("A-01")), Status: 400, Fields: []string{"File"}},
			{Name: "an xlsx with a damaged entry", Request: up(admin, "a.xlsx", badCRC, meta("A-01")), Status: 400, Fields: []string{"File"}},
			{Name: "a zip bomb", Request: up(admin, "bomb.docx", bomb, meta("A-01")), Status: 400, Fields: []string{"File"}},
			{Name: "a text file named .docx", Request: up(admin, "a.docx", []byte("{{partyBName}}"), meta("A-01")), Status: 415, Code: "unsupported_media_type"},
			{Name: "an empty file", Request: up(admin, "a.docx", []byte{}, meta("A-01")), Status: 400, Fields: []string{"File"}},
			{Name: "no file", Request: up(admin, "", nil, meta("A-01")), Status: 400, Fields: []string{"File"}},
			{Name: "JSON instead of a form", Request: testkit.Request{Method: "POST", Path: "/api/forms/templates", Token: admin, Body: meta("A-01")},
				Status: 415, Code: "unsupported_media_type"},
			{Name: "bad metadata", Request: up(admin, "a.docx", docx, map[string]string{"formCode": "a b", "contractType": "Lease",
				"fieldSpec": `[{"name":"1x","type":"percent"},{"name":"ok"},{"name":"OK"}]`}),
				Status: 400, Fields: []string{"FormCode", "Name", "ContractType", "FieldSpec[0].Name", "FieldSpec[0].Type", "FieldSpec[2].Name"}},
			{Name: "fieldSpec not JSON", Request: up(admin, "a.docx", docx, map[string]string{"formCode": "A-01", "name": "A", "contractType": "Service", "fieldSpec": "{"}),
				Status: 400, Fields: []string{"FieldSpec"}},
			{Name: "a form code in use", Request: up(admin, "a.docx", docx, meta("hdtp-01")), Status: 409, Code: "duplicate_code"},
		})
		if after := storedFiles(t, app); !slices.Equal(before, after) {
			t.Errorf("refused uploads wrote files: %v → %v", before, after)
		}
		if n := listTemplates(t, app, admin, "").TotalCount; n != 8 {
			t.Errorf("refused uploads wrote rows: %d templates", n)
		}

		var created uploadResult
		app.Run(t, []testkit.Scenario{
			{Name: "upload a docx without a fieldSpec", Request: up(admin, `C:\Users\me\..\Mẫu dịch vụ.DOCX`, docx, meta("dv-02")), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) {
					r.JSON(t, &created)
					if loc := r.Header.Get("Location"); loc != "/api/forms/templates/"+created.Template.ID {
						t.Errorf("Location %q", loc)
					}
					if created.Template.FileName != "Mẫu dịch vụ.docx" || created.Template.Format != "docx" || created.Template.FormCode != "DV-02" {
						t.Errorf("template %+v", created.Template)
					}
					if len(created.Placeholders) != len(created.Template.FieldSpec) || len(created.MissingFromSpec) != 0 || len(created.UnusedInSpec) != 0 {
						t.Errorf("derived spec %v vs placeholders %v", created.Template.FieldSpec, created.Placeholders)
					}
					if !slices.Contains(created.Placeholders, "serviceDescription") || created.Template.FieldSpec[0].Type != forms.FieldText {
						t.Errorf("placeholders %v", created.Placeholders)
					}
					if !strings.HasPrefix(created.Template.StoragePath, "templates/") || !blobExists(t, app, created.Template.StoragePath) {
						t.Errorf("stored at %q", created.Template.StoragePath)
					}
				}},
			{Name: "upload an xlsx named .bin", Request: up(admin, "bang-gia.bin", xlsx, map[string]string{"formCode": "PL-02", "name": "Bảng giá", "contractType": "supply",
				"fieldSpec": `[{"name":"item1Qty","label":"KL","type":"number","required":true}]`}), Status: 201,
				Check: func(t *testing.T, r *testkit.Response) {
					var res uploadResult
					r.JSON(t, &res)
					if res.Template.Format != "xlsx" || res.Template.FileName != "bang-gia.bin.xlsx" || res.Template.ContractType != "Supply" {
						t.Errorf("template %+v", res.Template)
					}
					if len(res.Placeholders) != 30 || len(res.MissingFromSpec) != 29 || len(res.UnusedInSpec) != 0 {
						t.Errorf("placeholders %d, missing %d, unused %v", len(res.Placeholders), len(res.MissingFromSpec), res.UnusedInSpec)
					}
				}},
		})
		id := created.Template.ID
		path := "/api/forms/templates/" + id
		body := func(version any, mut func(map[string]any)) map[string]any {
			b := map[string]any{"formCode": "DV-02", "name": "Mẫu dịch vụ (sửa)", "contractType": "Service",
				"fieldSpec": []map[string]any{{"name": "partyBName", "label": "Bên B", "type": "text", "required": true}}, "isActive": true}
			if version != nil {
				b["version"] = version
			}
			if mut != nil {
				mut(b)
			}
			return b
		}
		app.Run(t, []testkit.Scenario{
			{Name: "Drafter cannot update", Request: testkit.Request{Method: "PUT", Path: path, Token: drafter, Body: body(nil, nil)}, Status: 403},
			{Name: "Drafter cannot replace the file", Request: uploadRequest(t, "PUT", path+"/file", drafter, "a.docx", docx, nil), Status: 403},
			{Name: "update unknown", Request: testkit.Request{Method: "PUT", Path: "/api/forms/templates/" + uuid.NewString(), Token: admin, Body: body(nil, nil)}, Status: 404},
			{Name: "update invalid", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: body(nil, func(b map[string]any) {
				b["formCode"], b["contractType"], b["fieldSpec"] = "", "x", []map[string]any{{"name": "a", "type": "bool"}}
				delete(b, "isActive")
			})}, Status: 400, Fields: []string{"FormCode", "ContractType", "FieldSpec[0].Type", "IsActive"}},
			{Name: "update with a wrong JSON type", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: body("one", nil)}, Status: 400, Fields: []string{"Version"}},
			{Name: "update", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: body(1, nil)}, Status: 200,
				Check: func(t *testing.T, r *testkit.Response) {
					var tpl template
					r.JSON(t, &tpl)
					if tpl.Version != 2 || tpl.Name != "Mẫu dịch vụ (sửa)" || len(tpl.FieldSpec) != 1 || !tpl.FieldSpec[0].Required {
						t.Errorf("updated %+v", tpl)
					}
				}},
			{Name: "stale version", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: body(1, nil)}, Status: 409, Code: "stale_version"},
			{Name: "form code in use", Request: testkit.Request{Method: "PUT", Path: path, Token: admin, Body: body(nil, func(b map[string]any) { b["formCode"] = "PL-02" })},
				Status: 409, Code: "duplicate_code"},
		})

		t.Run("replace the file", func(t *testing.T) {
			old := getTemplate(t, app, admin, id)
			files := storedFiles(t, app)
			app.Run(t, []testkit.Scenario{
				{Name: "not a docx", Request: uploadRequest(t, "PUT", path+"/file", admin, "a.docx", notDocx, nil), Status: 400, Fields: []string{"File"}},
				{Name: "stale version", Request: uploadRequest(t, "PUT", path+"/file", admin, "a.docx", docx, map[string]string{"version": "1"}),
					Status: 409, Code: "stale_version"},
				{Name: "bad version", Request: uploadRequest(t, "PUT", path+"/file", admin, "a.docx", docx, map[string]string{"version": "x"}),
					Status: 400, Fields: []string{"Version"}},
				{Name: "unknown template", Request: uploadRequest(t, "PUT", "/api/forms/templates/"+uuid.NewString()+"/file", admin, "a.docx", docx, nil), Status: 404},
			})
			if after := storedFiles(t, app); !slices.Equal(files, after) {
				t.Errorf("refused replacements changed storage: %v → %v", files, after)
			}
			r := app.Do(uploadRequest(t, "PUT", path+"/file", admin, "thử.docx", splitDocx(t), map[string]string{"version": strconv.Itoa(old.Version)}))
			if r.Status != 200 {
				t.Fatalf("replace: %d %s", r.Status, r.Body)
			}
			var res uploadResult
			r.JSON(t, &res)
			if res.Template.StoragePath == old.StoragePath || res.Template.Version != old.Version+1 || res.Template.FileName != "thử.docx" {
				t.Errorf("after replacing: %+v", res.Template)
			}
			if blobExists(t, app, old.StoragePath) || !blobExists(t, app, res.Template.StoragePath) {
				t.Error("the old file was kept or the new one is missing")
			}
			if n := len(storedFiles(t, app)); n != len(files) {
				t.Errorf("storage holds %d files, want %d", n, len(files))
			}
			if strings.Join(res.UnusedInSpec, ",") != "" || !slices.Contains(res.MissingFromSpec, "contractValue") {
				t.Errorf("comparison: missing %v, unused %v", res.MissingFromSpec, res.UnusedInSpec)
			}
		})
	})
}

// TestUploadLimit holds uploads to uploads.maxBytes.
func TestUploadLimit(t *testing.T) {
	app := identitytest.Start(t, "sqlite", testkit.WithConfig("uploads.maxBytes", 4096))
	admin := identitytest.AdminToken(t, app)
	docx, _ := fs.ReadFile(templates.Files, "HDTP-01.docx")
	id := byCode(t, app, admin, "HDTP-01").ID
	app.Run(t, []testkit.Scenario{
		{Name: "upload", Request: uploadRequest(t, "POST", "/api/forms/templates", admin, "a.docx", docx,
			map[string]string{"formCode": "BIG-01", "name": "Big", "contractType": "Service"}), Status: 413, Code: "payload_too_large"},
		{Name: "replace", Request: uploadRequest(t, "PUT", "/api/forms/templates/"+id+"/file", admin, "a.docx", docx, nil), Status: 413},
	})
}

func kernelTemplates(t *testing.T, app *testkit.App) forms.Templates {
	t.Helper()
	v, err := kernel.Need[forms.Templates](app.Kernel.App())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// zipBomb is a zip of about 50 KiB whose document part inflates to 48 MiB,
// over the 32 MiB a part may hold: a thousand to one.
func zipBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := newZip(&buf)
	zw.w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	zw.add(t, "[Content_Types].xml", []byte(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`))
	w := zw.create(t, "word/document.xml")
	chunk := make([]byte, 1<<20)
	for i := 0; i < 48; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	zw.close(t)
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes", buf.Len())
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, parts map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := newZip(&buf)
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		zw.add(t, k, []byte(parts[k]))
	}
	zw.close(t)
	return buf.Bytes()
}

// TestOpenAPIMatchesRoutes checks that the module's routes and its
// documented operations are the same set.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	app := identitytest.Start(t, "sqlite")
	doc, err := app.Kernel.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := openapi.Operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	var documented, mounted []string
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/api/forms/") {
			documented = append(documented, op.Method+" "+op.Path)
		}
	}
	for _, r := range app.Kernel.Routes() {
		if r.Module == "forms" {
			mounted = append(mounted, r.Method+" "+openapi.OpenAPIPath(r.Path))
		}
	}
	slices.Sort(documented)
	slices.Sort(mounted)
	if len(mounted) != 7 || !slices.Equal(documented, mounted) {
		t.Errorf("documented %v\nmounted    %v", documented, mounted)
	}
}
