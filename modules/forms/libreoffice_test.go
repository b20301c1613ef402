package forms_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
)

// TestRenderedFilesOpenInLibreOffice converts every rendered seeded template
// to PDF with LibreOffice, and the price schedule to CSV to see that its
// formulas compute over the numbers rendering wrote. It needs soffice on
// the PATH (Debian: libreoffice-writer-nogui, libreoffice-calc-nogui, which
// .ci/run installs) and is skipped without it or with -short — except under
// CI=true, where a missing LibreOffice fails the test: a CI machine that
// never opens the documents checks nothing.
func TestRenderedFilesOpenInLibreOffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatal("CI=true but soffice is not installed: install libreoffice-writer-nogui and libreoffice-calc-nogui (.ci/run does)")
	}
	if err != nil || testing.Short() {
		t.Skip("soffice not installed (or -short)")
	}
	app := identitytest.Start(t, "sqlite")
	admin := identitytest.AdminToken(t, app)
	rnd := renderer(t, app)
	dir := t.TempDir()
	var files []string
	for _, tpl := range listTemplates(t, app, admin, "").Items {
		doc, err := rnd.RenderTemplate(context.Background(), tpl.ID, valuesFor(tpl.FieldSpec))
		if err != nil {
			t.Fatalf("%s: %v", tpl.FormCode, err)
		}
		name := filepath.Join(dir, tpl.FormCode+"."+tpl.Format)
		if err := os.WriteFile(name, doc.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
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
