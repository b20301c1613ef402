package main

import (
	"fmt"

	"github.com/xuri/excelize/v2"
)

const priceScheduleFile = "NCC-PL01.xlsx"

// buildPriceSchedule writes the supply contract's price schedule (annex 01):
// a priced bill of three material lines with quantity and price cells that
// are exactly one number/money placeholder (so rendering makes them numbers),
// amount and total formulas, a sheet of commercial terms and a sheet for
// signatures, with placeholders in the page header and footer too.
func buildPriceSchedule() ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	const (
		bill  = "Bảng giá"
		terms = "Điều kiện thương mại"
		sign  = "Xác nhận"
	)
	if err := f.SetSheetName("Sheet1", bill); err != nil {
		return nil, err
	}
	for _, s := range []string{terms, sign} {
		if _, err := f.NewSheet(s); err != nil {
			return nil, err
		}
	}
	font := excelize.Font{Family: "Times New Roman", Size: 12}
	bold := font
	bold.Bold = true
	border := []excelize.Border{
		{Type: "left", Color: "000000", Style: 1}, {Type: "right", Color: "000000", Style: 1},
		{Type: "top", Color: "000000", Style: 1}, {Type: "bottom", Color: "000000", Style: 1},
	}
	style := func(s excelize.Style) int {
		id, err := f.NewStyle(&s)
		if err != nil {
			panic(err)
		}
		return id
	}
	title := style(excelize.Style{Font: &excelize.Font{Family: "Times New Roman", Size: 14, Bold: true},
		Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center"}})
	plain := style(excelize.Style{Font: &font})
	italic := style(excelize.Style{Font: &excelize.Font{Family: "Times New Roman", Size: 12, Italic: true},
		Alignment: &excelize.Alignment{Horizontal: "center"}})
	head := style(excelize.Style{Font: &bold, Border: border,
		Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9E2F3"}},
		Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center", WrapText: true}})
	text := style(excelize.Style{Font: &font, Border: border, Alignment: &excelize.Alignment{Vertical: "center", WrapText: true}})
	center := style(excelize.Style{Font: &font, Border: border, Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center"}})
	qty := style(excelize.Style{Font: &font, Border: border, CustomNumFmt: ptr("#,##0.##")})
	money := style(excelize.Style{Font: &font, Border: border, NumFmt: 3}) // #,##0
	totalLabel := style(excelize.Style{Font: &bold, Border: border, Alignment: &excelize.Alignment{Horizontal: "right"}})
	totalMoney := style(excelize.Style{Font: &bold, Border: border, NumFmt: 3})
	percent := style(excelize.Style{Font: &font, Border: border, CustomNumFmt: ptr("0.##")})

	set := func(sheet, cell string, v any, st int) {
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			panic(err)
		}
		if err := f.SetCellStyle(sheet, cell, cell, st); err != nil {
			panic(err)
		}
	}
	formula := func(sheet, cell, fx string, st int) {
		if err := f.SetCellFormula(sheet, cell, fx); err != nil {
			panic(err)
		}
		if err := f.SetCellStyle(sheet, cell, cell, st); err != nil {
			panic(err)
		}
	}

	// Sheet 1: the priced bill.
	set(bill, "A1", "PHỤ LỤC 01 – BẢNG GIÁ VẬT TƯ", title)
	must(f.MergeCell(bill, "A1", "G1"))
	set(bill, "A2", "Kèm theo Hợp đồng cung cấp vật tư số {{contractCode}} ngày {{contractDate}}", italic)
	must(f.MergeCell(bill, "A2", "G2"))
	set(bill, "A3", "Bên mua: {{partyAName}}", plain)
	set(bill, "A4", "Nhà cung cấp: {{partyBName}} – Mã số thuế: {{partyBTaxCode}}", plain)
	set(bill, "A5", "Dự án: {{projectName}} (mã dự án {{projectCode}})", plain)
	for i, h := range []string{"STT", "Mã vật tư", "Tên vật tư, quy cách", "Đơn vị tính", "Khối lượng", "Đơn giá (đồng)", "Thành tiền (đồng)"} {
		cell, _ := excelize.CoordinatesToCellName(i+1, 7)
		set(bill, cell, h, head)
	}
	for i := 1; i <= 3; i++ {
		r := 7 + i
		set(bill, fmt.Sprintf("A%d", r), i, center)
		set(bill, fmt.Sprintf("B%d", r), fmt.Sprintf("{{item%dCode}}", i), center)
		set(bill, fmt.Sprintf("C%d", r), fmt.Sprintf("{{item%dName}}", i), text)
		set(bill, fmt.Sprintf("D%d", r), fmt.Sprintf("{{item%dUnit}}", i), center)
		set(bill, fmt.Sprintf("E%d", r), fmt.Sprintf("{{item%dQty}}", i), qty)
		set(bill, fmt.Sprintf("F%d", r), fmt.Sprintf("{{ item%dPrice }}", i), money)
		formula(bill, fmt.Sprintf("G%d", r), fmt.Sprintf("E%d*F%d", r, r), money)
	}
	set(bill, "A11", "Cộng tiền hàng", totalLabel)
	must(f.MergeCell(bill, "A11", "F11"))
	formula(bill, "G11", "SUM(G8:G10)", totalMoney)
	set(bill, "A12", "Thuế suất thuế GTGT (%)", totalLabel)
	must(f.MergeCell(bill, "A12", "E12"))
	set(bill, "F12", "{{vatRate}}", percent)
	formula(bill, "G12", "ROUND(G11*F12/100,0)", totalMoney)
	set(bill, "A13", "Tổng cộng thanh toán", totalLabel)
	must(f.MergeCell(bill, "A13", "F13"))
	formula(bill, "G13", "G11+G12", totalMoney)
	set(bill, "A14", "Bằng chữ: {{totalInWords}}", plain)
	for col, w := range map[string]float64{"A": 6, "B": 12, "C": 34, "D": 10, "E": 12, "F": 16, "G": 18} {
		must(f.SetColWidth(bill, col, col, w))
	}
	must(f.SetRowHeight(bill, 1, 24))
	must(f.SetRowHeight(bill, 7, 32))
	must(f.SetPanes(bill, &excelize.Panes{Freeze: true, YSplit: 7, TopLeftCell: "A8", ActivePane: "bottomLeft"}))

	// Sheet 2: commercial terms.
	set(terms, "A1", "ĐIỀU KIỆN THƯƠNG MẠI", title)
	must(f.MergeCell(terms, "A1", "B1"))
	rows := [][2]string{
		{"Địa điểm giao hàng", "{{deliveryAddress}}"},
		{"Thời gian giao hàng (ngày kể từ khi nhận đơn hàng)", "{{deliveryDays}}"},
		{"Báo giá có hiệu lực đến ngày", "{{validUntil}}"},
		{"Điều khoản thanh toán", "{{paymentTerms}}"},
	}
	for i, r := range rows {
		set(terms, fmt.Sprintf("A%d", i+3), r[0], text)
		st := text
		if r[1] == "{{deliveryDays}}" {
			st = qty
		}
		set(terms, fmt.Sprintf("B%d", i+3), r[1], st)
	}
	must(f.SetColWidth(terms, "A", "A", 44))
	must(f.SetColWidth(terms, "B", "B", 60))

	// Sheet 3: signatures.
	set(sign, "A1", "ĐẠI DIỆN BÊN MUA", title)
	set(sign, "C1", "ĐẠI DIỆN NHÀ CUNG CẤP", title)
	set(sign, "A2", "(Ký, ghi rõ họ tên và đóng dấu)", italic)
	set(sign, "C2", "(Ký, ghi rõ họ tên và đóng dấu)", italic)
	set(sign, "A7", "{{partyARepresentative}}", title)
	set(sign, "C7", "{{partyBRepresentative}}", title)
	must(f.SetColWidth(sign, "A", "A", 40))
	must(f.SetColWidth(sign, "B", "B", 6))
	must(f.SetColWidth(sign, "C", "C", 40))

	landscape, a4, oneWide, anyTall := "landscape", 9, 1, 0
	for _, s := range []string{bill, terms, sign} {
		must(f.SetSheetProps(s, &excelize.SheetPropsOptions{FitToPage: ptr(true)}))
		must(f.SetPageLayout(s, &excelize.PageLayoutOptions{Orientation: &landscape, Size: &a4, FitToWidth: &oneWide, FitToHeight: &anyTall}))
		must(f.SetHeaderFooter(s, &excelize.HeaderFooterOptions{
			OddHeader: "&L{{partyAName}}&RPhụ lục 01 – Hợp đồng số {{contractCode}}",
			OddFooter: "&LNCC-PL01 – {{partyBName}}&RTrang &P/&N",
		}))
	}
	must(f.SetDocProps(&excelize.DocProperties{
		Title: "Phụ lục 01 – Bảng giá vật tư", Creator: "ContractFlow", Keywords: "NCC-PL01",
		Created: "2026-01-01T00:00:00Z", Modified: "2026-01-01T00:00:00Z", LastModifiedBy: "ContractFlow",
	}))
	f.SetActiveSheet(0)
	buf, err := f.WriteToBuffer()
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }

func must(err error) {
	if err != nil {
		panic(err)
	}
}
