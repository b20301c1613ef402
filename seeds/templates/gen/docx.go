package main

import (
	"fmt"
	"strings"
)

const (
	nsW = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsR = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

	ctMain     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	ctStyles   = "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"
	ctSettings = "application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"
	ctHeader   = "application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"
	ctFooter   = "application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"

	relBase = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

	xmlDecl = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

	// textWidth is the width between the margins of an A4 page, in twips.
	textWidth = 11906 - 1701 - 1134
)

// para is one paragraph. Its text is written in a small markup: "**"
// toggles bold, "//" toggles italic, and "¦" ends a run without changing
// its formatting (with a proofing mark between, as Word leaves one), which
// is how the templates split a placeholder across runs on purpose.
type para struct {
	text    string
	style   string // paragraph style id
	align   string // left, center, right, both
	after   int    // spacing after, twips; 0 = style default
	keepNxt bool
}

func (p para) xml() string {
	var b strings.Builder
	b.WriteString("<w:p>")
	if p.style != "" || p.align != "" || p.after != 0 || p.keepNxt {
		b.WriteString("<w:pPr>")
		if p.style != "" {
			fmt.Fprintf(&b, `<w:pStyle w:val="%s"/>`, p.style)
		}
		if p.keepNxt {
			b.WriteString("<w:keepNext/>")
		}
		if p.after != 0 {
			fmt.Fprintf(&b, `<w:spacing w:after="%d"/>`, p.after)
		}
		if p.align != "" {
			fmt.Fprintf(&b, `<w:jc w:val="%s"/>`, p.align)
		}
		b.WriteString("</w:pPr>")
	}
	b.WriteString(runs(p.text))
	b.WriteString("</w:p>")
	return b.String()
}

// runs turns the paragraph markup into w:r elements.
func runs(s string) string {
	var b strings.Builder
	bold, italic := false, false
	var cur strings.Builder
	flush := func(split bool) {
		if cur.Len() > 0 {
			b.WriteString("<w:r>")
			if bold || italic {
				b.WriteString("<w:rPr>")
				if bold {
					b.WriteString("<w:b/><w:bCs/>")
				}
				if italic {
					b.WriteString("<w:i/><w:iCs/>")
				}
				b.WriteString("</w:rPr>")
			}
			fmt.Fprintf(&b, `<w:t xml:space="preserve">%s</w:t></w:r>`, xmlEscape(cur.String()))
			cur.Reset()
		}
		if split {
			b.WriteString(`<w:proofErr w:type="spellStart"/>`)
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "**"):
			flush(false)
			bold = !bold
			i += 2
		case strings.HasPrefix(s[i:], "//"):
			flush(false)
			italic = !italic
			i += 2
		case strings.HasPrefix(s[i:], "¦"):
			flush(true)
			i += len("¦")
		default:
			cur.WriteByte(s[i])
			i++
		}
	}
	flush(false)
	return b.String()
}

// cell is one table cell: its paragraphs, and whether it is shaded as a
// heading.
type cell struct {
	paras []para
	head  bool
}

// table is a grid with single borders (or none).
type table struct {
	widths    []int
	rows      [][]cell
	borders   bool
	cantSplit bool // keep each row on one page
}

func (t table) xml() string {
	var b strings.Builder
	b.WriteString(`<w:tbl><w:tblPr><w:tblW w:w="5000" w:type="pct"/>`)
	if t.borders {
		b.WriteString("<w:tblBorders>")
		for _, side := range []string{"top", "left", "bottom", "right", "insideH", "insideV"} {
			fmt.Fprintf(&b, `<w:%s w:val="single" w:sz="4" w:space="0" w:color="000000"/>`, side)
		}
		b.WriteString("</w:tblBorders>")
	}
	b.WriteString(`<w:tblLayout w:type="fixed"/><w:tblLook w:val="04A0" w:firstRow="1" w:lastRow="0" w:firstColumn="1" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>`)
	for _, w := range t.widths {
		fmt.Fprintf(&b, `<w:gridCol w:w="%d"/>`, w)
	}
	b.WriteString("</w:tblGrid>")
	for _, row := range t.rows {
		b.WriteString("<w:tr>")
		if t.cantSplit {
			b.WriteString("<w:trPr><w:cantSplit/></w:trPr>")
		}
		for i, c := range row {
			fmt.Fprintf(&b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/>`, t.widths[i])
			if c.head {
				b.WriteString(`<w:shd w:val="clear" w:color="auto" w:fill="D9E2F3"/>`)
			}
			b.WriteString("</w:tcPr>")
			if len(c.paras) == 0 {
				b.WriteString("<w:p/>")
			}
			for _, p := range c.paras {
				b.WriteString(p.xml())
			}
			b.WriteString("</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}

type block interface{ xml() string }

func buildDocx(c contract) ([]byte, error) {
	var body strings.Builder
	for _, bl := range c.body() {
		body.WriteString(bl.xml())
	}
	document := xmlDecl + `<w:document xmlns:w="` + nsW + `" xmlns:r="` + nsR + `"><w:body>` + body.String() +
		`<w:sectPr><w:headerReference w:type="default" r:id="rId3"/><w:footerReference w:type="default" r:id="rId4"/>` +
		`<w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1134" w:right="1134" w:bottom="1134" w:left="1701" w:header="567" w:footer="567" w:gutter="0"/>` +
		`</w:sectPr></w:body></w:document>`
	header := xmlDecl + `<w:hdr xmlns:w="` + nsW + `" xmlns:r="` + nsR + `">` +
		para{text: c.header(), style: "Header", align: "right"}.xml() + `</w:hdr>`
	footer := xmlDecl + `<w:ftr xmlns:w="` + nsW + `" xmlns:r="` + nsR + `"><w:p><w:pPr><w:pStyle w:val="Footer"/><w:jc w:val="center"/></w:pPr>` +
		runs(c.footer()) + `<w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p></w:ftr>`
	return zipParts([][2]string{
		{"[Content_Types].xml", xmlDecl + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="` + ctMain + `"/>` +
			`<Override PartName="/word/styles.xml" ContentType="` + ctStyles + `"/>` +
			`<Override PartName="/word/settings.xml" ContentType="` + ctSettings + `"/>` +
			`<Override PartName="/word/header1.xml" ContentType="` + ctHeader + `"/>` +
			`<Override PartName="/word/footer1.xml" ContentType="` + ctFooter + `"/>` +
			`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
			`<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>` +
			`</Types>`},
		{"_rels/.rels", xmlDecl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + relBase + `officeDocument" Target="word/document.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`<Relationship Id="rId3" Type="` + relBase + `extended-properties" Target="docProps/app.xml"/>` +
			`</Relationships>`},
		{"word/document.xml", document},
		{"word/_rels/document.xml.rels", xmlDecl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + relBase + `styles" Target="styles.xml"/>` +
			`<Relationship Id="rId2" Type="` + relBase + `settings" Target="settings.xml"/>` +
			`<Relationship Id="rId3" Type="` + relBase + `header" Target="header1.xml"/>` +
			`<Relationship Id="rId4" Type="` + relBase + `footer" Target="footer1.xml"/>` +
			`</Relationships>`},
		{"word/styles.xml", styles},
		{"word/settings.xml", xmlDecl + `<w:settings xmlns:w="` + nsW + `"><w:zoom w:percent="100"/><w:defaultTabStop w:val="720"/>` +
			`<w:characterSpacingControl w:val="doNotCompress"/><w:compat><w:doNotExpandShiftReturn/>` +
			`<w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/>` +
			`</w:compat></w:settings>`},
		{"word/header1.xml", header},
		{"word/footer1.xml", footer},
		{"docProps/core.xml", xmlDecl + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" ` +
			`xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
			`<dc:title>` + xmlEscape(c.Title) + `</dc:title><dc:creator>ContractFlow</dc:creator>` +
			`<cp:keywords>` + c.Code + `</cp:keywords><cp:lastModifiedBy>ContractFlow</cp:lastModifiedBy>` +
			`<dcterms:created xsi:type="dcterms:W3CDTF">2026-01-01T00:00:00Z</dcterms:created>` +
			`<dcterms:modified xsi:type="dcterms:W3CDTF">2026-01-01T00:00:00Z</dcterms:modified>` +
			`</cp:coreProperties>`},
		{"docProps/app.xml", xmlDecl + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" ` +
			`xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>ContractFlow</Application></Properties>`},
	})
}

// styles: Times New Roman 13 pt (the usual face of Vietnamese contracts),
// justified body text, a centred title, bold article headings.
const styles = xmlDecl + `<w:styles xmlns:w="` + nsW + `">` +
	`<w:docDefaults><w:rPrDefault><w:rPr>` +
	`<w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman" w:eastAsia="Times New Roman" w:cs="Times New Roman"/>` +
	`<w:sz w:val="26"/><w:szCs w:val="26"/><w:lang w:val="vi-VN" w:eastAsia="en-US" w:bidi="ar-SA"/>` +
	`</w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="80" w:line="288" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults>` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/><w:pPr><w:jc w:val="both"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:spacing w:before="240" w:after="60"/><w:jc w:val="center"/></w:pPr><w:rPr><w:b/><w:bCs/><w:sz w:val="30"/><w:szCs w:val="30"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:keepNext/><w:spacing w:before="160" w:after="60"/><w:jc w:val="left"/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:bCs/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Header"><w:name w:val="header"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:spacing w:after="0"/></w:pPr><w:rPr><w:i/><w:iCs/><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Footer"><w:name w:val="footer"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:spacing w:after="0"/><w:jc w:val="center"/></w:pPr><w:rPr><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>` +
	`<w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/><w:uiPriority w:val="99"/><w:semiHidden/>` +
	`<w:tblPr><w:tblInd w:w="0" w:type="dxa"/><w:tblCellMar><w:top w:w="0" w:type="dxa"/><w:left w:w="108" w:type="dxa"/>` +
	`<w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>` +
	`</w:styles>`
