package contracts_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// TestSearchIsOneMechanism runs the same queries against every searchable
// resource on each engine (issue 18): case, Vietnamese marks, đ/Đ, NFC and
// NFD are matched alike everywhere, because every search goes through
// platform/search. A resource added later belongs in the table.
func TestSearchIsOneMechanism(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d)
		const nfc = "Nguyễn Thị Ánh Đào"
		nfd := "Nguye\u0302\u0303n Thi\u0323 A\u0301nh Đa\u0300o" // the same name, decomposed
		create := func(path string, body map[string]any) {
			if status, b, err := e.raw("POST", path, e.admin, body); err != nil || status != 201 {
				t.Fatalf("POST %s: %d %s %v", path, status, b, err)
			}
		}
		// Each resource holds the name once as NFC and once as NFD, and a
		// decoy that must not match.
		for i, name := range []string{nfc, nfd, "Trần Văn Bình"} {
			code := string(rune('A' + i))
			create("/api/users", map[string]any{"email": "user" + code + "@example.com", "fullName": name,
				"password": "Passw0rd-Long-Enough", "roles": []string{"Drafter"}})
			create("/api/suppliers", map[string]any{"code": "S" + code, "name": name, "supplierType": "Material"})
			create("/api/projects", map[string]any{"code": "P" + code, "name": name})
			create("/api/departments", map[string]any{"code": "D" + code, "name": name})
			create("/api/contracts", e.body(map[string]any{"title": name}))
		}
		resources := []string{"/api/users", "/api/suppliers", "/api/projects", "/api/departments", "/api/contracts"}
		queries := []string{
			nfc, nfd, strings.ToLower(nfc), strings.ToUpper(nfc),
			"nguyen thi anh dao", "NGUYEN THI ANH DAO", "Ánh", "ánh", "anh dao", "đào", "dao", "Dao", "ĐÀO",
			"a\u0301nh", "nguyễn", "thi anh",
		}
		for _, res := range resources {
			for _, q := range queries {
				t.Run(strings.TrimPrefix(res, "/api/")+"/"+q, func(t *testing.T) {
					r := e.do("GET", res+"?pageSize=100&search="+url.QueryEscape(q), e.admin, nil)
					if r.Status != 200 {
						t.Fatalf("%d %s", r.Status, r.Body)
					}
					var p struct {
						TotalCount int
						Items      []map[string]any
					}
					r.JSON(t, &p)
					if p.TotalCount != 2 {
						t.Errorf("search %q found %d, want the NFC and NFD records", q, p.TotalCount)
					}
				})
			}
		}
	})
}
