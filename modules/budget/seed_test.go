package budget_test

import (
	"testing"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

// TestSeedDemo: with seed.demo each demo project gets one Approved budget,
// and seeding again adds nothing.
func TestSeedDemo(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver, testkit.WithClock(clock.NewManual(t0)), testkit.WithConfig("seed.demo", true),
			testkit.WithConfig("modules.forms.enabled", false))
		admin := identitytest.AdminToken(t, app)
		list := func() []budget {
			r := app.Do(testkit.Request{Method: "GET", Path: "/api/budgets?sort=code", Token: admin})
			if r.Status != 200 {
				t.Fatalf("list: %d %s", r.Status, r.Body)
			}
			var p struct{ Items []budget }
			r.JSON(t, &p)
			return p.Items
		}
		got := list()
		if len(got) != 3 {
			t.Fatalf("%d demo budgets, want 3", len(got))
		}
		for i, code := range []string{"NS-DA001", "NS-DA002", "NS-DA003"} {
			b := got[i]
			if b.Code != code || b.Status != "Approved" || b.ProjectID == nil || b.FiscalYear != 2026 || string(b.PlannedTotal) != "23400000000" {
				t.Errorf("demo budget %+v", b)
			}
		}
		if err := app.Kernel.Seed(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := len(list()); n != 3 {
			t.Errorf("seeding again: %d budgets", n)
		}
	})
}
