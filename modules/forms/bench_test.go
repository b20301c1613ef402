package forms_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/contractflow/contractflow/modules/forms/internal/core"
	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/seeds/templates"
)

// BenchmarkRenderTemplate renders each seeded template through the
// Renderer the contracts module uses (row lookup, value checks, file read
// from blob storage, render), every field given a value.
func BenchmarkRenderTemplate(b *testing.B) {
	app := identitytest.Start(b, "sqlite")
	admin := identitytest.AdminToken(b, app)
	rnd := renderer(b, app)
	for _, tpl := range listTemplates(b, app, admin, "").Items {
		data := valuesFor(tpl.FieldSpec)
		b.Run(tpl.FormCode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rnd.RenderTemplate(context.Background(), tpl.ID, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderFile is the rendering alone: the seeded file in memory,
// values already checked.
func BenchmarkRenderFile(b *testing.B) {
	for file, spec := range core.SeedSpecs() {
		data, err := fs.ReadFile(templates.Files, file)
		if err != nil {
			b.Fatal(err)
		}
		vals, err := render.Prepare(spec, valuesFor(spec))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(file, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := render.Render(data, vals, render.DefaultLimits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
