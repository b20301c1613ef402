package contracts_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestDraftExportReportsUnfilledPlaceholders: a draft export of a contract
// whose draft data fills little reports the placeholders it could not fill
// (issue 18, item 6); they stay visible in the document as {{name}} and the
// contract's detail shows them again with the attachment.
func TestDraftExportReportsUnfilledPlaceholders(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, withForms)
		c := e.create(t, e.admin, map[string]any{"templateId": e.templateID(t, "HDTP-01"),
			"draftData": map[string]any{"partyAName": "Công ty Xây dựng ContractFlow", "scopeOfWork": "Thi công móng"}})
		r := e.do("POST", "/api/contracts/"+c.ID+"/draft-export", e.admin, nil)
		if r.Status != 201 {
			t.Fatalf("draft export: %d %s", r.Status, r.Body)
		}
		var a attachment
		r.JSON(t, &a)
		got := a.UnfilledPlaceholders
		for _, want := range []string{"contractValueInWords", "paymentTerms", "vatRate", "warrantyMonths"} {
			if !slices.Contains(got, want) {
				t.Errorf("unfilled %q lacks %s", got, want)
			}
		}
		for _, filled := range []string{"partyAName", "scopeOfWork", "partyBName", "contractValue", "projectName"} {
			if slices.Contains(got, filled) {
				t.Errorf("unfilled %q names %s, which has a value", got, filled)
			}
		}
		if !slices.IsSorted(got) {
			t.Errorf("unfilled %q is not sorted", got)
		}
		text := docxText(t, e.do("GET", "/api/contracts/"+c.ID+"/attachments/"+a.ID, e.admin, nil).Body)
		for _, name := range got {
			if !regexp.MustCompile(`\{\{\s*` + regexp.QuoteMeta(name) + `\s*\}\}`).MatchString(text) {
				t.Errorf("the document does not show {{%s}}", name)
			}
		}

		detail := e.get(t, e.admin, c.ID)
		i := slices.IndexFunc(detail.Attachments, func(x attachment) bool { return x.ID == a.ID })
		if i < 0 {
			t.Fatalf("the detail lacks the export %s", a.ID)
		}
		if !slices.Equal(detail.Attachments[i].UnfilledPlaceholders, got) {
			t.Errorf("detail shows unfilled %q, the export answered %q", detail.Attachments[i].UnfilledPlaceholders, got)
		}
	})
}
