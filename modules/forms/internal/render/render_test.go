package render

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// docxWith builds a minimal Word document whose body is the given XML.
func docxWith(t *testing.T, body string) []byte {
	t.Helper()
	return zipOf(t, map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="` + ctDocxMain + `"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + relOfficeDoc + `" Target="word/document.xml"/></Relationships>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body + `</w:body></w:document>`,
	})
}

func zipOf(t *testing.T, parts map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels"} {
		if body, ok := parts[name]; ok {
			w, _ := zw.Create(name)
			_, _ = w.Write([]byte(body))
		}
	}
	for name, body := range parts {
		if name == "[Content_Types].xml" || name == "_rels/.rels" {
			continue
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bodyOf returns word/document.xml of a rendered document, checking that
// it is well-formed XML.
func bodyOf(t *testing.T, docx []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name != "word/document.xml" {
			continue
		}
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			if _, err := d.Token(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("rendered document.xml is not well-formed: %v\n%s", err, data)
			}
		}
		return string(data)
	}
	t.Fatal("no word/document.xml")
	return ""
}

// texts returns the text of each paragraph of a part.
func texts(t *testing.T, part string) []string {
	t.Helper()
	paras, err := paragraphs([]byte(part))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paras {
		out = append(out, joined(p))
	}
	return out
}

func mustValues(t *testing.T, spec []Field, data map[string]any) Values {
	t.Helper()
	v, err := Prepare(spec, data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDocxPlaceholders(t *testing.T) {
	text := func(s string) Field { return Field{Name: s, Type: Text} }
	cases := []struct {
		name      string
		body      string
		values    map[string]any
		wantTexts []string
		check     func(t *testing.T, xml string)
	}{
		{
			name:      "one run",
			body:      `<w:p><w:r><w:t>Bên B: {{partyBName}}.</w:t></w:r></w:p>`,
			values:    map[string]any{"partyBName": "Công ty Minh Phát"},
			wantTexts: []string{"Bên B: Công ty Minh Phát."},
		},
		{
			name: "split across three runs keeps the first run's formatting",
			body: `<w:p><w:r><w:t xml:space="preserve">Giá: </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>{{contract</w:t></w:r>` +
				`<w:proofErr w:type="spellStart"/><w:r><w:rPr><w:i/></w:rPr><w:t>Val</w:t></w:r><w:r><w:t>ue}} đồng</w:t></w:r></w:p>`,
			values:    map[string]any{"contractValue": "1.250.000.000"},
			wantTexts: []string{"Giá: 1.250.000.000 đồng"},
			check: func(t *testing.T, x string) {
				if !strings.Contains(x, `<w:rPr><w:b/></w:rPr><w:t xml:space="preserve">1.250.000.000</w:t>`) {
					t.Errorf("the value is not in the bold run:\n%s", x)
				}
				if !strings.Contains(x, `<w:rPr><w:i/></w:rPr><w:t xml:space="preserve"></w:t>`) {
					t.Errorf("the middle run still holds text:\n%s", x)
				}
			},
		},
		{
			name:      "braces split from the name, spaces inside",
			body:      `<w:p><w:r><w:t>{</w:t></w:r><w:r><w:t>{ a</w:t></w:r><w:r><w:t xml:space="preserve"> }}</w:t></w:r><w:r><w:t>-{{b}}</w:t></w:r></w:p>`,
			values:    map[string]any{"a": "X", "b": "Y"},
			wantTexts: []string{"X-Y"},
		},
		{
			name:      "unknown placeholders stay",
			body:      `<w:p><w:r><w:t>{{known}} {{unknown}} {{ also_unknown }}</w:t></w:r></w:p>`,
			values:    map[string]any{"known": "k"},
			wantTexts: []string{"k {{unknown}} {{ also_unknown }}"},
		},
		{
			name:      "values are escaped",
			body:      `<w:p><w:r><w:t>{{a}}</w:t></w:r></w:p>`,
			values:    map[string]any{"a": `<b>&"x"`},
			wantTexts: []string{`<b>&"x"`},
			check: func(t *testing.T, x string) {
				if !strings.Contains(x, "&lt;b&gt;&amp;") || strings.Contains(x, "<b>") {
					t.Errorf("value not escaped:\n%s", x)
				}
			},
		},
		{
			name:      "escaped template text survives",
			body:      `<w:p><w:r><w:t>A &amp; B &lt;{{a}}&gt;</w:t></w:r></w:p>`,
			values:    map[string]any{"a": "x"},
			wantTexts: []string{"A & B <x>"},
		},
		{
			name:      "line breaks and tabs become Word's own",
			body:      `<w:p><w:r><w:t>{{a}}</w:t></w:r></w:p>`,
			values:    map[string]any{"a": "one\r\ntwo\tthree"},
			wantTexts: []string{"onetwothree"},
			check: func(t *testing.T, x string) {
				if !strings.Contains(x, "<w:br/>") || !strings.Contains(x, "<w:tab/>") {
					t.Errorf("no w:br / w:tab:\n%s", x)
				}
			},
		},
		{
			name:      "tables and nested paragraphs",
			body:      `<w:tbl><w:tr><w:tc><w:p><w:r><w:t>{{a}}</w:t></w:r></w:p></w:tc></w:tr></w:tbl><w:p><w:r><w:t>{{b}}</w:t></w:r></w:p>`,
			values:    map[string]any{"a": "1", "b": "2"},
			wantTexts: []string{"1", "2"},
		},
		{
			name:      "two placeholders in one run, one across runs",
			body:      `<w:p><w:r><w:t>{{a}}{{b}}{{</w:t></w:r><w:r><w:t>c}}</w:t></w:r></w:p>`,
			values:    map[string]any{"a": "A", "b": "B", "c": "C"},
			wantTexts: []string{"ABC"},
		},
		{
			name:      "empty value",
			body:      `<w:p><w:r><w:t>[{{a}}]</w:t></w:r></w:p>`,
			values:    map[string]any{"a": ""},
			wantTexts: []string{"[]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var spec []Field
			for k := range tc.values {
				spec = append(spec, text(k))
			}
			out, format, err := Render(docxWith(t, tc.body), mustValues(t, spec, tc.values), DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if format != DOCX {
				t.Fatalf("format %s", format)
			}
			x := bodyOf(t, out)
			got := texts(t, x)
			if strings.Join(got, "|") != strings.Join(tc.wantTexts, "|") {
				t.Errorf("paragraphs %q, want %q\n%s", got, tc.wantTexts, x)
			}
			if tc.check != nil {
				tc.check(t, x)
			}
		})
	}
}

func TestInspectFindsPlaceholders(t *testing.T) {
	data := docxWith(t, `<w:p><w:r><w:t>{{b}} {{</w:t></w:r><w:r><w:t>a }}</w:t></w:r></w:p><w:p><w:r><w:t>{{b}} {not} {{x y}}</w:t></w:r></w:p>`)
	info, err := Inspect(data, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != DOCX || strings.Join(info.Placeholders, ",") != "a,b" {
		t.Fatalf("got %+v", info)
	}
}

func TestBadArchives(t *testing.T) {
	ct := `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`
	bomb := func(size int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("word/document.xml")
		chunk := make([]byte, 1<<20)
		for i := 0; i < size>>20; i++ {
			_, _ = w.Write(chunk)
		}
		_ = zw.Close()
		return buf.Bytes()
	}
	// lying declares a small size in the headers for an entry that
	// inflates to 8 MiB.
	lying := func() []byte {
		var comp bytes.Buffer
		zw := zip.NewWriter(&comp)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "[Content_Types].xml", Method: zip.Deflate})
		_, _ = w.Write(make([]byte, 8<<20))
		_ = zw.Close()
		zr, _ := zip.NewReader(bytes.NewReader(comp.Bytes()), int64(comp.Len()))
		f := zr.File[0]
		rc, _ := f.OpenRaw()
		compressed, _ := io.ReadAll(rc)
		var out bytes.Buffer
		zw2 := zip.NewWriter(&out)
		w2, _ := zw2.CreateRaw(&zip.FileHeader{Name: "[Content_Types].xml", Method: zip.Deflate,
			CRC32: f.CRC32, CompressedSize64: f.CompressedSize64, UncompressedSize64: 100})
		_, _ = w2.Write(compressed)
		_ = zw2.Close()
		return out.Bytes()
	}
	many := func() []byte {
		parts := map[string]string{"[Content_Types].xml": ct}
		for i := 0; i < 30; i++ {
			parts[strings.Repeat("a", i+1)+".xml"] = "<a/>"
		}
		return zipOf(t, parts)
	}
	valid := docxWith(t, `<w:p/>`)
	truncated := valid[:len(valid)-30]
	flipped := bytes.Clone(valid)
	// Damage the compressed body of the last entry (the document part).
	flipped[len(flipped)/2] ^= 0xff

	small := Limits{MaxEntries: 20, MaxEntryBytes: 4 << 20, MaxTotalBytes: 6 << 20}
	cases := []struct {
		name    string
		data    []byte
		notZip  bool
		message string
	}{
		{"text file", []byte("Hợp đồng\n{{a}}"), true, ""},
		{"empty", nil, true, ""},
		{"pdf", []byte("%PDF-1.7\n"), true, ""},
		{"truncated zip", truncated, false, "damaged"},
		{"damaged entry", flipped, false, ""},
		{"zip without content types", zipOf(t, map[string]string{"readme.txt": "hi"}), false, "[Content_Types].xml"},
		{"zip of other content", zipOf(t, map[string]string{"[Content_Types].xml": ct, "_rels/.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>`}), false, "main part"},
		{"path traversal", zipOf(t, map[string]string{"[Content_Types].xml": ct, "../../etc/passwd": "x"}), false, "unsafe path"},
		{"absolute path", zipOf(t, map[string]string{"[Content_Types].xml": ct, "/etc/passwd": "x"}), false, "unsafe path"},
		{"too many entries", many(), false, "more than 20 parts"},
		{"bomb by declared size", bomb(5 << 20), false, "expands"},
		{"bomb with a lying header", lying(), false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Inspect(tc.data, small)
			if err == nil {
				t.Fatal("accepted")
			}
			e, ok := apperr.As(err)
			if !ok {
				t.Fatalf("not an apperr: %v", err)
			}
			if tc.notZip {
				if e.Kind != apperr.KindUnsupportedMedia {
					t.Fatalf("kind %v, want unsupported media: %v", e.Kind, err)
				}
				return
			}
			if e.Kind != apperr.KindValidation || len(e.Fields["File"]) == 0 {
				t.Fatalf("want a File field error, got %v", err)
			}
			if tc.message != "" && !strings.Contains(e.Fields["File"][0], tc.message) {
				t.Errorf("message %q lacks %q", e.Fields["File"][0], tc.message)
			}
			// Rendering refuses the same files.
			if _, _, err := Render(tc.data, Values{}, small); err == nil {
				t.Error("Render accepted it")
			}
		})
	}
}

func TestPrepare(t *testing.T) {
	spec := []Field{
		{Name: "name", Type: Text, Required: true},
		{Name: "value", Type: Money, Required: true},
		{Name: "qty", Type: Number},
		{Name: "day", Type: Date},
	}
	var big strings.Builder
	for i := 0; i <= MaxTextLength; i++ {
		big.WriteByte('x')
	}
	cases := []struct {
		name   string
		data   map[string]any
		fields []string
		want   map[string]string
	}{
		{"all good", map[string]any{"name": "A", "value": json.Number("1250000000"), "qty": 12.5, "day": "2026-11-21"}, nil,
			map[string]string{"name": "A", "value": "1.250.000.000", "qty": "12,5", "day": "21/11/2026"}},
		{"numeric strings and case-insensitive names", map[string]any{"NAME": "A", "Value": "1234567.50", "qty": "-3"}, nil,
			map[string]string{"name": "A", "value": "1.234.567,5", "qty": "-3"}},
		{"exponent", map[string]any{"name": "A", "value": json.Number("1.5e6")}, nil, map[string]string{"value": "1.500.000"}},
		{"missing required", map[string]any{"qty": 1}, []string{"Name", "Value"}, nil},
		{"blank required", map[string]any{"name": "  ", "value": ""}, []string{"Name", "Value"}, nil},
		{"null required", map[string]any{"name": nil, "value": nil}, []string{"Name", "Value"}, nil},
		{"wrong types", map[string]any{"name": true, "value": "12 triệu", "qty": map[string]any{}, "day": "21/11/2026"},
			[]string{"Name", "Value", "Qty", "Day"}, nil},
		{"too many digits", map[string]any{"name": "A", "value": "1234567890123456", "qty": "1.12345"}, []string{"Value", "Qty"}, nil},
		{"huge text", map[string]any{"name": big.String(), "value": 1}, []string{"Name"}, nil},
		{"a too long extra", map[string]any{"name": "A", "value": 1, "note": big.String()}, []string{"Note"}, nil},
		{"extras become text, or are ignored", map[string]any{"name": "A", "value": 1, "note": "n", "count": 3,
			"flag": true, "nested": map[string]any{"a": 1}, "list": []any{1}, "not a name": "x", "none": nil}, nil,
			map[string]string{"note": "n", "count": "3"}},
		{"optional blank number is absent", map[string]any{"name": "A", "value": 1, "qty": ""}, nil, map[string]string{"value": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := Prepare(spec, tc.data)
			if len(tc.fields) > 0 {
				e, ok := apperr.As(err)
				if !ok || e.Kind != apperr.KindValidation {
					t.Fatalf("want validation error, got %v", err)
				}
				for _, f := range tc.fields {
					if len(e.Fields[f]) == 0 {
						t.Errorf("no error for %s: %v", f, e.Fields)
					}
				}
				if len(e.Fields) != len(tc.fields) {
					t.Errorf("errors %v, want only %v", e.Fields, tc.fields)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if vals[k].Text != want {
					t.Errorf("%s = %q, want %q", k, vals[k].Text, want)
				}
			}
			if _, ok := vals["qty"]; ok && tc.name == "optional blank number is absent" {
				t.Error("blank optional number was kept")
			}
			for _, k := range []string{"flag", "nested", "list", "not a name", "none"} {
				if _, ok := vals[k]; ok {
					t.Errorf("%s was kept", k)
				}
			}
		})
	}
}

func TestXlsx(t *testing.T) {
	f := excelize.NewFile()
	money, _ := f.NewStyle(&excelize.Style{NumFmt: 3, Font: &excelize.Font{Bold: true}})
	_ = f.SetCellValue("Sheet1", "A1", "Bên B: {{b}} & {{unknown}}")
	_ = f.SetCellValue("Sheet1", "B2", "{{ price }}")
	_ = f.SetCellStyle("Sheet1", "B2", "B2", money)
	_ = f.SetCellValue("Sheet1", "B3", "{{qty}}")
	_ = f.SetCellFormula("Sheet1", "B4", "B2*B3")
	_ = f.SetCellValue("Sheet1", "C2", "{{price}} đồng")
	_, _ = f.NewSheet("Khác")
	_ = f.SetCellValue("Khác", "D9", "{{b}}")
	_ = f.SetHeaderFooter("Sheet1", &excelize.HeaderFooterOptions{OddHeader: "&L{{b}}", OddFooter: "&RTrang &P"})
	buf, _ := f.WriteToBuffer()

	info, err := Inspect(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != XLSX || strings.Join(info.Placeholders, ",") != "b,price,qty,unknown" {
		t.Fatalf("inspect: %+v", info)
	}
	vals := mustValues(t, []Field{{Name: "b", Type: Text}, {Name: "price", Type: Money}, {Name: "qty", Type: Number}},
		map[string]any{"b": "A & B", "price": 1500000, "qty": "2.5"})
	out, format, err := Render(buf.Bytes(), vals, DefaultLimits)
	if err != nil || format != XLSX {
		t.Fatal(format, err)
	}
	g, err := excelize.OpenReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	get := func(sheet, cell string) string {
		v, _ := g.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
		return v
	}
	if v := get("Sheet1", "A1"); v != "Bên B: A & B & {{unknown}}" {
		t.Errorf("A1 = %q", v)
	}
	if typ, _ := g.GetCellType("Sheet1", "B2"); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
		t.Errorf("B2 type %v, want a number", typ)
	}
	if v := get("Sheet1", "B2"); v != "1500000" {
		t.Errorf("B2 = %q", v)
	}
	if s, _ := g.GetCellStyle("Sheet1", "B2"); s != money {
		t.Errorf("B2 style %d, want %d", s, money)
	}
	if v := get("Sheet1", "C2"); v != "1.500.000 đồng" {
		t.Errorf("C2 = %q", v)
	}
	if fx, _ := g.GetCellFormula("Sheet1", "B4"); fx != "B2*B3" {
		t.Errorf("formula %q", fx)
	}
	if v, err := g.CalcCellValue("Sheet1", "B4"); err != nil || v != "3750000" {
		t.Errorf("B4 computes %q, %v", v, err)
	}
	if v := get("Khác", "D9"); v != "A & B" {
		t.Errorf("second sheet D9 = %q", v)
	}
	hf, _ := g.GetHeaderFooter("Sheet1")
	if hf == nil || hf.OddHeader != "&LA && B" || hf.OddFooter != "&RTrang &P" {
		t.Errorf("header/footer %+v", hf)
	}
	if p, _ := g.GetCalcProps(); p.FullCalcOnLoad == nil || !*p.FullCalcOnLoad {
		t.Error("the workbook does not ask for recalculation")
	}
	// Issue 18: a viewer that does not recalculate shows the cached value.
	if v := get("Sheet1", "B4"); v != "3750000" {
		t.Errorf("B4 caches %q, want the computed 3750000", v)
	}
}

// TestXlsxCachesTotals renders the seeded price schedule: every total a
// viewer that does not recalculate would show comes with its value.
func TestXlsxCachesTotals(t *testing.T) {
	file, err := os.ReadFile("../../../../seeds/templates/NCC-PL01.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	spec := []Field{{Name: "vatRate", Type: Number}}
	data := map[string]any{"vatRate": 10}
	for i := 1; i <= 3; i++ {
		spec = append(spec, Field{Name: fmt.Sprintf("item%dQty", i), Type: Number}, Field{Name: fmt.Sprintf("item%dPrice", i), Type: Money})
		data[fmt.Sprintf("item%dQty", i)], data[fmt.Sprintf("item%dPrice", i)] = i, 1000*i
	}
	out, _, err := Render(file, mustValues(t, spec, data), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	sheet := g.GetSheetList()[0]
	// 1·1000 + 2·2000 + 3·3000 = 14000; VAT 10 % = 1400; total 15400.
	for cell, want := range map[string]string{"G8": "1000", "G10": "9000", "G11": "14000", "G12": "1400", "G13": "15400"} {
		if v, _ := g.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true}); v != want {
			t.Errorf("%s caches %q, want %s", cell, v, want)
		}
		if fx, _ := g.GetCellFormula(sheet, cell); fx == "" {
			t.Errorf("%s lost its formula", cell)
		}
	}
}

func TestFormatDecimal(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"999", "999"}, {"1000", "1.000"}, {"0012345", "12.345"}, {"-1234567.890", "-1.234.567,89"}, {"+5.00", "5"},
	}
	for _, tc := range cases {
		m := decimalRe.FindStringSubmatch(tc.in)
		if got := formatDecimal(m[1], m[2], m[3], true); got != tc.want {
			t.Errorf("%s → %s, want %s", tc.in, got, tc.want)
		}
	}
}
