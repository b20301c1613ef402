package contracts_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/contractflow/contractflow/platform/testkit"
)

// textProbe is one kind of text the input rule refuses (DESIGN §1 "Text
// input"): json is a JSON string literal, query the same as a query value.
type textProbe struct{ name, json, query, form string }

var textProbes = []textProbe{
	{"NUL", `"a\u0000b"`, "a%00b", "a\x00b"},
	{"BEL", `"bell\u0007"`, "bell%07", "bell\a"},
	{"lone surrogate", `"x\ud800"`, "x%ED%A0%80", "x\xed\xa0\x80"},
	{"overlong UTF-8", "\"\xc0\xaf\"", "%C0%AF", "\xc0\xaf"},
	{"invalid UTF-8", "\"a\xffb\"", "a%FFb", "a\xffb"},
}

// stringFields lists the paths of the string properties of a request
// schema in the validator's notation, one level into objects and arrays of
// objects ("FieldSpec[0].Name"), with a JSON body template per path whose
// %s the probe replaces.
func stringFields(s *openapi3.SchemaRef, depth int) map[string]string {
	out := map[string]string{}
	if s == nil || s.Value == nil || depth > 2 {
		return out
	}
	props := map[string]*openapi3.SchemaRef{}
	for n, p := range s.Value.Properties {
		props[n] = p
	}
	for _, all := range s.Value.AllOf {
		for n, p := range all.Value.Properties {
			props[n] = p
		}
	}
	for name, p := range props {
		if p.Value == nil || p.Value.ReadOnly {
			continue
		}
		key := strings.ToUpper(name[:1]) + name[1:]
		switch {
		case p.Value.Type.Is("string") && p.Value.Format != "binary":
			out[key] = fmt.Sprintf(`{%q:%%s}`, name)
		case p.Value.Type.Is("object"):
			for k, body := range stringFields(p, depth+1) {
				out[key+"."+k] = fmt.Sprintf(`{%q:%s}`, name, body)
			}
		case p.Value.Type.Is("array") && p.Value.Items != nil && p.Value.Items.Value != nil:
			if p.Value.Items.Value.Type.Is("string") {
				out[key+"[0]"] = fmt.Sprintf(`{%q:[%%s]}`, name)
			}
			for k, body := range stringFields(p.Value.Items, depth+1) {
				out[key+"[0]."+k] = fmt.Sprintf(`{%q:[%s]}`, name, body)
			}
		}
	}
	return out
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestTextInputEveryEndpoint sends every string property of every JSON and
// multipart request body in the OpenAPI document, and every string query
// parameter, each with each refused kind of text, on both engines: the
// answer is 400 validation_failed naming the field, never a 500.
func TestTextInputEveryEndpoint(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		e := start(t, d, withForms)
		doc, err := e.app.Kernel.OpenAPI()
		if err != nil {
			t.Fatal(err)
		}
		spec, err := openapi3.NewLoader().LoadFromData(doc)
		if err != nil {
			t.Fatal(err)
		}
		id := e.create(t, e.admin, nil).ID // a contract, so its sub-resources exist
		checked := 0
		paths := spec.Paths.InMatchingOrder()
		sort.Strings(paths)
		for _, p := range paths {
			for method, op := range spec.Paths.Value(p).Operations() {
				url := pathParam.ReplaceAllString(p, id)
				expect := func(t *testing.T, status int, body []byte, field string) {
					t.Helper()
					checked++
					if status != 400 || !strings.Contains(string(body), `"validation_failed"`) || !strings.Contains(string(body), `"`+field+`"`) {
						t.Errorf("%s %s, field %s: %d %s", method, p, field, status, body)
					}
				}
				for _, param := range op.Parameters {
					q := param.Value
					if q.In != "query" || q.Schema == nil || !q.Schema.Value.Type.Is("string") {
						continue
					}
					field := strings.ToUpper(q.Name[:1]) + q.Name[1:]
					for _, pr := range textProbes {
						status, body := e.rawQuery(t, method, url+"?"+q.Name+"="+pr.query)
						expect(t, status, body, field)
					}
				}
				if op.RequestBody == nil || op.RequestBody.Value == nil {
					continue
				}
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
					for field, tmpl := range stringFields(mt.Schema, 0) {
						for _, pr := range textProbes {
							status, body, err := e.rawBody(method, url, "application/json", []byte(fmt.Sprintf(tmpl, pr.json)))
							if err != nil {
								t.Fatal(err)
							}
							expect(t, status, body, field)
						}
					}
				}
				if mt := op.RequestBody.Value.Content.Get("multipart/form-data"); mt != nil && mt.Schema != nil {
					for name, s := range mt.Schema.Value.Properties {
						if !s.Value.Type.Is("string") || s.Value.Format == "binary" {
							continue
						}
						for _, pr := range textProbes {
							ct, form := multipartWith(t, name, pr.form)
							status, body, err := e.rawBody(method, url, ct, form)
							if err != nil {
								t.Fatal(err)
							}
							expect(t, status, body, strings.ToUpper(name[:1])+name[1:])
						}
					}
				}
			}
		}
		t.Logf("%d probes", checked)
		if checked < 200 {
			t.Fatalf("only %d probes: the document's request schemas were not found", checked)
		}

		t.Run("text the rule accepts is stored and exported", func(t *testing.T) {
			marks := "Hợp đồng" + strings.Repeat("\u0301", 10000)
			tabbed := "Dòng một\tcột\r\nDòng hai"
			for _, w := range []struct {
				path string
				body map[string]any
			}{
				{"/api/suppliers", map[string]any{"code": "NCCX", "name": marks, "supplierType": "Material"}},
				{"/api/suppliers", map[string]any{"code": "NCCY", "name": tabbed, "supplierType": "Material", "address": marks}},
				{"/api/projects", map[string]any{"code": "DAX", "name": marks}},
				{"/api/departments", map[string]any{"code": "PBX", "name": tabbed}},
				{"/api/users", map[string]any{"email": "x@example.com", "fullName": marks, "password": "Passw0rd-Long-Enough", "roles": []string{"Drafter"}}},
				{"/api/contracts", e.body(map[string]any{"title": marks})},
				{"/api/contracts", e.body(map[string]any{"title": tabbed, "description": marks,
					"draftData": map[string]any{"partyAName": marks, "note": tabbed}})},
				{"/api/contracts/" + id + "/comments", map[string]any{"content": marks}},
			} {
				status, body, err := e.raw("POST", w.path, e.admin, w.body)
				if err != nil {
					t.Fatal(err)
				}
				if status >= 500 || (status != 201 && status != 400) {
					t.Errorf("POST %s: %d %s", w.path, status, body)
				}
			}
			for _, q := range []string{"search=" + url.QueryEscape(tabbed), "search=" + strings.Repeat("%CC%81", 150)} {
				for _, list := range []string{"/api/contracts", "/api/suppliers", "/api/users", "/api/forms/templates"} {
					if status, body := e.rawQuery(t, "GET", list+"?"+q); status != 200 && status != 400 {
						t.Errorf("GET %s?%s: %d %s", list, q[:20], status, body)
					}
				}
			}
			// A contract whose draft data holds such text renders.
			c := e.create(t, e.admin, map[string]any{"templateId": e.templateID(t, "HDTP-01"),
				"draftData": map[string]any{"partyAName": tabbed + strings.Repeat("\u0301", 5000)}})
			if r := e.do("POST", "/api/contracts/"+c.ID+"/draft-export", e.admin, nil); r.Status != 201 {
				t.Errorf("draft export: %d %s", r.Status, r.Body)
			}
		})
	})
}

func (e *env) rawQuery(t testing.TB, method, target string) (int, []byte) {
	t.Helper()
	status, body, err := e.rawBody(method, target, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// rawBody sends body as is, unchecked against the document (the requests
// are wrong on purpose and the loop sends hundreds).
func (e *env) rawBody(method, target, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, "http://test"+target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.admin)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.app.Kernel.HTTP().Test(req, -1)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.Bytes(), err
}

// multipartWith is a form holding a small PDF in "file" and value in field.
func multipartWith(t testing.TB, field, value string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.WriteField(field, value); err != nil {
		t.Fatal(err)
	}
	fw, err := w.CreateFormFile("file", "a.pdf")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte("%PDF-1.4\n%%EOF\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}
