package forms_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/seeds/templates"
)

// TestDownloadTemplateFile: GET /api/forms/templates/{id}/file answers the
// stored file itself (issue 18), so an administrator can correct a seeded
// template in Word and upload it back with PUT …/file.
func TestDownloadTemplateFile(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)
		drafter := identitytest.Token(t, app, identity.RoleDrafter)
		signer := identitytest.Token(t, app, identity.RoleAuthorizedSigner)
		for _, tpl := range listTemplates(t, app, admin, "?pageSize=100").Items {
			t.Run(tpl.FormCode, func(t *testing.T) {
				r := app.Do(testkit.Request{Method: "GET", Path: "/api/forms/templates/" + tpl.ID + "/file", Token: drafter})
				if r.Status != 200 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				seed, err := fs.ReadFile(templates.Files, tpl.FileName)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(r.Body, seed) {
					t.Errorf("the download is not the stored file (%d bytes, seed %d)", len(r.Body), len(seed))
				}
				wantType := "wordprocessingml"
				if tpl.Format == "xlsx" {
					wantType = "spreadsheetml"
				}
				if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, wantType) {
					t.Errorf("Content-Type %q", ct)
				}
				if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "."+tpl.Format) {
					t.Errorf("Content-Disposition %q", cd)
				}
			})
		}
		tpl := byCode(t, app, admin, "HDDV-01")
		path := "/api/forms/templates/" + tpl.ID + "/file"
		app.Run(t, []testkit.Scenario{
			{Name: "no token", Request: testkit.Request{Method: "GET", Path: path}, Status: 401},
			{Name: "AuthorizedSigner cannot read", Request: testkit.Request{Method: "GET", Path: path, Token: signer}, Status: 403, Code: "forbidden"},
			{Name: "unknown template", Request: testkit.Request{Method: "GET", Path: "/api/forms/templates/0190f5f2-7a3b-7c4d-8e5f-000000000001/file", Token: admin},
				Status: 404, Code: "not_found"},
		})
		t.Run("downloaded, edited and uploaded back", func(t *testing.T) {
			file := app.Do(testkit.Request{Method: "GET", Path: path, Token: admin}).Body
			r := app.Do(uploadRequest(t, "PUT", path, admin, tpl.FileName, file, nil))
			if r.Status != 200 {
				t.Fatalf("upload back: %d %s", r.Status, r.Body)
			}
			if again := app.Do(testkit.Request{Method: "GET", Path: path, Token: admin}); !bytes.Equal(again.Body, file) {
				t.Error("the file uploaded back is not the one downloaded")
			}
		})
	})
}
