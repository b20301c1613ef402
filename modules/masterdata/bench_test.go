package masterdata_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/modules/masterdata/internal/core"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// withModule loads every registered module, masterdata through a factory
// that hands its instance to the test.
func withModule(got **masterdata.Module) testkit.Option {
	var fs []kernel.Factory
	for _, f := range kernel.Registered() {
		if f().Info().Name != "masterdata" {
			fs = append(fs, f)
		}
	}
	fs = append(fs, func() kernel.Module { m := masterdata.New(); *got = m; return m })
	return testkit.WithModules(fs...)
}

const benchSuppliers = 100_000

// benchInputs are n suppliers: one in 2 is a "xây dựng" company (a search
// that matches many), one in 10 000 a "Hoàng Long" (a search that matches
// few), all five types in turn.
func benchInputs(n int) []core.SupplierInput {
	trades := []string{"Xây dựng", "Vật liệu", "Xây dựng", "Cơ điện", "Xây dựng", "Thiết bị", "Xây dựng", "Tư vấn", "Xây dựng", "Vận tải"}
	places := []string{"Sài Gòn", "Hà Nội", "Đà Nẵng", "Cần Thơ", "Hải Phòng", "Bình Dương", "Đồng Nai", "Nha Trang", "Huế", "Vinh", "Quy Nhơn"}
	out := make([]core.SupplierInput, n)
	for i := range out {
		place := places[i%len(places)]
		if i%10_000 == 7 {
			place = "Hoàng Long"
		}
		tax := fmt.Sprintf("%010d", 3_000_000_000+i)
		out[i] = core.SupplierInput{
			Head:         core.Head{Code: fmt.Sprintf("NCC%06d", i)},
			SupplierType: core.SupplierTypes[i%len(core.SupplierTypes)],
			TaxCode:      &tax,
		}
		out[i].Name = fmt.Sprintf("Công ty TNHH %s %s %d", trades[i%len(trades)], place, i)
	}
	return out
}

// BenchmarkListSuppliers measures GET /api/suppliers over 100 000 suppliers,
// through the whole HTTP stack (guard, handler, JSON) but without the test
// harness's OpenAPI check.
func BenchmarkListSuppliers(b *testing.B) {
	for _, d := range testkit.Drivers() {
		b.Run(d, func(b *testing.B) {
			var mod *masterdata.Module
			app := identitytest.Start(b, d, withModule(&mod))
			began := time.Now()
			n, err := mod.Core().Import(b.Context(), benchInputs(benchSuppliers), nil, nil)
			if err != nil || n != benchSuppliers {
				b.Fatalf("load suppliers: %d, %v", n, err)
			}
			b.Logf("%s: loaded %d suppliers in %v", d, n, time.Since(began).Round(time.Millisecond))
			if d == "postgres" {
				// The statistics and visibility map autovacuum would have
				// made by the time anyone searches.
				if err := app.Kernel.App().DB.Conn(b.Context()).Exec("VACUUM ANALYZE suppliers").Error; err != nil {
					b.Fatal(err)
				}
			}
			token := identitytest.AdminToken(b, app)
			for _, c := range []struct{ name, query string }{
				{"page1-sort-code", ""},
				{"search-few", "search=hoang+long"},
				{"search-many", "search=xay+dung"},
				{"search-code", "search=NCC09999"},
				{"filter-type", "supplierType=Equipment"},
				{"sort-createdAt-desc", "sort=-createdAt"},
				{"sort-name-page50", "sort=name&page=50"},
			} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						req := httptest.NewRequest("GET", "/api/suppliers?"+c.query, nil)
						req.Header.Set("Authorization", "Bearer "+token)
						resp, err := app.Kernel.HTTP().Test(req, -1)
						if err != nil || resp.StatusCode != 200 {
							b.Fatalf("%s: %v %v", c.query, resp.StatusCode, err)
						}
						resp.Body.Close()
					}
				})
			}
			// What another module's list page pays to show 20 suppliers.
			lookup, err := kernel.Need[masterdata.Lookup](app.Kernel.App())
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]string, 20)
			for i := range ids {
				ids[i] = list(b, app, token, fmt.Sprintf("/api/suppliers?search=NCC%06d", 10_000+i*3_000)).Items[0]["id"].(string)
			}
			b.Run("lookup-20-ids", func(b *testing.B) {
				for b.Loop() {
					if refs, err := lookup.Suppliers(b.Context(), ids); err != nil || len(refs) != len(ids) {
						b.Fatalf("%d refs, %v", len(refs), err)
					}
				}
			})
		})
	}
}
