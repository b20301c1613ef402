// Package designmatrix_test checks the permission matrix the real modules
// declare against DESIGN §2. Each module declares the default grants of its
// own menu keys (kernel.Menu.Grants) and identity only assembles them, so
// this is the one test that sees every declaration together. It lives apart
// from identity's own tests because it compiles in every module.
package designmatrix_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/testkit"

	_ "github.com/contractflow/contractflow/modules/all"
)

// notBuilt are DESIGN §2's menu keys whose modules do not exist yet; each
// left this list when its module arrived and declared it (all twelve have).
var notBuilt []string

type permissionRow struct {
	Role      string `json:"role"`
	MenuKey   string `json:"menuKey"`
	CanRead   bool   `json:"canRead"`
	CanCreate bool   `json:"canCreate"`
	CanUpdate bool   `json:"canUpdate"`
	CanDelete bool   `json:"canDelete"`
}

func (r permissionRow) letters() string {
	var b strings.Builder
	for _, f := range []struct {
		on     bool
		letter string
	}{{r.CanCreate, "C"}, {r.CanRead, "R"}, {r.CanUpdate, "U"}, {r.CanDelete, "D"}} {
		if f.on {
			b.WriteString(f.letter)
		}
	}
	return b.String()
}

// normal sorts a grant's letters into CRUD order.
func normal(letters string) string {
	var b strings.Builder
	for _, l := range "CRUD" {
		if strings.ContainsRune(letters, l) {
			b.WriteRune(l)
		}
	}
	return b.String()
}

func TestEveryModuleSeedsDesignGrants(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver)
		r := app.Do(testkit.Request{Method: "GET", Path: "/api/permissions", Token: identitytest.AdminToken(t, app)})
		if r.Status != 200 {
			t.Fatalf("GET /api/permissions: %d %s", r.Status, r.Body)
		}
		var rows []permissionRow
		r.JSON(t, &rows)

		var want []string
		for _, k := range identitytest.DesignMenuKeys {
			if !slices.Contains(notBuilt, k) {
				want = append(want, k)
			}
		}
		seen := map[string]int{}
		for _, row := range rows {
			seen[row.MenuKey]++
			expected := "CRUD"
			if row.Role != "Admin" {
				expected = normal(identitytest.DesignGrants[row.Role][row.MenuKey])
			}
			if got := row.letters(); got != expected {
				t.Errorf("%s on %s: %q, want %q", row.Role, row.MenuKey, got, expected)
			}
		}
		var got []string
		for k, n := range seen {
			got = append(got, k)
			if n != 12 {
				t.Errorf("%s has %d rows, want one per role (12)", k, n)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("menu keys %v, want %v", got, want)
		}
	})
}
