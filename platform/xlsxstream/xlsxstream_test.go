package xlsxstream_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/contractflow/contractflow/platform/xlsxstream"
)

// TestWorkbookOpensInExcelize writes two sheets and reads them back with
// excelize: values, styles, formulas, frozen rows, widths, print setup and
// defined names, and text that XML must escape or cannot hold.
func TestWorkbookOpensInExcelize(t *testing.T) {
	var buf bytes.Buffer
	w := xlsxstream.New(&buf)
	bold := w.AddStyle(xlsxstream.Style{Bold: true, Fill: "DDEBF7", VAlign: "center", Wrap: true})
	money := w.AddStyle(xlsxstream.Style{NumFmt: "#,##0"})
	date := w.AddStyle(xlsxstream.Style{NumFmt: "dd/mm/yyyy hh:mm", HAlign: "left"})
	if again := w.AddStyle(xlsxstream.Style{NumFmt: "#,##0"}); again != money {
		t.Errorf("the same style twice: ids %d and %d", money, again)
	}
	margin := 0.4
	s, err := w.NewSheet("Hợp đồng", xlsxstream.SheetOptions{Widths: []float64{20, 0, 12.5}, FreezeRows: 1, Landscape: true,
		PaperSize: 9, FitToWidth: 1, Margins: &margin, Footer: "&CTrang &P / &N", PrintTitles: 1})
	if err != nil {
		t.Fatal(err)
	}
	hcm := time.FixedZone("ICT", 7*3600)
	tricky := "a < b & \"c\" 'd' \x01\xff end "
	rows := [][]xlsxstream.Cell{
		{xlsxstream.String("Tên", bold), xlsxstream.String("Giá trị", bold), xlsxstream.String("Ngày", bold)},
		{xlsxstream.String("Thép Hòa Phát", 0), xlsxstream.Number(1500000, money), xlsxstream.Time(time.Date(2026, 11, 1, 0, 0, 0, 0, hcm), date)},
		{xlsxstream.String(tricky, 0), xlsxstream.Number(0.25, money), {}},
		{xlsxstream.String("Tổng", bold), xlsxstream.Formula("SUM(B2:B3)", 1500000.25, money)},
	}
	for i, r := range rows {
		h := 0.0
		if i == 0 {
			h = 30
		}
		if err := s.Row(h, r...); err != nil {
			t.Fatal(err)
		}
	}
	s.AutoFilter("A1:C3")
	other, err := w.NewSheet("Second", xlsxstream.SheetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Row(0, xlsxstream.String("late", 0)); err != xlsxstream.ErrClosed {
		t.Errorf("a row after the sheet ended: %v, want ErrClosed", err)
	}
	if err := other.Row(0, xlsxstream.Number(42, 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("not an xlsx: %v", err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 2 || got[0] != "Hợp đồng" || got[1] != "Second" {
		t.Fatalf("sheets %v", got)
	}
	got, err := f.GetRows("Hợp đồng")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"Tên", "Giá trị", "Ngày"}, {"Thép Hòa Phát", "1,500,000", "01/11/2026 00:00"},
		{"a < b & \"c\" 'd' \uFFFD\uFFFD end ", "0"}, {"Tổng", "1,500,000"}}
	if len(got) != len(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d: %q, want %q", i+1, got[i], want[i])
		}
	}
	if v, _ := f.GetCellValue("Hợp đồng", "C2", excelize.Options{RawCellValue: true}); v != "46327" {
		t.Errorf("2026-11-01 00:00 local is serial %s, want 46327", v)
	}
	if fm, _ := f.GetCellFormula("Hợp đồng", "B4"); fm != "SUM(B2:B3)" {
		t.Errorf("formula %q", fm)
	}
	id, _ := f.GetCellStyle("Hợp đồng", "A1")
	st, err := f.GetStyle(id)
	if err != nil || st.Font == nil || !st.Font.Bold || st.Fill.Pattern != 1 || !st.Alignment.WrapText {
		t.Errorf("header style %+v (%v)", st, err)
	}
	id, _ = f.GetCellStyle("Hợp đồng", "B2")
	if st, _ := f.GetStyle(id); st.CustomNumFmt == nil || *st.CustomNumFmt != "#,##0" {
		t.Errorf("money style %+v", st)
	}
	panes, err := f.GetPanes("Hợp đồng")
	if err != nil || !panes.Freeze || panes.YSplit != 1 || panes.TopLeftCell != "A2" {
		t.Errorf("panes %+v (%v)", panes, err)
	}
	if wd, _ := f.GetColWidth("Hợp đồng", "C"); wd != 12.5 {
		t.Errorf("column C width %v", wd)
	}
	if h, _ := f.GetRowHeight("Hợp đồng", 1); h != 30 {
		t.Errorf("header height %v", h)
	}
	names := map[string]string{}
	for _, d := range f.GetDefinedName() {
		names[d.Name] = d.RefersTo
	}
	if names["_xlnm.Print_Titles"] != "'Hợp đồng'!$1:$1" || names["_xlnm._FilterDatabase"] != "'Hợp đồng'!$A$1:$C$3" {
		t.Errorf("defined names %v", names)
	}
	if v, _ := f.GetCellValue("Second", "A1"); v != "42" {
		t.Errorf("second sheet A1 %q", v)
	}
	// excelize reports fill colours only of workbooks with a theme part.
	if styles := part(t, buf.Bytes(), "xl/styles.xml"); !strings.Contains(styles, `<fgColor rgb="FFDDEBF7"/>`) {
		t.Errorf("styles lack the header fill: %s", styles)
	}
	ws := part(t, buf.Bytes(), "xl/worksheets/sheet1.xml")
	for _, want := range []string{`<autoFilter ref="A1:C3"/>`, `orientation="landscape"`, `paperSize="9"`, `fitToWidth="1" fitToHeight="0"`,
		`<pageSetUpPr fitToPage="true"/>`, `<oddFooter>&amp;CTrang &amp;P / &amp;N</oddFooter>`, `<pageMargins left="0.4"`} {
		if !strings.Contains(ws, want) {
			t.Errorf("worksheet lacks %s", want)
		}
	}
}

// TestBadUse: sheet names a workbook cannot hold, a workbook without a
// sheet, rows too wide.
func TestBadUse(t *testing.T) {
	w := xlsxstream.New(io.Discard)
	for _, name := range []string{"", "a/b", "[x]", strings.Repeat("x", 32), "'quoted'"} {
		if _, err := w.NewSheet(name, xlsxstream.SheetOptions{}); err == nil {
			t.Errorf("sheet name %q accepted", name)
		}
	}
	if err := xlsxstream.New(io.Discard).Close(); err == nil {
		t.Error("a workbook without a sheet closed")
	}
	s, err := w.NewSheet("A", xlsxstream.SheetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.NewSheet("a", xlsxstream.SheetOptions{}); err == nil {
		t.Error("two sheets named alike")
	}
	if err := s.Row(0, make([]xlsxstream.Cell, 16385)...); err == nil {
		t.Error("a row of 16 385 cells")
	}
}

func part(t *testing.T, xlsx []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
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
	t.Fatalf("no part %s", name)
	return ""
}

// BenchmarkRows writes 100 000 rows of ten cells, as the contracts export
// does, to io.Discard.
func BenchmarkRows(b *testing.B) {
	when := time.Date(2026, 11, 25, 10, 30, 0, 0, time.UTC)
	for b.Loop() {
		w := xlsxstream.New(io.Discard)
		money := w.AddStyle(xlsxstream.Style{NumFmt: "#,##0"})
		date := w.AddStyle(xlsxstream.Style{NumFmt: "dd/mm/yyyy hh:mm"})
		s, _ := w.NewSheet("Hợp đồng", xlsxstream.SheetOptions{})
		cells := make([]xlsxstream.Cell, 10)
		for i := range 100_000 {
			cells[0] = xlsxstream.String("DA01-HDTP-001", 0)
			cells[1] = xlsxstream.String("Hợp đồng thi công móng cọc Block A", 0)
			cells[2] = xlsxstream.String("Hợp đồng thầu phụ", 0)
			cells[3] = xlsxstream.String("NCC0001 — Công ty Thép Hòa Phát", 0)
			cells[4] = xlsxstream.String("DA001 — Dự án khu đô thị Thủ Đức 1", 0)
			cells[5] = xlsxstream.Number(float64(1_500_000_000+i), money)
			cells[6] = xlsxstream.String("Đang soạn thảo", 0)
			cells[7] = xlsxstream.Time(when, date)
			cells[8] = xlsxstream.String("Nguyễn Văn An", 0)
			cells[9] = xlsxstream.Time(when, date)
			if err := s.Row(0, cells...); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
