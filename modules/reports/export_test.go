package reports_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/testkit"
)

const exportPath = "/api/reports/contracts/export"

// exportColumns are DESIGN §9's ten columns, in order; exportHeader is how
// the export heads them in the default business language (Vietnamese).
var exportColumns = []string{"MaHopDong", "Title", "ContractType", "Supplier", "Project", "Value", "Phase", "SlaDeadline", "Drafter", "CreatedAt"}

var exportHeader = []string{"Mã hợp đồng", "Tên hợp đồng", "Loại hợp đồng", "Nhà cung cấp", "Dự án", "Giá trị (VND)",
	"Giai đoạn", "Hạn xử lý", "Người soạn thảo", "Ngày tạo"}

// exportSheet is the sheet's name in Vietnamese.
const exportSheet = "Hợp đồng"

// phaseWords and typeWords are the Vietnamese words of the export (DESIGN §12).
var phaseWords = map[string]string{"DangSoanThao": "Đang soạn thảo", "DangDamPhan": "Đang đàm phán", "DangGopY": "Đang góp ý",
	"DangInKy": "Đang in ký", "DangKiemTraCCM": "Đang kiểm tra CCM", "DangTrinhKy": "Đang trình ký",
	"DangDongDau": "Đang đóng dấu", "DaPhatHanh": "Đã phát hành", "TuChoi": "Từ chối"}

var typeWords = map[string]string{"Subcontract": "Hợp đồng thầu phụ", "PieceWork": "Hợp đồng giao khoán", "Supply": "Hợp đồng cung cấp",
	"Service": "Hợp đồng dịch vụ", "Purchase": "Hợp đồng mua bán", "FrameworkSupply": "Hợp đồng khung cung cấp",
	"FrameworkSubcontract": "Hợp đồng khung thầu phụ"}

// export downloads the export with query q and opens it.
func export(t *testing.T, w *world, q url.Values) *excelize.File {
	t.Helper()
	path := exportPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	r := w.call(t, "GET", path, w.adminTok, nil, 200, nil)
	if ct := r.Header.Get("Content-Type"); ct != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
		t.Errorf("content type %q", ct)
	}
	// Named after the business-zone time of the export.
	name := "contracts-" + w.app.Clock.Now().In(hcm).Format("20060102-1504") + ".xlsx"
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="`+name+`"`) {
		t.Errorf("content disposition %q, want attachment %s", cd, name)
	}
	return openXLSX(t, r.Body)
}

// dataRows returns the raw rows between the header and the total row,
// checking that the total row is the last one and sums exactly those rows.
func dataRows(t *testing.T, f *excelize.File) [][]string {
	t.Helper()
	rows, err := f.GetRows(exportSheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatalf("read rows: %v", err)
	}
	if len(rows) < 2 {
		t.Fatalf("want a header and a total row, got %d rows", len(rows))
	}
	n := len(rows) - 2
	totalRow := n + 2
	if got := rows[totalRow-1]; len(got) == 0 || got[0] != "Tổng cộng" {
		t.Errorf("row %d is %q, want the total row", totalRow, got)
	}
	cell := fmt.Sprintf("F%d", totalRow)
	formula, err := f.GetCellFormula(exportSheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		if want := fmt.Sprintf("SUM(F2:F%d)", n+1); formula != want {
			t.Errorf("%s formula %q, want %q", cell, formula, want)
		}
	} else {
		// No data rows: SUM(F2:F1) would include the total cell itself (a
		// circular reference), so the total is the number 0.
		v, _ := f.GetCellValue(exportSheet, cell, excelize.Options{RawCellValue: true})
		if formula != "" || v != "0" {
			t.Errorf("empty export total %s: formula %q value %q, want the number 0", cell, formula, v)
		}
	}
	out := rows[1 : n+1]
	for i := range out {
		for len(out[i]) < len(exportHeader) {
			out[i] = append(out[i], "") // trailing empty cells are not returned
		}
	}
	return out
}

// wantRow is the export row of contract c.
func wantRow(c *contract) []string {
	project := ""
	if c.Project != nil {
		project = c.Project.Code + " — " + c.Project.Name
	}
	code := ""
	if c.Detail.MaHopDong != nil {
		code = *c.Detail.MaHopDong
	}
	return []string{code, c.Title, typeWords[c.Type], c.Supplier.Code + " — " + c.Supplier.Name, project, c.Value,
		phaseWords[c.Detail.Phase], "sla", c.DrafterName, "created"}
}

// checkRows compares the export's rows with the contracts keys, in order.
func checkRows(t *testing.T, w *world, rows [][]string, keys []string) {
	t.Helper()
	var got []string
	for _, r := range rows {
		got = append(got, strings.TrimPrefix(r[1], "Hợp đồng "))
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("rows %v, want %v", got, keys)
	}
	for i, k := range keys {
		c, r := w.contracts[k], rows[i]
		want := wantRow(c)
		for col, name := range exportColumns {
			switch name {
			case "Value":
				g, err1 := strconv.ParseFloat(r[col], 64)
				e, err2 := strconv.ParseFloat(c.Value, 64)
				if err1 != nil || err2 != nil || g != e {
					t.Errorf("%s: Value %q, want %s", k, r[col], c.Value)
				}
			case "SlaDeadline":
				if c.Detail.SLADeadline == nil {
					if r[col] != "" {
						t.Errorf("%s: SlaDeadline %q, want empty (terminal phase)", k, r[col])
					}
				} else if got, want := excelTime(t, r[col]), localWall(*c.Detail.SLADeadline); !got.Equal(want) {
					t.Errorf("%s: SlaDeadline %v, want local %v", k, got, want)
				}
			case "CreatedAt":
				if got, want := excelTime(t, r[col]), localWall(c.Detail.CreatedAt); !got.Equal(want) {
					t.Errorf("%s: CreatedAt %v, want local %v", k, got, want)
				}
			default:
				if r[col] != want[col] {
					t.Errorf("%s: %s %q, want %q", k, name, r[col], want[col])
				}
			}
		}
	}
}

// TestExport reads the workbook back with excelize: its sheet, header,
// styles, frozen pane, number format, total formula, and the rows of each
// filter, with names resolved and deleted contracts absent.
func TestExport(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := buildKnownSet(t, driver)
		S, P := w.suppliers, w.projects
		all := w.live() // k5 (deleted) is not there

		t.Run("layout", func(t *testing.T) {
			// 2026-11-15T03:00:00Z is 10:00 in the business zone.
			r := w.call(t, "GET", exportPath, w.adminTok, nil, 200, nil)
			if cd := r.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="contracts-20261115-1000.xlsx"`) {
				t.Errorf("content disposition %q", cd)
			}
			f := openXLSX(t, r.Body)
			if got := f.GetSheetList(); !slices.Equal(got, []string{exportSheet}) {
				t.Fatalf("sheets %v, want [%s]", got, exportSheet)
			}
			rows, err := f.GetRows(exportSheet)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows[0], exportHeader) {
				t.Errorf("header %q, want %q", rows[0], exportHeader)
			}
			for i := range exportHeader {
				cell, _ := excelize.CoordinatesToCellName(i+1, 1)
				if !font(t, f, cell).Bold {
					t.Errorf("header %s is not bold", cell)
				}
			}
			panes, err := f.GetPanes(exportSheet)
			if err != nil {
				t.Fatal(err)
			}
			if !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 0 || panes.TopLeftCell != "A2" {
				t.Errorf("panes %+v, want the header row frozen", panes)
			}
			n := len(all)
			for row := 2; row <= n+2; row++ { // every value and the total
				cell := fmt.Sprintf("F%d", row)
				if got := numFmt(t, f, cell); got != "#,##0" {
					t.Errorf("%s number format %q, want #,##0", cell, got)
				}
			}
			if !font(t, f, fmt.Sprintf("F%d", n+2)).Bold {
				t.Error("the total is not bold")
			}
			// Formatted values: thousands separators, local times.
			k9 := slices.Index(all, "k9") + 2
			if got, _ := f.GetCellValue(exportSheet, fmt.Sprintf("F%d", k9)); got != "700,000" {
				t.Errorf("k9 value shows %q, want 700,000", got)
			}
			if got, _ := f.GetCellValue(exportSheet, fmt.Sprintf("J%d", k9)); got != "01/11/2026 00:00" {
				t.Errorf("k9 (created 2026-10-31T17:00:00Z) shows %q, want local 01/11/2026 00:00", got)
			}
			checkReportLayout(t, f, exportSheet, n, "Trang &P / &N")
		})

		t.Run("every live contract, oldest first", func(t *testing.T) {
			rows := dataRows(t, export(t, w, nil))
			checkRows(t, w, rows, all)
			codes := map[string]string{"k2": "DA02-HDTP-001", "k6": "DA04-HDTP-001", "k7": "DA05-HDTP-001", "k11": "DA03-HDTP-001", "k13": "DA05-HDTP-002"}
			for i, k := range all {
				if rows[i][0] != codes[k] {
					t.Errorf("%s: MaHopDong %q, want %q", k, rows[i][0], codes[k])
				}
			}
		})

		cases := []struct {
			name  string
			query url.Values
			keys  []string
		}{
			{"phase", url.Values{"phase": {"DaPhatHanh"}}, []string{"k2", "k6", "k7", "k13"}},
			{"phase with nothing in it", url.Values{"phase": {"DangInKy"}}, nil},
			{"supplier", url.Values{"supplierId": {S[4].ID}}, []string{"k7", "k13"}},
			{"supplier whose only contract is deleted", url.Values{"supplierId": {S[6].ID}}, nil},
			{"project", url.Values{"projectId": {P[0].ID}}, []string{"k1", "k8"}},
			// from and to are local dates, both inclusive.
			{"from the first local day of November", url.Values{"from": {"2026-11-01"}}, []string{"k9", "k13", "k14", "k10", "k11", "k12"}},
			{"to the last local day of October", url.Values{"to": {"2026-10-31"}}, []string{"k1", "k2", "k3", "k4", "k6", "k7", "k8"}},
			{"one local day holding its last second", url.Values{"from": {"2026-11-14"}, "to": {"2026-11-14"}}, []string{"k11"}},
			{"one local day holding its first second", url.Values{"from": {"2025-12-01"}, "to": {"2025-12-01"}}, []string{"k2"}},
			{"range", url.Values{"from": {"2026-03-01"}, "to": {"2026-10-25"}}, []string{"k3", "k4", "k6", "k7"}},
			{"phase, supplier and from", url.Values{"phase": {"DangSoanThao"}, "supplierId": {S[0].ID}, "from": {"2026-11-01"}}, []string{"k9"}},
			{"project and phase", url.Values{"projectId": {P[3].ID}, "phase": {"DangSoanThao"}}, []string{"k14"}},
			{"all five", url.Values{"phase": {"DaPhatHanh"}, "supplierId": {S[4].ID}, "projectId": {P[4].ID}, "from": {"2026-10-01"}, "to": {"2026-10-31"}}, []string{"k7"}},
			{"rejected stays exportable", url.Values{"phase": {"TuChoi"}}, []string{"k4"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				checkRows(t, w, dataRows(t, export(t, w, tc.query)), tc.keys)
			})
		}
	})
}

// TestExportInvalidFilters: every bad filter is a 400 naming its field,
// after authentication and the Reports.Read policy.
func TestExportInvalidFilters(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startWorld(t, driver, 0, 0)
		bad := func(name, query string, fields ...string) testkit.Scenario {
			return testkit.Scenario{Name: name, Request: testkit.Request{Method: "GET", Path: exportPath + "?" + query, Token: w.adminTok},
				Status: 400, Code: "validation_failed", Fields: fields}
		}
		w.app.Run(t, []testkit.Scenario{
			bad("from not a date", "from=2026-13-01", "From"),
			bad("from with a time", "from=2026-11-01T00:00:00Z", "From"),
			bad("to not a date", "to=yesterday", "To"),
			bad("to a day that does not exist", "to=2026-02-30", "To"),
			bad("from after to", "from=2026-11-02&to=2026-11-01", "From"),
			bad("unknown phase", "phase=Published", "Phase"),
			bad("phase in the wrong case", "phase=daphathanh", "Phase"),
			bad("supplierId not a UUID", "supplierId=NCC01", "SupplierId"),
			bad("projectId not a UUID", "projectId=42", "ProjectId"),
			bad("all at once", "phase=X&supplierId=x&projectId=y&from=a&to=b", "Phase", "SupplierId", "ProjectId", "From", "To"),
			{Name: "from equal to to is one day", Request: testkit.Request{Method: "GET", Path: exportPath + "?from=2026-11-01&to=2026-11-01", Token: w.adminTok}, Status: 200},
		})
	})
}

// TestExportEmpty: no matching contract still gives a workbook with the
// header and a zero total.
func TestExportEmpty(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startWorld(t, driver, 0, 0)
		f := export(t, w, nil)
		if rows := dataRows(t, f); len(rows) != 0 {
			t.Errorf("rows %v, want none", rows)
		}
		if got, _ := f.GetRows(exportSheet); !slices.Equal(got[0], exportHeader) {
			t.Errorf("header %q", got[0])
		}
	})
}

// TestAccess: 401 without a token; Dashboard.Read and Reports.Read as
// DESIGN §2 grants them by default; the policy comes before the filters.
func TestAccess(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		w := startWorld(t, driver, 0, 0)
		tokens := map[string]string{"anonymous": ""}
		for _, role := range []string{"Drafter", "Equipment", "HrAdmin", "AuthorizedSigner"} {
			tokens[role] = identitytest.Token(t, w.app, role)
		}
		tokens["no role"] = identitytest.Token(t, w.app)
		cases := []struct {
			who               string
			dashboard, export int
		}{
			{"anonymous", 401, 401},
			{"no role", 403, 403},
			{"Equipment", 200, 403}, // Dashboard R, no Reports
			{"HrAdmin", 200, 403},   // Dashboard R, no Reports
			{"Drafter", 200, 200},
			{"AuthorizedSigner", 200, 200},
		}
		code := map[int]string{401: "token_invalid", 403: "forbidden", 400: "validation_failed"}
		var sc []testkit.Scenario
		for _, c := range cases {
			badFilter := c.export
			if badFilter == 200 {
				badFilter = 400
			}
			sc = append(sc,
				testkit.Scenario{Name: c.who + " dashboard", Request: testkit.Request{Method: "GET", Path: "/api/reports/dashboard", Token: tokens[c.who]},
					Status: c.dashboard, Code: code[c.dashboard]},
				testkit.Scenario{Name: c.who + " export", Request: testkit.Request{Method: "GET", Path: exportPath, Token: tokens[c.who]},
					Status: c.export, Code: code[c.export]},
				testkit.Scenario{Name: c.who + " export with a bad filter", Request: testkit.Request{Method: "GET", Path: exportPath + "?phase=X", Token: tokens[c.who]},
					Status: badFilter, Code: code[badFilter]},
			)
		}
		w.app.Run(t, sc)
	})
}

func font(t *testing.T, f *excelize.File, cell string) excelize.Font {
	t.Helper()
	s := style(t, f, cell)
	if s.Font == nil {
		return excelize.Font{}
	}
	return *s.Font
}

// numFmt is a cell's number format code, built in (id 3 is #,##0) or custom.
func numFmt(t *testing.T, f *excelize.File, cell string) string {
	t.Helper()
	s := style(t, f, cell)
	if s.CustomNumFmt != nil {
		return *s.CustomNumFmt
	}
	return map[int]string{0: "General", 3: "#,##0", 4: "#,##0.00"}[s.NumFmt]
}

func style(t *testing.T, f *excelize.File, cell string) *excelize.Style {
	t.Helper()
	id, err := f.GetCellStyle(exportSheet, cell)
	if err != nil {
		t.Fatalf("style of %s: %v", cell, err)
	}
	s, err := f.GetStyle(id)
	if err != nil {
		t.Fatalf("style %d of %s: %v", id, cell, err)
	}
	return s
}

// TestExportPagesThroughTies exports more contracts than one database page
// (2 000 rows) with only six creation instants among them, so pages end in
// the middle of a tie on createdAt: every live contract comes out exactly
// once, oldest first, named, and the dashboard counts the same contracts.
func TestExportPagesThroughTies(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app := identitytest.Start(t, driver, testkit.WithClock(clock.NewManual(benchNow)))
		drafter, _, _ := identitytest.NewUser(t, app, "Drafter")
		live, err := seed(t.Context(), app.Kernel.App(), []string{drafter}, volume{contracts: 4500, suppliers: 40, projects: 7, instants: 6})
		if err != nil {
			t.Fatal(err)
		}
		token := identitytest.AdminToken(t, app)
		r := app.Do(testkit.Request{Method: "GET", Path: exportPath, Token: token})
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		f := openXLSX(t, r.Body)
		rows := dataRows(t, f)
		if int64(len(rows)) != live {
			t.Fatalf("%d rows, want the %d live contracts", len(rows), live)
		}
		seen := map[string]bool{}
		prev := 0.0
		for i, row := range rows {
			if seen[row[1]] {
				t.Fatalf("row %d: %q exported twice", i+2, row[1])
			}
			seen[row[1]] = true
			created, err := strconv.ParseFloat(row[9], 64)
			if err != nil || created < prev {
				t.Fatalf("row %d: createdAt %q after %v: not oldest first", i+2, row[9], prev)
			}
			prev = created
			if row[3] == "" || !strings.HasPrefix(row[8], "Test user") {
				t.Fatalf("row %d: names not resolved: %q", i+2, row)
			}
		}
		var d struct{ TotalContracts int64 }
		app.Do(testkit.Request{Method: "GET", Path: "/api/reports/dashboard", Token: token}).JSON(t, &d)
		if d.TotalContracts != live {
			t.Errorf("dashboard totalContracts %d, want %d", d.TotalContracts, live)
		}
	})
}

// checkReportLayout checks what makes the export a printable report: the
// autofilter over header and rows, landscape one page wide, the header row
// repeated on every page, page numbers in the footer, columns at least as
// wide as their headers.
func checkReportLayout(t *testing.T, f *excelize.File, sheet string, rows int, footer string) {
	t.Helper()
	// The workbook's parts, as written.
	ws := readPart(t, f, "xl/worksheets/sheet1.xml")
	for _, want := range []string{
		fmt.Sprintf(`<autoFilter ref="A1:J%d"`, max(rows+1, 2)),
		`orientation="landscape"`, `fitToWidth="1"`, `fitToHeight="0"`, `<pageSetUpPr fitToPage="true"`,
		"<oddFooter>&amp;C" + strings.ReplaceAll(footer, "&", "&amp;") + "</oddFooter>",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("worksheet lacks %s", want)
		}
	}
	names := f.GetDefinedName()
	titles := false
	for _, d := range names {
		if d.Name == "_xlnm.Print_Titles" && d.RefersTo == "'"+sheet+"'!$1:$1" {
			titles = true
		}
	}
	if !titles {
		t.Errorf("defined names %+v lack the print titles (header row on every page)", names)
	}
	header, _ := f.GetRows(sheet)
	for i, h := range header[0] {
		col, _ := excelize.ColumnNumberToName(i + 1)
		w, err := f.GetColWidth(sheet, col)
		if err != nil {
			t.Fatal(err)
		}
		if w < float64(len([]rune(h))) {
			t.Errorf("column %s is %.0f wide, narrower than its header %q", col, w, h)
		}
	}
}

func readPart(t *testing.T, f *excelize.File, name string) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if zf.Name == name {
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no %s in the workbook", name)
	return ""
}

// TestExportInEnglish: business.language en writes the same ten columns
// in English words.
func TestExportInEnglish(t *testing.T) {
	w := startWorld(t, "sqlite", 1, 1, testkit.WithConfig("business.language", "en"))
	w.at(t, "2026-11-15T03:00:00Z")
	f := export(t, w, nil)
	rows, err := f.GetRows("Contracts")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Contract code", "Title", "Contract type", "Supplier", "Project", "Value (VND)", "Phase", "Deadline", "Drafter", "Created"}
	if !slices.Equal(rows[0], want) {
		t.Errorf("header %q, want %q", rows[0], want)
	}
	if got := rows[len(rows)-1][0]; got != "Total" {
		t.Errorf("total row %q", got)
	}
	checkReportLayout(t, f, "Contracts", 0, "Page &P of &N")
}
