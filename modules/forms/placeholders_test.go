package forms_test

import (
	"context"
	"io/fs"
	"slices"
	"testing"

	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/seeds/templates"
)

// TestTemplatePlaceholders: GET /api/forms/templates/{id} lists the
// placeholders of the template's file beside its fieldSpec, and a render
// reports the ones it had no value for, which stay in the file as {{name}}
// (issue 18, item 6).
func TestTemplatePlaceholders(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app := identitytest.Start(t, d)
		admin := identitytest.AdminToken(t, app)
		tpl := byCode(t, app, admin, "HDTP-01")
		seed, err := fs.ReadFile(templates.Files, tpl.FileName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := render.Inspect(seed, render.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		got := getTemplate(t, app, admin, tpl.ID).Placeholders
		if len(got) == 0 || !slices.Equal(got, info.Placeholders) {
			t.Fatalf("placeholders = %q, want the seeded file's %q", got, info.Placeholders)
		}
		if !slices.Contains(got, "partyAName") || !slices.Contains(got, "scopeOfWork") {
			t.Errorf("placeholders %q lack partyAName or scopeOfWork", got)
		}

		given := map[string]any{"partyAName": "Công ty A", "partyBName": "Công ty B", "contractValue": "1000000"}
		doc, err := renderer(t, app).RenderTemplate(context.Background(), tpl.ID, given)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range info.Placeholders {
			if _, ok := given[p]; !ok {
				want = append(want, p)
			}
		}
		if !slices.Equal(doc.Unfilled, want) {
			t.Errorf("unfilled = %q, want %q", doc.Unfilled, want)
		}
	})
}
