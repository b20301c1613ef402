package web

import (
	"testing"
	"testing/fstest"
)

// Templates are parsed on first use, not when a module declares them: an
// idle service holds no parsed templates (issue 12, idle memory). A
// template error still surfaces, on the first render.
func TestTemplatesParsedOnFirstUse(t *testing.T) {
	fsys := fstest.MapFS{
		"templates/a.html": {Data: []byte(`{{define "content"}}A{{end}}`)},
		"templates/b.html": {Data: []byte(`{{define "content"}}B{{end}}`)},
	}
	tp := MustTemplates(fsys, "templates/*.html")
	if tp.parsed.Load() {
		t.Fatal("parsed when declared")
	}
	pages := tp.parse()
	if !tp.parsed.Load() || pages["a"] == nil || pages["b"] == nil {
		t.Fatalf("after first use: parsed %v, pages %v", tp.parsed.Load(), pages)
	}
	if pages["a"].Lookup("layout") == nil {
		t.Fatal("a page is parsed without the layout")
	}

	broken := MustTemplates(fstest.MapFS{"templates/x.html": {Data: []byte(`{{define "content"}}{{.Nope`)}}, "templates/*.html")
	defer func() {
		if recover() == nil {
			t.Error("a broken template did not panic on first use")
		}
	}()
	broken.parse()
}
