package render

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// wordNS are the WordprocessingML namespaces (transitional and strict).
var wordNS = map[string]bool{
	"http://schemas.openxmlformats.org/wordprocessingml/2006/main": true,
	"http://purl.oclc.org/ooxml/wordprocessingml/main":             true,
}

const xmlNS = "http://www.w3.org/XML/1998/namespace"

// textNode is one w:t element: where its start tag and content lie in the
// part, and its decoded text.
type textNode struct {
	tagStart     int // offset of "<" of the start tag
	contentStart int // just after the start tag's ">"
	contentEnd   int // offset of the end tag's "<"
	preserve     bool
	text         string
}

// paragraphs returns the text nodes of each paragraph of a part, innermost
// paragraph first where paragraphs nest (a text box inside a paragraph).
// Placeholders are found in the joined text of a paragraph, which is how a
// placeholder Word split across several runs is still one placeholder.
func paragraphs(src []byte) ([][]textNode, error) {
	d := xml.NewDecoder(bytes.NewReader(src))
	var (
		open [][]textNode // the paragraphs being read, outermost first
		out  [][]textNode
		cur  *textNode
		text strings.Builder
	)
	for {
		before := int(d.InputOffset())
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !wordNS[t.Name.Space] {
				continue
			}
			switch t.Name.Local {
			case "p":
				open = append(open, nil)
			case "t":
				if len(open) == 0 {
					continue
				}
				cur = &textNode{tagStart: before, contentStart: int(d.InputOffset())}
				for _, a := range t.Attr {
					if a.Name.Local == "space" && (a.Name.Space == xmlNS || a.Name.Space == "xml") && a.Value == "preserve" {
						cur.preserve = true
					}
				}
				text.Reset()
			}
		case xml.CharData:
			if cur != nil {
				text.Write(t)
			}
		case xml.EndElement:
			if !wordNS[t.Name.Space] {
				continue
			}
			switch t.Name.Local {
			case "t":
				if cur != nil {
					cur.contentEnd = before
					cur.text = text.String()
					open[len(open)-1] = append(open[len(open)-1], *cur)
					cur = nil
				}
			case "p":
				if n := len(open); n > 0 {
					out = append(out, open[n-1])
					open = open[:n-1]
				}
			}
		}
	}
	return out, nil
}

func joined(nodes []textNode) string {
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(n.text)
	}
	return b.String()
}

// textParts are the entries of a Word document whose text is filled.
func (p *pkg) textParts() []*zip.File {
	var out []*zip.File
	for _, f := range p.zr.File {
		if slices.Contains(docxTextTypes, p.contentType(f.Name)) {
			out = append(out, f)
		}
	}
	return out
}

func scanDocx(p *pkg) ([]string, error) {
	var names []string
	for _, f := range p.textParts() {
		src, err := p.readEntry(f)
		if err != nil {
			return nil, err
		}
		paras, err := paragraphs(src)
		if err != nil {
			return nil, fileError("The part %s of the document is not valid XML.", f.Name)
		}
		for _, nodes := range paras {
			names = append(names, Placeholders(joined(nodes))...)
		}
	}
	return names, nil
}

// renderDocx rewrites the text parts and copies every other entry as it is
// (still compressed).
func renderDocx(p *pkg, vals Values) ([]byte, error) {
	text := map[*zip.File]bool{}
	for _, f := range p.textParts() {
		text[f] = true
	}
	var buf bytes.Buffer
	buf.Grow(len(p.data) + len(p.data)/4)
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, pooledDeflate)
	copyBuf := make([]byte, 16<<10)
	for _, f := range p.zr.File {
		if !text[f] {
			if err := copyRaw(zw, f, copyBuf); err != nil {
				return nil, errDamaged
			}
			continue
		}
		src, err := p.readEntry(f)
		if err != nil {
			return nil, err
		}
		out, changed, err := fillPart(src, vals)
		if err != nil {
			return nil, fileError("The part %s of the document is not valid XML.", f.Name)
		}
		if !changed {
			if err := copyRaw(zw, f, copyBuf); err != nil {
				return nil, errDamaged
			}
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(out); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyRaw copies an entry still compressed, as zip.Writer.Copy does, with
// one buffer for the whole archive instead of a new one per entry.
func copyRaw(zw *zip.Writer, f *zip.File, buf []byte) error {
	r, err := f.OpenRaw()
	if err != nil {
		return err
	}
	fh := f.FileHeader
	w, err := zw.CreateRaw(&fh)
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(w, r, buf)
	return err
}

// deflaters keeps compressors between renders: a new flate.Writer costs
// about half a megabyte of tables, more than the document it compresses.
var deflaters sync.Pool

type pooledWriter struct{ *flate.Writer }

// Close flushes the stream and returns the compressor to the pool.
func (w pooledWriter) Close() error {
	err := w.Writer.Close()
	deflaters.Put(w.Writer)
	return err
}

func pooledDeflate(out io.Writer) (io.WriteCloser, error) {
	if fw, ok := deflaters.Get().(*flate.Writer); ok {
		fw.Reset(out)
		return pooledWriter{fw}, nil
	}
	fw, err := flate.NewWriter(out, flate.DefaultCompression)
	if err != nil {
		return nil, err
	}
	return pooledWriter{fw}, nil
}

// splice replaces src[start:end] with text.
type splice struct {
	start, end int
	text       []byte
}

// fillPart fills the placeholders of one part. A placeholder's value goes
// into the text node where the placeholder starts, keeping that run's
// formatting; the rest of the placeholder is cut from the nodes after it.
// Only changed nodes are rewritten; every other byte stays as it was.
func fillPart(src []byte, vals Values) ([]byte, bool, error) {
	paras, err := paragraphs(src)
	if err != nil {
		return nil, false, err
	}
	var edits []splice
	for _, nodes := range paras {
		edits = append(edits, fillParagraph(src, nodes, vals)...)
	}
	if len(edits) == 0 {
		return src, false, nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	out.Grow(len(src) + len(src)/8)
	pos := 0
	for _, e := range edits {
		out.Write(src[pos:e.start])
		out.Write(e.text)
		pos = e.end
	}
	out.Write(src[pos:])
	return out.Bytes(), true, nil
}

// fillParagraph returns the edits that fill one paragraph's placeholders.
func fillParagraph(src []byte, nodes []textNode, vals Values) []splice {
	all := joined(nodes)
	if !strings.Contains(all, "{{") {
		return nil
	}
	type repl struct {
		start, end int
		value      string
	}
	var repls []repl
	for _, m := range placeholderRe().FindAllStringSubmatchIndex(all, -1) {
		if v, ok := vals[all[m[2]:m[3]]]; ok {
			repls = append(repls, repl{m[0], m[1], v.Text})
		}
	}
	if len(repls) == 0 {
		return nil
	}
	var edits []splice
	nodeStart := 0
	for _, n := range nodes {
		nodeEnd := nodeStart + len(n.text)
		var b strings.Builder
		cur := nodeStart
		touched := false
		for _, r := range repls {
			if r.end <= nodeStart || r.start >= nodeEnd {
				continue
			}
			touched = true
			if r.start > cur {
				b.WriteString(all[cur:r.start])
			}
			if r.start >= nodeStart { // the placeholder starts here: its value goes here
				b.WriteString(r.value)
			}
			cur = min(r.end, nodeEnd)
		}
		if touched {
			b.WriteString(all[cur:nodeEnd])
			edits = append(edits, nodeEdits(src, n, b.String())...)
		}
		nodeStart = nodeEnd
	}
	return edits
}

// nodeEdits rewrites a text node's content as text: escaped, with line
// breaks and tabs as Word's own elements, and marks the node to keep its
// spaces.
func nodeEdits(src []byte, n textNode, text string) []splice {
	prefix := elementPrefix(src[n.tagStart:n.contentStart])
	var b bytes.Buffer
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteString("</" + prefix + "t><" + prefix + "br/><" + prefix + `t xml:space="preserve">`)
		}
		for j, chunk := range strings.Split(line, "\t") {
			if j > 0 {
				b.WriteString("</" + prefix + "t><" + prefix + "tab/><" + prefix + `t xml:space="preserve">`)
			}
			_ = xml.EscapeText(&b, []byte(chunk))
		}
	}
	edits := []splice{{n.contentStart, n.contentEnd, b.Bytes()}}
	if !n.preserve && n.contentStart > n.tagStart && src[n.contentStart-1] == '>' {
		edits = append(edits, splice{n.contentStart - 1, n.contentStart - 1, []byte(` xml:space="preserve"`)})
	}
	return edits
}

// elementPrefix returns "w:" for a start tag written <w:t …> ("" when the
// namespace is the default one).
func elementPrefix(tag []byte) string {
	name := strings.TrimPrefix(string(tag), "<")
	if i := strings.IndexAny(name, " \t\r\n/>"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[:i+1]
	}
	return ""
}
