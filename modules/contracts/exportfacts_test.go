package contracts_test

import (
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestDraftExportTakesPartyBFromTheRecord: every fact the supplier and
// project records hold wins over the draft data (issue 18), so a draft that
// names another company's tax code, address or bank account exports the
// supplier's own; draft data fills only what a record leaves empty; and a
// supplier that cannot be looked up fails the export instead of being
// skipped.
func TestDraftExportTakesPartyBFromTheRecord(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, withForms)
		hdtp := e.templateID(t, "HDTP-01")
		sup := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC777", "name": "Công ty Thép Thật",
			"supplierType": "Material", "taxCode": "0101234567", "address": "12 Lý Thường Kiệt, Hà Nội",
			"bankAccount": "111-222-333"})
		c := e.create(t, e.admin, map[string]any{"templateId": hdtp, "supplierId": sup, "draftData": map[string]any{
			"partyAName": "Công ty Xây dựng ContractFlow", "partyBName": "Công ty Khác", "partyBTaxCode": "0309999999",
			"partyBAddress": "99 Đường Giả", "partyBBankAccount": "999-999", "partyBRepresentative": "Ông Người Soạn",
			"projectName": "Dự án Giả"}})
		r := e.do("POST", "/api/contracts/"+c.ID+"/draft-export", e.admin, nil)
		if r.Status != 201 {
			t.Fatalf("draft export: %d %s", r.Status, r.Body)
		}
		var a attachment
		r.JSON(t, &a)
		text := docxText(t, e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, e.admin, nil).Body)
		for _, want := range []string{"Công ty Thép Thật", "0101234567", "12 Lý Thường Kiệt, Hà Nội", "111-222-333", "Dự án Một",
			"Ông Người Soạn"} { // the record has no contact person: the draft fills it
			if !strings.Contains(text, want) {
				t.Errorf("the export lacks %q", want)
			}
		}
		for _, bad := range []string{"Công ty Khác", "0309999999", "99 Đường Giả", "999-999", "Dự án Giả"} {
			if strings.Contains(text, bad) {
				t.Errorf("the draft's %q overrode the record", bad)
			}
		}

		t.Run("a deleted supplier fails the export", func(t *testing.T) {
			other := e.masterdata(t, "/api/suppliers", map[string]any{"code": "NCC778", "name": "Công ty Sẽ Xóa", "supplierType": "Material"})
			c := e.create(t, e.admin, map[string]any{"templateId": hdtp, "supplierId": other,
				"draftData": map[string]any{"partyAName": "Công ty Xây dựng ContractFlow"}})
			e.exec(t, "UPDATE suppliers SET deleted_at = created_at WHERE id = ?", other)
			testkit.WantProblem(t, e.do("POST", "/api/contracts/"+c.ID+"/draft-export", e.admin, nil), 409, "not_editable")
		})
	})
}
