package reports_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/contractflow/contractflow/platform/testkit"
)

// dashboard mirrors GET /api/reports/dashboard exactly (DESIGN §9); it is
// decoded strictly, so a property the design does not name fails the test.
// Money stays a json.Number so sums compare exactly.
type dashboard struct {
	TotalContracts       int64        `json:"totalContracts"`
	ActiveContracts      int64        `json:"activeContracts"`
	OverdueContracts     int64        `json:"overdueContracts"`
	PublishedThisMonth   int64        `json:"publishedThisMonth"`
	ActiveContractsValue json.Number  `json:"activeContractsValue"`
	ByPhase              []phaseCount `json:"byPhase"`
	TopSuppliers         []topRow     `json:"topSuppliers"`
	TopProjects          []topRow     `json:"topProjects"`
	Monthly              []month      `json:"monthly"`
	// Only with the budget module on; budget_test.go checks it.
	BudgetUtilisation []json.RawMessage `json:"budgetUtilisation"`
}

type phaseCount struct {
	Phase string `json:"phase"`
	Count int64  `json:"count"`
}

type topRow struct {
	SupplierID    string      `json:"supplierId,omitempty"`
	ProjectID     string      `json:"projectId,omitempty"`
	Code          string      `json:"code"`
	Name          string      `json:"name"`
	ContractCount int64       `json:"contractCount"`
	TotalValue    json.Number `json:"totalValue"`
}

type month struct {
	Month      string      `json:"month"`
	Count      int64       `json:"count"`
	TotalValue json.Number `json:"totalValue"`
}

func getDashboard(t *testing.T, w *world, token string) dashboard {
	t.Helper()
	r := w.call(t, "GET", "/api/reports/dashboard", token, nil, 200, nil)
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard does not have the designed shape: %v\n%s", err, r.Body)
	}
	return d
}

// phases builds byPhase in workflow order from the non-zero counts.
func phases(counts map[string]int64) []phaseCount {
	order := []string{"DangSoanThao", "DangDamPhan", "DangGopY", "DangKiemTraCCM", "DangInKy", "DangTrinhKy", "DangDongDau", "DaPhatHanh", "TuChoi"}
	out := make([]phaseCount, len(order))
	for i, p := range order {
		out[i] = phaseCount{Phase: p, Count: counts[p]}
	}
	return out
}

// months builds the 12-month series from first ("2026-01") with the given
// non-zero months.
func months(first string, filled map[string]month) []month {
	var y, m int
	if _, err := fmt.Sscanf(first, "%d-%d", &y, &m); err != nil {
		panic(err)
	}
	out := make([]month, 12)
	for i := range out {
		key := fmt.Sprintf("%04d-%02d", y, m)
		out[i] = month{Month: key, TotalValue: "0"}
		if f, ok := filled[key]; ok {
			out[i] = month{Month: key, Count: f.Count, TotalValue: f.TotalValue}
		}
		if m++; m > 12 {
			y, m = y+1, 1
		}
	}
	return out
}

func supplierTop(r *ref, n int64, value string) topRow {
	return topRow{SupplierID: r.ID, Code: r.Code, Name: r.Name, ContractCount: n, TotalValue: json.Number(value)}
}

func projectTop(r *ref, n int64, value string) topRow {
	return topRow{ProjectID: r.ID, Code: r.Code, Name: r.Name, ContractCount: n, TotalValue: json.Number(value)}
}

func compareDashboard(t *testing.T, got, want dashboard) {
	t.Helper()
	check := func(name string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, g, w)
		}
	}
	check("totalContracts", got.TotalContracts, want.TotalContracts)
	check("activeContracts", got.ActiveContracts, want.ActiveContracts)
	check("overdueContracts", got.OverdueContracts, want.OverdueContracts)
	check("publishedThisMonth", got.PublishedThisMonth, want.PublishedThisMonth)
	check("activeContractsValue", got.ActiveContractsValue, want.ActiveContractsValue)
	check("byPhase", got.ByPhase, want.ByPhase)
	check("topSuppliers", got.TopSuppliers, want.TopSuppliers)
	check("topProjects", got.TopProjects, want.TopProjects)
	check("monthly", got.Monthly, want.Monthly)
}

// TestDashboard checks every figure against the hand-computed data set of
// buildKnownSet, at "now" and at instants around the boundaries that
// matter: a deadline equal to now, the last second of the business month,
// and its first second.
func TestDashboard(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := buildKnownSet(t, driver)
		S, P := w.suppliers, w.projects
		// Totals: 13 live contracts (k5 is deleted). Active: the 8 not in
		// DaPhatHanh or TuChoi. Their value: k1 1000000.50 + k3 3000000 +
		// k8 600000 + k9 700000 + k10 1500000 + k11 250000.25 + k12 100 +
		// k14 400000 = 7450100.75.
		// Rankings leave out k4 (TuChoi: S8, P7) and k5 (deleted: S7), so
		// six suppliers and six projects compete for five places.
		topSuppliers := []topRow{
			supplierTop(S[4], 2, "8000000"),    // k7 + k13
			supplierTop(S[3], 2, "4400000"),    // k6 + k14
			supplierTop(S[1], 2, "3500000"),    // k2 + k10 (framework, no project)
			supplierTop(S[2], 2, "3250000.25"), // k3 + k11
			supplierTop(S[0], 2, "1700000.5"),  // k1 + k9; S6 (600100) is cut
		}
		topProjects := []topRow{
			projectTop(P[4], 2, "8000000"),    // k7 + k13
			projectTop(P[3], 2, "4400000"),    // k6 + k14
			projectTop(P[2], 2, "3250000.25"), // k3 + k11
			projectTop(P[1], 2, "2700000"),    // k2 + k9
			projectTop(P[0], 2, "1600000.5"),  // k1 + k8; P6 (k12 only, 100) is cut
		}
		// Months by creation in local time: k1 falls in 2025-11 (outside),
		// k2 in 2025-12, k5 (2026-09) is deleted, k8 is the last second of
		// October and k9 the first of November.
		novemberSeries := map[string]month{
			"2025-12": {Count: 1, TotalValue: "2000000"},    // k2
			"2026-03": {Count: 1, TotalValue: "3000000"},    // k3
			"2026-06": {Count: 1, TotalValue: "90000000"},   // k4 (rejected, still live)
			"2026-10": {Count: 3, TotalValue: "9600000"},    // k6 + k7 + k8
			"2026-11": {Count: 6, TotalValue: "5850100.25"}, // k9 + k10 + k11 + k12 + k13 + k14
		}
		byPhase := phases(map[string]int64{"DangSoanThao": 5, "DangDamPhan": 1, "DangGopY": 1, "DangDongDau": 1, "DaPhatHanh": 4, "TuChoi": 1})
		base := dashboard{
			TotalContracts: 13, ActiveContracts: 8, ActiveContractsValue: "7450100.75", ByPhase: byPhase,
			TopSuppliers: topSuppliers, TopProjects: topProjects,
		}

		cases := []struct {
			name, at           string
			overdue, published int64
			monthly            []month
		}{
			// k1, k3, k8 (due 00:00Z today), k9; k14 is due exactly now, so
			// not yet overdue. Published this November (local): k7 at local
			// midnight and k13; k6 published one second earlier (October).
			{"now", "2026-11-15T03:00:00Z", 4, 2, months("2025-12", novemberSeries)},
			{"one second later k14 is overdue", "2026-11-15T03:00:01Z", 5, 2, months("2025-12", novemberSeries)},
			// Every active deadline has passed; still November locally.
			{"last second of November", "2026-11-30T16:59:59Z", 8, 2, months("2025-12", novemberSeries)},
			// December locally: nothing published yet, the window moves on
			// one month, December is empty.
			{"first second of December", "2026-11-30T17:00:00Z", 8, 0, months("2026-01", novemberSeries)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				w.at(t, tc.at)
				want := base
				want.OverdueContracts, want.PublishedThisMonth, want.Monthly = tc.overdue, tc.published, tc.monthly
				compareDashboard(t, getDashboard(t, w, w.adminTok), want)
			})
		}

		t.Run("every reader sees the same organisation-wide figures", func(t *testing.T) {
			w.at(t, "2026-11-15T03:00:00Z")
			want := getDashboard(t, w, w.adminTok)
			compareDashboard(t, getDashboard(t, w, w.drafterTok), want)
		})
	})
}

// TestDashboardEmpty checks the shape with no contracts: zeros everywhere,
// nine phases, twelve months ending with the current local month, and
// empty (not null) rankings.
func TestDashboardEmpty(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startWorld(t, driver, 1, 1)
		// 2026-12-31T17:30Z is already 2027-01-01 00:30 locally.
		w.at(t, "2026-12-31T17:30:00Z")
		r := w.call(t, "GET", "/api/reports/dashboard", w.adminTok, nil, 200, nil)
		for _, s := range []string{`"topSuppliers":[]`, `"topProjects":[]`, `"activeContractsValue":0`} {
			if !bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("empty dashboard lacks %s: %s", s, r.Body)
			}
		}
		want := dashboard{ActiveContractsValue: "0", ByPhase: phases(nil), TopSuppliers: []topRow{}, TopProjects: []topRow{},
			Monthly: months("2026-02", nil)}
		compareDashboard(t, getDashboard(t, w, w.adminTok), want)
	})
}
