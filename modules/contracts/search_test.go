package contracts_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/platform/search"
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

// TestPhaseSearchCountsAndPagesExactly checks a phase's search, whose count
// and page come from one statement over the trigram index by phase, against
// a recount by brute force: common words (every title holds "ong"), rare
// ones, words too short for a trigram, several words, a supplier's name,
// no match, a substring of a word in another script or across its
// punctuation; every page, and one past the end; as Admin (the count from the
// index alone) and through a filter (the count from the rows). Each runs
// with every contract pending in the index, after the index job filed
// them, after moves, an edit and a deletion left some entries stale, and
// after the job filed those too.
func TestPhaseSearchCountsAndPagesExactly(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		titles := []string{"Hợp đồng móng cọc", "Hợp đồng thép", "Móng băng khối A", "Cọc khoan nhồi", "Hợp đồng mộng",
			"Ống cống", "Sơn chống thấm móng", "Bê tông móng cọc x1", "Hợp đồng điện", "Mong manh", "Nhà máy 東京タワー HD-0042"}
		var all []contract
		for i := 0; i < 22; i++ {
			c := e.create(t, e.admin, map[string]any{"title": titles[i%len(titles)] + " " + strconv.Itoa(i)})
			if i%5 == 0 {
				c = e.drive(t, c.ID, DangDamPhan)
			}
			all = append(all, c)
		}
		check := func(t *testing.T) {
			t.Helper()
			slices.SortFunc(all, func(a, b contract) int {
				if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
					return c
				}
				return strings.Compare(b.ID, a.ID)
			})
			for _, phase := range []string{DangSoanThao, DangDamPhan, ""} { // "": every phase
				for _, q := range []string{"ong", "móng", "mong coc", "ng", "móng x1", "hợp đồng 1", "vật tư", "ty a", "zzzz", "moi",
					"京タワ", "ワー", "d-004", "-00", "0042 hd"} {
					var want []string
					words := search.Words(q)
					holds := func(text string) bool {
						for _, w := range words {
							if !strings.Contains(text, w) {
								return false
							}
						}
						return true
					}
					for _, c := range all {
						// Every contract has the one supplier, "Công ty Vật tư A".
						if (phase == "" || c.Phase == phase) && (holds(search.Text(c.Title, c.code())) || holds(search.Text(c.Supplier.Name))) {
							want = append(want, c.ID)
						}
					}
					for _, filter := range []string{"", "&supplierId=" + e.supplier} {
						const size = 4
						for p := 1; p <= len(want)/size+2; p++ {
							got := e.list(t, e.admin, "?phase="+phase+"&pageSize="+strconv.Itoa(size)+"&page="+strconv.Itoa(p)+
								"&search="+url.QueryEscape(q)+filter)
							if got.TotalCount != len(want) {
								t.Fatalf("%s %q%s page %d: totalCount %d, a recount finds %d", phase, q, filter, p, got.TotalCount, len(want))
							}
							lo, hi := min((p-1)*size, len(want)), min(p*size, len(want))
							if !slices.Equal(got.ids(), want[lo:hi]) {
								t.Fatalf("%s %q%s page %d: %v, want %v", phase, q, filter, p, got.ids(), want[lo:hi])
							}
						}
					}
				}
			}
		}
		t.Run("pending", check)
		e.runJob(t, "contracts.search")
		t.Run("filed", check)
		for i := range all {
			switch {
			case i%7 == 1 && all[i].Phase == DangSoanThao:
				all[i] = e.drive(t, all[i].ID, DangDamPhan)
			case i == 2 || i == 13:
				// 2 loses "móng" ("Móng băng khối A 2"), 13 gains it.
				title := map[int]string{2: "Hợp đồng thép mới 2", 13: "Hợp đồng móng mới 13"}[i]
				b := e.body(map[string]any{"title": title})
				if status, body, err := e.raw("PUT", "/api/contracts/"+all[i].ID, e.admin, b); err != nil || status != 200 {
					t.Fatalf("edit: %d %s %v", status, body, err)
				}
				all[i] = e.get(t, e.admin, all[i].ID)
			}
		}
		if r := e.do("DELETE", "/api/contracts/"+all[3].ID, e.admin, nil); r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		all = slices.Delete(all, 3, 4)
		t.Run("stale", check)
		e.runJob(t, "contracts.search")
		t.Run("filed again", check)
	})
}
