package forms_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	// The draft export and the report export are the contracts' and
	// reports' endpoints: every test of this package runs with them.
	_ "github.com/contractflow/contractflow/modules/contracts"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/reports"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestRenderedFilesOpenInLibreOffice converts every rendered seeded
// template, a contract's draft export and the contracts report export to
// PDF with LibreOffice (one conversion for all), reads the PDFs' text with
// pdftotext and checks that it holds the rendered values and no "{{"; and
// it converts the price schedule to CSV to see that its formulas compute
// over the numbers rendering wrote. It needs soffice and pdftotext on the
// PATH (Debian: libreoffice-writer-nogui, libreoffice-calc-nogui,
// poppler-utils, which .ci/run installs) and is skipped without them or
// with -short — except under CI=true, where a missing tool fails the test:
// a CI machine that never opens the documents checks nothing.
func TestRenderedFilesOpenInLibreOffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatal("CI=true but soffice is not installed: install libreoffice-writer-nogui and libreoffice-calc-nogui (.ci/run does)")
	}
	if err != nil || testing.Short() {
		t.Skip("soffice not installed (or -short)")
	}
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatal("CI=true but pdftotext is not installed: install poppler-utils (.ci/run does)")
	}
	if err != nil {
		t.Skip("pdftotext not installed")
	}
	app := identitytest.Start(t, "sqlite")
	admin := identitytest.AdminToken(t, app)
	rnd := renderer(t, app)
	dir := t.TempDir()
	var files []string
	// want lists, by file, values its PDF text must hold.
	want := map[string][]string{}
	write := func(name string, body []byte, values ...string) {
		t.Helper()
		name = filepath.Join(dir, name)
		if err := os.WriteFile(name, body, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
		want[name] = values
	}
	templates := listTemplates(t, app, admin, "").Items
	for _, tpl := range templates {
		doc, err := rnd.RenderTemplate(context.Background(), tpl.ID, valuesFor(tpl.FieldSpec))
		if err != nil {
			t.Fatalf("%s: %v", tpl.FormCode, err)
		}
		write(tpl.FormCode+"."+tpl.Format, doc.Body)
	}
	draft, report := draftAndReport(t, app, admin, templates)
	write("draft.docx", draft, "Công ty Thép PDF", "0101234567", "Dự án PDF", "1.500.000", "Giá trị scopeOfWork")
	write("report.xlsx", report, "Hợp đồng kiểm tra PDF", "Công ty Thép PDF", "Dự án PDF", "1,500,000")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile := "-env:UserInstallation=file://" + filepath.Join(dir, "profile")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, soffice, append([]string{profile, "--headless", "--norestore"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("soffice %v: %v\n%s", args, err, out)
		}
	}
	run(append([]string{"--convert-to", "pdf", "--outdir", filepath.Join(dir, "pdf")}, files...)...)
	for _, f := range files {
		pdf := filepath.Join(dir, "pdf", strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))+".pdf")
		if st, err := os.Stat(pdf); err != nil || st.Size() < 1000 {
			t.Errorf("%s did not convert to PDF (%v)", filepath.Base(f), err)
			continue
		}
		out, err := exec.CommandContext(ctx, pdftotext, "-enc", "UTF-8", pdf, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext %s: %v", pdf, err)
		}
		text := strings.Join(strings.Fields(string(out)), " ")
		if strings.Contains(text, "{{") {
			t.Errorf("%s as PDF still shows a placeholder: %s", filepath.Base(f), text)
		}
		for _, v := range want[f] {
			if !strings.Contains(text, v) {
				t.Errorf("%s as PDF lacks %q: %s", filepath.Base(f), v, text)
			}
		}
	}
	run("--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1", "--outdir", filepath.Join(dir, "csv"), filepath.Join(dir, "NCC-PL01.xlsx"))
	csv, err := os.ReadFile(filepath.Join(dir, "csv", "NCC-PL01.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// 3 lines × 10 × 1 250 000 000 + 10% VAT, as LibreOffice computes it
	// (CSV in UTF-8, numbers as shown).
	for _, want := range []string{`"41,250,000,000"`, `"3,750,000,000"`, `"1,250,000,000"`, `Nhà cung cấp: <b>&""x"" – Mã số thuế`} {
		if !strings.Contains(string(csv), want) {
			t.Errorf("the price schedule as LibreOffice reads it lacks %q:\n%s", want, csv)
		}
	}
}

// draftAndReport drafts a contract on the HDTP-01 template with every
// field of its spec in the draft data, and answers its draft export and the
// contracts report export.
func draftAndReport(t *testing.T, app *testkit.App, admin string, templates []template) (draft, report []byte) {
	t.Helper()
	call := func(method, path string, body any, status int) *testkit.Response {
		t.Helper()
		r := app.Do(testkit.Request{Method: method, Path: path, Token: admin, Body: body})
		if r.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	var id struct{ ID string }
	call("POST", "/api/suppliers", map[string]any{"code": "NCCPDF", "name": "Công ty Thép PDF", "supplierType": "Material",
		"taxCode": "0101234567"}, 201).JSON(t, &id)
	supplier := id.ID
	call("POST", "/api/projects", map[string]any{"code": "DAPDF", "name": "Dự án PDF"}, 201).JSON(t, &id)
	project := id.ID
	i := slices.IndexFunc(templates, func(x template) bool { return x.FormCode == "HDTP-01" })
	if i < 0 {
		t.Fatal("no template HDTP-01")
	}
	call("POST", "/api/contracts", map[string]any{"title": "Hợp đồng kiểm tra PDF", "contractType": "Subcontract",
		"templateId": templates[i].ID, "supplierId": supplier, "projectId": project, "value": 1500000,
		"draftData": valuesFor(templates[i].FieldSpec)}, 201).JSON(t, &id)
	contract := id.ID
	var a struct {
		ID                   string
		UnfilledPlaceholders []string
	}
	call("POST", "/api/contracts/"+contract+"/draft-export", nil, 201).JSON(t, &a)
	if len(a.UnfilledPlaceholders) != 0 {
		t.Errorf("the draft export left %q unfilled", a.UnfilledPlaceholders)
	}
	draft = call("GET", "/api/contracts/"+contract+"/attachments/"+a.ID, nil, 200).Body
	report = call("GET", "/api/reports/contracts/export", nil, 200).Body
	return draft, report
}
