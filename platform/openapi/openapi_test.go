package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usersFragment is written the way a module writes its fragment: YAML,
// referring to the base's components and composing the paged envelope.
const usersFragment = `
paths:
  /api/users:
    get:
      operationId: listUsers
      parameters:
        - $ref: "#/components/parameters/Page"
        - $ref: "#/components/parameters/PageSize"
        - $ref: "#/components/parameters/Search"
        - $ref: "#/components/parameters/Sort"
      responses:
        "200":
          description: A page of users.
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/UserPage"
        "400":
          $ref: "#/components/responses/BadRequest"
        "403":
          $ref: "#/components/responses/Forbidden"
    post:
      operationId: createUser
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: "#/components/schemas/User"
      responses:
        "201":
          description: Created.
          headers:
            Location:
              schema:
                type: string
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/User"
        "409":
          $ref: "#/components/responses/Conflict"
  /api/users/{id}:
    parameters:
      - name: id
        in: path
        required: true
        schema:
          type: string
          format: uuid
    get:
      operationId: getUser
      responses:
        "200":
          description: The user.
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/User"
        "404":
          $ref: "#/components/responses/NotFound"
  /api/auth/login:
    post:
      operationId: login
      security: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
      responses:
        "200":
          description: Tokens.
          content:
            application/json:
              schema:
                type: object
components:
  schemas:
    User:
      type: object
      required: [id, email]
      properties:
        id:
          type: string
          format: uuid
        email:
          type: string
        displayName:
          type:
            - string
            - "null"
    UserPage:
      allOf:
        - $ref: "#/components/schemas/Paged"
        - properties:
            items:
              items:
                $ref: "#/components/schemas/User"
    Money:
      type: number
`

// reportsFragment is JSON, shares the Money schema with identical content
// and serves a binary download.
const reportsFragment = `{
  "paths": {
    "/api/reports/contracts/export": {
      "get": {
        "tags": ["reports"],
        "responses": {
          "200": {
            "description": "The spreadsheet.",
            "content": {
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
                "schema": {"type": "string", "contentMediaType": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
              }
            }
          }
        }
      }
    },
    "/api/reports/dashboard": {
      "get": {
        "responses": {
          "200": {
            "description": "Figures.",
            "content": {"application/json": {"schema": {"type": "object", "properties": {"total": {"$ref": "#/components/schemas/Money"}}}}}
          }
        }
      }
    }
  },
  "components": {"schemas": {"Money": {"type": "number"}}}
}`

func build(t *testing.T, fragments ...[2]string) []byte {
	t.Helper()
	b, err := New("1.2.3")
	require.NoError(t, err)
	for _, f := range fragments {
		require.NoError(t, b.Add(f[0], []byte(f[1])), "add %s", f[0])
	}
	doc, err := b.Build()
	require.NoError(t, err)
	return doc
}

func fullDoc(t *testing.T) []byte {
	return build(t, [2]string{"identity", usersFragment}, [2]string{"reports", reportsFragment})
}

func TestMergeTwoFragments(t *testing.T) {
	doc := fullDoc(t)

	var d struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title, Version string
		} `json:"info"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas         map[string]any `json:"schemas"`
			Responses       map[string]any `json:"responses"`
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	assert.Equal(t, "3.1.0", d.OpenAPI)
	assert.Equal(t, "ContractFlow API", d.Info.Title)
	assert.Equal(t, "1.2.3", d.Info.Version)
	for _, name := range []string{"Problem", "ValidationProblem", "Paged", "User", "UserPage", "Money"} {
		assert.Contains(t, d.Components.Schemas, name)
	}
	assert.Contains(t, d.Components.SecuritySchemes, "bearerAuth")

	tests := []struct {
		name, path, method string
		tags               []any
		statuses           []string
		absent             []string
	}{
		{"untagged operation gets the module's tag", "/api/users", "get", []any{"identity"},
			[]string{"200", "400", "401", "403", "429", "500"}, []string{"413", "415"}},
		{"request body adds 400, 413, 415", "/api/users", "post", []any{"identity"},
			[]string{"201", "400", "401", "409", "413", "415", "429", "500"}, nil},
		{"public operation gets no 401", "/api/auth/login", "post", []any{"identity"},
			[]string{"200", "400", "413", "415", "429", "500"}, []string{"401"}},
		{"explicit tags are kept", "/api/reports/contracts/export", "get", []any{"reports"},
			[]string{"200", "401", "429", "500"}, nil},
		{"health probes are left as written", "/health/ready", "get", []any{"platform"},
			[]string{"200", "503"}, []string{"401", "429", "500"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, _ := d.Paths[tc.path][tc.method].(map[string]any)
			require.NotNil(t, op)
			assert.Equal(t, tc.tags, op["tags"])
			responses := op["responses"].(map[string]any)
			for _, s := range tc.statuses {
				assert.Contains(t, responses, s)
			}
			for _, s := range tc.absent {
				assert.NotContains(t, responses, s)
			}
		})
	}
}

func TestBuiltDocumentValidates(t *testing.T) {
	doc := fullDoc(t)
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	require.NoError(t, err)
	require.NoError(t, d.Validate(context.Background()))
	assert.True(t, d.IsOpenAPI31OrLater())
}

func TestAddErrors(t *testing.T) {
	const otherUsers = `
paths:
  /api/users:
    get:
      responses:
        "200":
          description: ok
`
	const otherUserSchema = `
paths: {}
components:
  schemas:
    User:
      type: object
      properties:
        name:
          type: string
`
	tests := []struct {
		name     string
		fragment string
		want     []string // substrings of the error
	}{
		{"duplicate path and method", otherUsers,
			[]string{"module contracts", "duplicate operation GET /api/users", "identity"}},
		{"duplicate component with different content", otherUserSchema,
			[]string{"module contracts", "#/components/schemas/User", "identity"}},
		{"redefined base component", "components:\n  schemas:\n    Problem:\n      type: string\n",
			[]string{"module contracts", "#/components/schemas/Problem", "platform"}},
		{"redefined base path", "paths:\n  /health/live:\n    get:\n      responses:\n        \"200\":\n          description: x\n",
			[]string{"module contracts", "GET /health/live", "platform"}},
		{"same path with other parameter names", "paths:\n  /api/users/{userId}:\n    delete:\n      responses:\n        \"204\":\n          description: x\n",
			[]string{"module contracts", "/api/users/{userId}", "/api/users/{id}"}},
		{"not YAML", "paths: [unclosed", []string{"module contracts", "parse"}},
		{"not an object", "- a\n- b\n", []string{"module contracts", "not an object"}},
		{"unexpected top-level key", "servers:\n  - url: /\n", []string{"module contracts", `"servers"`}},
		{"operation without responses", "paths:\n  /api/x:\n    get:\n      summary: none\n",
			[]string{"module contracts", "GET /api/x documents no responses"}},
		{"operation is not an object", "paths:\n  /api/x:\n    get: 3\n", []string{"module contracts", "paths./api/x.get"}},
		{"own security scheme", "components:\n  securitySchemes:\n    basic:\n      type: http\n      scheme: basic\n",
			[]string{"module contracts", "securitySchemes"}},
		{"OpenAPI 3.0 fragment", "openapi: 3.0.3\npaths: {}\n", []string{"module contracts", "3.0.3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New("1")
			require.NoError(t, err)
			require.NoError(t, b.Add("identity", []byte(usersFragment)))
			err = b.Add("contracts", []byte(tc.fragment))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			// A failed Add changes nothing: the document still builds.
			_, err = b.Build()
			require.NoError(t, err)
		})
	}

	t.Run("identical component in two modules is shared", func(t *testing.T) {
		build(t, [2]string{"identity", usersFragment}, [2]string{"reports", reportsFragment})
	})
	t.Run("module added twice", func(t *testing.T) {
		b, err := New("1")
		require.NoError(t, err)
		require.NoError(t, b.Add("identity", []byte(usersFragment)))
		err = b.Add("identity", []byte("paths: {}"))
		require.ErrorContains(t, err, "added twice")
	})
}

func TestBuildRejectsInvalidDocument(t *testing.T) {
	tests := []struct {
		name, fragment, want string
	}{
		{"dangling $ref", `
paths:
  /api/x:
    get:
      responses:
        "200":
          $ref: "#/components/responses/Nope"
`, "Nope"},
		{"undeclared path parameter", `
paths:
  /api/x/{id}:
    get:
      responses:
        "200":
          description: ok
`, "id"},
		{"invalid schema type", `
paths:
  /api/x:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: banana
`, "banana"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New("1")
			require.NoError(t, err)
			require.NoError(t, b.Add("m", []byte(tc.fragment)))
			_, err = b.Build()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestOperations(t *testing.T) {
	ops, err := Operations(fullDoc(t))
	require.NoError(t, err)
	assert.Equal(t, []Operation{
		{"POST", "/api/auth/login"},
		{"GET", "/api/reports/contracts/export"},
		{"GET", "/api/reports/dashboard"},
		{"GET", "/api/users"},
		{"POST", "/api/users"},
		{"GET", "/api/users/{id}"},
		{"GET", "/health/live"},
		{"GET", "/health/ready"},
	}, ops)

	_, err = Operations([]byte("{not json"))
	require.Error(t, err)
}

func TestPathConversion(t *testing.T) {
	tests := []struct{ openapi, fiber string }{
		{"/api/users", "/api/users"},
		{"/api/users/{id}", "/api/users/:id"},
		{"/api/contracts/{id}/attachments/{attachmentId}", "/api/contracts/:id/attachments/:attachmentId"},
		{"/api/forms/{form_id}/render", "/api/forms/:form_id/render"},
	}
	for _, tc := range tests {
		t.Run(tc.openapi, func(t *testing.T) {
			assert.Equal(t, tc.fiber, FiberPath(tc.openapi))
			assert.Equal(t, tc.openapi, OpenAPIPath(tc.fiber))
			assert.Equal(t, tc.openapi, OpenAPIPath(FiberPath(tc.openapi)))
			assert.Equal(t, tc.fiber, FiberPath(OpenAPIPath(tc.fiber)))
		})
	}
	assert.Equal(t, "/api/x/{id}", OpenAPIPath("/api/x/:id?"))
}

func TestMount(t *testing.T) {
	doc := fullDoc(t)
	app := fiber.New()
	Mount(app, doc)

	get := func(t *testing.T, path string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := app.Test(req, -1)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp, body
	}

	t.Run("doc.json", func(t *testing.T) {
		resp, body := get(t, "/swagger/doc.json", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var d map[string]any
		require.NoError(t, json.Unmarshal(body, &d))
		assert.Equal(t, "3.1.0", d["openapi"])
		assert.JSONEq(t, string(doc), string(body))
	})

	t.Run("UI index", func(t *testing.T) {
		resp, body := get(t, "/swagger/", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
		html := string(body)
		assert.Contains(t, html, "/swagger/doc.json")

		attrs := regexp.MustCompile(`(?i)(?:src|href)\s*=\s*["']([^"']*)["']`).FindAllStringSubmatch(html, -1)
		require.NotEmpty(t, attrs, "the index loads its assets")
		for _, a := range attrs {
			u := strings.ToLower(a[1])
			assert.False(t, strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:") || strings.HasPrefix(u, "//"),
				"asset from another host: %s", a[1])
			assert.True(t, strings.HasPrefix(u, "/swagger/"), "asset outside /swagger/: %s", a[1])
		}
		assert.NotRegexp(t, `url\(\s*["']?(https?:)?//`, html)
	})

	t.Run("/swagger redirects to /swagger/", func(t *testing.T) {
		resp, _ := get(t, "/swagger", nil)
		assert.Equal(t, http.StatusFound, resp.StatusCode)
		assert.Equal(t, "/swagger/", resp.Header.Get("Location"))
	})

	for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "favicon-32x32.png"} {
		t.Run("embedded "+asset, func(t *testing.T) {
			resp, body := get(t, "/swagger/"+asset, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Greater(t, len(body), 100)
			resp, _ = get(t, "/swagger/"+asset, map[string]string{"Accept-Encoding": "gzip"})
			require.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}

	t.Run("unknown asset is an error for the error handler", func(t *testing.T) {
		resp, body := get(t, "/swagger/nope.js", nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.NotContains(t, string(body), "404 page not found")
	})
}

func problem(status int, code string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "urn:contractflow:problem:" + code, "title": http.StatusText(status), "status": status,
		"detail": "x", "instance": "/api/users/x", "traceId": "req-1", "code": code,
	})
	return string(b)
}

func TestResponseChecker(t *testing.T) {
	rc, err := NewResponseChecker(fullDoc(t))
	require.NoError(t, err)

	const userID = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	problemCT := http.Header{"Content-Type": {"application/problem+json"}}
	xlsx := "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

	tests := []struct {
		name, method, target string
		status               int
		header               http.Header
		body                 string
		wantErr              string // empty: must pass
	}{
		{"matching problem", "GET", "/api/users/" + userID, 404, problemCT, problem(404, "not_found"), ""},
		{"problem with field errors", "POST", "/api/users", 400, problemCT,
			`{"type":"urn:contractflow:problem:validation_failed","title":"Bad Request","status":400,"detail":"x","instance":"/api/users","traceId":"r","code":"validation_failed","errors":{"Email":["Required."]}}`, ""},
		{"problem with extra member", "GET", "/api/users", 429,
			http.Header{"Content-Type": {"application/problem+json"}, "Retry-After": {"30"}},
			`{"type":"urn:contractflow:problem:rate_limited","title":"Too Many Requests","status":429,"detail":"x","instance":"/api/users","traceId":"r","code":"rate_limited","retryAfter":30}`, ""},
		{"matching body", "GET", "/api/users/" + userID, 200, jsonCT, `{"id":"` + userID + `","email":"a@b.c","displayName":null}`, ""},
		{"matching page", "GET", "/api/users?page=2", 200, jsonCT,
			`{"items":[{"id":"` + userID + `","email":"a@b.c"}],"page":2,"pageSize":20,"totalCount":21,"totalPages":2}`, ""},
		{"empty page", "GET", "/api/users", 200, jsonCT, `{"items":[],"page":1,"pageSize":20,"totalCount":0,"totalPages":0}`, ""},
		{"injected 500", "GET", "/api/users", 500, problemCT, problem(500, "internal"), ""},
		{"health unhealthy", "GET", "/health/ready", 503, jsonCT, `{"status":"Unhealthy"}`, ""},
		{"binary download is not decoded", "GET", "/api/reports/contracts/export?phase=x", 200,
			http.Header{"Content-Type": {xlsx}}, "PK\x03\x04\x00\xff binary", ""},
		{"HEAD of a GET route", "HEAD", "/api/users", 200, jsonCT, "", ""},

		{"problem member of wrong type", "GET", "/api/users/" + userID, 404, problemCT,
			`{"type":"urn:contractflow:problem:not_found","title":"Not Found","status":"404","detail":"x","instance":"/x","traceId":"r","code":"not_found"}`, "status"},
		{"problem missing traceId", "GET", "/api/users/" + userID, 404, problemCT,
			`{"type":"urn:contractflow:problem:not_found","title":"Not Found","status":404,"detail":"x","instance":"/x","code":"not_found"}`, "traceId"},
		{"errors not an array of strings", "POST", "/api/users", 400, problemCT,
			`{"type":"t","title":"Bad Request","status":400,"detail":"x","instance":"/x","traceId":"r","code":"validation_failed","errors":{"Email":"Required."}}`, "Email"},
		{"body member of wrong type", "GET", "/api/users/" + userID, 200, jsonCT, `{"id":"` + userID + `","email":42}`, "email"},
		{"identifier that is not a UUID", "GET", "/api/users/" + userID, 200, jsonCT, `{"id":"42","email":"a@b.c"}`, "id"},
		{"null where the type does not allow it", "GET", "/api/users/" + userID, 200, jsonCT, `{"id":"` + userID + `","email":null}`, "email"},
		{"null list item", "GET", "/api/users", 200, jsonCT, `{"items":null,"page":1,"pageSize":20,"totalCount":0,"totalPages":0}`, "items"},
		{"page item of wrong shape", "GET", "/api/users", 200, jsonCT,
			`{"items":[{"id":"` + userID + `"}],"page":1,"pageSize":20,"totalCount":1,"totalPages":1}`, "email"},
		{"undocumented status", "GET", "/api/users/" + userID, 418, problemCT, problem(418, "teapot"), "status is not supported"},
		{"undocumented content type", "GET", "/api/users/" + userID, 200, http.Header{"Content-Type": {"text/plain"}}, "hi", "text/plain"},
		{"problem served as JSON where problem+json is documented", "GET", "/api/users/" + userID, 404, jsonCT, problem(404, "not_found"), "application/json"},
		{"429 without Retry-After", "GET", "/api/users", 429, problemCT, problem(429, "rate_limited"), "Retry-After"},
		{"binary download with an undocumented type", "GET", "/api/reports/contracts/export", 200,
			http.Header{"Content-Type": {"application/pdf"}}, "%PDF", "application/pdf"},
		{"unknown path", "GET", "/api/nope", 404, problemCT, problem(404, "not_found"), ErrUndocumentedRoute.Error()},
		{"unknown method", "DELETE", "/api/users", 405, problemCT, problem(405, "method_not_allowed"), ErrUndocumentedRoute.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			err := rc.Check(req, tc.status, tc.header, []byte(tc.body))
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			t.Log(err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}

	t.Run("unknown route wraps ErrUndocumentedRoute", func(t *testing.T) {
		err := rc.Check(httptest.NewRequest("GET", "/api/nope", nil), 404, problemCT, []byte(problem(404, "not_found")))
		assert.True(t, errors.Is(err, ErrUndocumentedRoute))
	})

	t.Run("concurrent checks", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 20 {
					req := httptest.NewRequest("GET", "/api/users/"+userID, nil)
					assert.NoError(t, rc.Check(req, 404, problemCT, []byte(problem(404, "not_found"))))
				}
			})
		}
		wg.Wait()
	})
}

func TestNewResponseCheckerRejectsInvalidDocument(t *testing.T) {
	_, err := NewResponseChecker([]byte(`{"openapi":"3.1.0"}`))
	require.Error(t, err)
}
