package masterdata_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/testkit"
)

func TestListSuppliers(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		for _, s := range []map[string]any{
			{"code": "S-B", "name": "Công ty TNHH Xây dựng Hòa Bình", "supplierType": "Material", "taxCode": "0311111111"},
			{"code": "S-A", "name": "Công ty Cổ phần Thép Đông Á", "supplierType": "Equipment", "taxCode": "0322222222-001", "isActive": false},
			{"code": "S_C", "name": "Doanh nghiệp Tư nhân An Khang", "supplierType": "Service"},
		} {
			create(t, app, admin, "/api/suppliers", s)
			app.Clock.Advance(time.Second) // createdAt orders them as created
		}
		cases := []struct {
			name, query string
			codes       []string
		}{
			{"default order is code", "", []string{"S-A", "S-B", "S_C"}},
			{"search ignores marks", "search=hoa+binh", []string{"S-B"}},
			{"search ignores case and marks in the query", "search=" + url.QueryEscape("HÒA BÌNH"), []string{"S-B"}},
			{"đ folds to d", "search=dong+a", []string{"S-A"}},
			{"search by tax code", "search=0322222222", []string{"S-A"}},
			{"search by branch tax code", "search=0322222222-001", []string{"S-A"}},
			{"search by code in lower case", "search=s_c", []string{"S_C"}},
			{"search words in any order", "search=khang+doanh", []string{"S_C"}},
			{"every word must match", "search=cong+ty+khang", nil},
			{"search by part of a word", "search=ty+tnhh", []string{"S-B"}},
			{"percent is literal", "search=%25", nil},
			{"underscore is literal", "search=s_", []string{"S_C"}},
			{"sort by name", "sort=name", []string{"S-A", "S-B", "S_C"}},
			{"sort by name descending", "sort=-name", []string{"S_C", "S-B", "S-A"}},
			{"sort by code descending", "sort=-code", []string{"S_C", "S-B", "S-A"}},
			{"sort by createdAt", "sort=createdAt", []string{"S-B", "S-A", "S_C"}},
			{"sort by createdAt descending", "sort=-createdAt", []string{"S_C", "S-A", "S-B"}},
			{"filter by type", "supplierType=Equipment", []string{"S-A"}},
			{"filter inactive", "isActive=false", []string{"S-A"}},
			{"filters and search combine", "isActive=true&search=cong+ty", []string{"S-B"}},
			{"type and active combine", "supplierType=Equipment&isActive=true", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p := list(t, app, admin, "/api/suppliers?"+c.query)
				if !slices.Equal(p.codes(), c.codes) && len(p.codes())+len(c.codes) > 0 {
					t.Errorf("codes %v, want %v", p.codes(), c.codes)
				}
				if p.TotalCount != len(c.codes) {
					t.Errorf("totalCount %d, want %d", p.TotalCount, len(c.codes))
				}
			})
		}
		t.Run("paging", func(t *testing.T) {
			for _, c := range []struct {
				query                  string
				codes                  []string
				page, size, total, pgs int
			}{
				{"pageSize=2", []string{"S-A", "S-B"}, 1, 2, 3, 2},
				{"pageSize=2&page=2", []string{"S_C"}, 2, 2, 3, 2},
				{"pageSize=2&page=3", []string{}, 3, 2, 3, 2},
				{"pageSize=3", []string{"S-A", "S-B", "S_C"}, 1, 3, 3, 1},
				{"search=nothing-matches", []string{}, 1, 20, 0, 0},
			} {
				p := list(t, app, admin, "/api/suppliers?"+c.query)
				if !slices.Equal(p.codes(), c.codes) || p.Page != c.page || p.PageSize != c.size || p.TotalCount != c.total || p.TotalPages != c.pgs {
					t.Errorf("%s: %v page %d size %d total %d pages %d; want %v %d %d %d %d", c.query,
						p.codes(), p.Page, p.PageSize, p.TotalCount, p.TotalPages, c.codes, c.page, c.size, c.total, c.pgs)
				}
				if p.Items == nil {
					t.Errorf("%s: items is null, want []", c.query)
				}
			}
		})
	})
}

func TestListProjectsAndDepartments(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		for _, p := range []map[string]any{
			{"code": "DA002", "name": "Nhà xưởng Mỹ Phước", "status": "Planning", "startDate": "2026-06-01"},
			{"code": "DA001", "name": "Khu căn hộ An Phú", "status": "Active", "startDate": "2026-01-15", "endDate": "2027-12-31"},
			{"code": "DA003", "name": "Trường Tiểu học Hòa Bình", "status": "Closed", "startDate": "2024-03-01", "isActive": false},
		} {
			create(t, app, admin, "/api/projects", p)
		}
		for _, dep := range []map[string]any{{"code": "FIN", "name": "Phòng Tài chính"}, {"code": "ACT", "name": "Phòng Kế toán", "isActive": false}} {
			create(t, app, admin, "/api/departments", dep)
		}
		for _, c := range []struct {
			query string
			codes []string
		}{
			{"/api/projects", []string{"DA001", "DA002", "DA003"}},
			{"/api/projects?sort=startDate", []string{"DA003", "DA001", "DA002"}},
			{"/api/projects?sort=-startDate", []string{"DA002", "DA001", "DA003"}},
			{"/api/projects?status=Active", []string{"DA001"}},
			{"/api/projects?isActive=false", []string{"DA003"}},
			{"/api/projects?search=an+phu", []string{"DA001"}},
			{"/api/projects?search=da00", []string{"DA001", "DA002", "DA003"}},
			{"/api/departments", []string{"ACT", "FIN"}},
			{"/api/departments?isActive=true", []string{"FIN"}},
			{"/api/departments?search=ke+toan", []string{"ACT"}},
			{"/api/departments?sort=-name", []string{"FIN", "ACT"}},
		} {
			if p := list(t, app, admin, c.query); !slices.Equal(p.codes(), c.codes) || p.TotalCount != len(c.codes) {
				t.Errorf("%s: %v (total %d), want %v", c.query, p.codes(), p.TotalCount, c.codes)
			}
		}
	})
}

// With FTS5 in the SQLite build (make's sqlite_fts5 tag), supplier search
// goes through the trigram index, which the triggers keep in step with
// inserts, updates and deletes.
func TestSearchIndexFollowsWrites(t *testing.T) {
	app, admin := start(t, "sqlite")
	conn := app.Kernel.App().DB.Conn(t.Context())
	var fts5 int64
	if err := conn.Raw(`SELECT COUNT(*) FROM pragma_module_list WHERE name = 'fts5'`).Scan(&fts5).Error; err != nil {
		t.Fatal(err)
	}
	if fts5 == 0 {
		t.Skip("this SQLite has no FTS5 (build with -tags sqlite_fts5, as make does)")
	}
	var plan []struct{ Detail string }
	if err := conn.Raw(`EXPLAIN QUERY PLAN SELECT id FROM suppliers WHERE suppliers.rowid IN (SELECT rowid FROM suppliers_fts WHERE suppliers_fts MATCH '"thep"')`).Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(plan), "VIRTUAL TABLE INDEX") {
		t.Errorf("search does not use the trigram index: %v", plan)
	}
	s := create(t, app, admin, "/api/suppliers", map[string]any{"code": newCode("FT-"), "name": "Thép Hòa Phát", "supplierType": "Material"})
	id := s["id"].(string)
	count := func(search string) int {
		var page struct{ TotalCount int }
		r := app.Do(testkit.Request{Method: "GET", Path: "/api/suppliers?search=" + url.QueryEscape(search), Token: admin})
		r.JSON(t, &page)
		return page.TotalCount
	}
	if n := count("hoa phat"); n != 1 {
		t.Fatalf("after insert: %d matches, want 1", n)
	}
	update := with(map[string]any(s), "name", "Xi măng Nghi Sơn")
	if r := app.Do(testkit.Request{Method: "PUT", Path: "/api/suppliers/" + id, Token: admin, Body: update}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if n := count("hoa phat"); n != 0 {
		t.Errorf("old name still found after update: %d", n)
	}
	if n := count("nghi son"); n != 1 {
		t.Errorf("new name: %d matches, want 1", n)
	}
}
