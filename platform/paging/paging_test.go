package paging_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/paging"
)

var spec = paging.Spec{
	Sort:        map[string]string{"createdAt": "created_at", "code": "code", "name": "name"},
	DefaultSort: "-createdAt",
}

func parse(query string, s paging.Spec) (paging.Request, error) {
	v, err := url.ParseQuery(query)
	if err != nil {
		panic(err)
	}
	return paging.Parse(v.Get, s)
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		query string
		spec  paging.Spec
		want  paging.Request
	}{
		{name: "defaults with default sort", query: "", spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
		{name: "defaults without default sort", query: "", spec: paging.Spec{Sort: spec.Sort},
			want: paging.Request{Page: 1, PageSize: 20}},
		{name: "empty values fall back to defaults", query: "page=&pageSize=&sort=", spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
		{name: "smallest page size", query: "page=3&pageSize=1", spec: spec,
			want: paging.Request{Page: 3, PageSize: 1, Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
		{name: "largest page size", query: "pageSize=100", spec: spec,
			want: paging.Request{Page: 1, PageSize: 100, Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
		{name: "ascending sort replaces the default", query: "sort=name", spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Sort: []paging.Order{{Column: "name"}}}},
		{name: "comma list with descending", query: "sort=-createdAt,code", spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Sort: []paging.Order{{Column: "created_at", Desc: true}, {Column: "code"}}}},
		{name: "spaces and empty parts ignored", query: "sort=" + url.QueryEscape(" name , ,-code,"), spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Sort: []paging.Order{{Column: "name"}, {Column: "code", Desc: true}}}},
		{name: "search is trimmed", query: "search=" + url.QueryEscape("  acme  "), spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Search: "acme", Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
		{name: "search of 200 characters", query: "search=" + strings.Repeat("x", 200), spec: spec,
			want: paging.Request{Page: 1, PageSize: 20, Search: strings.Repeat("x", 200), Sort: []paging.Order{{Column: "created_at", Desc: true}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.query, tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		wantKeys []string
		wantText string
	}{
		{name: "page 0", query: "page=0", wantKeys: []string{"Page"}},
		{name: "page -1", query: "page=-1", wantKeys: []string{"Page"}},
		{name: "page abc", query: "page=abc", wantKeys: []string{"Page"}},
		{name: "page 1.5", query: "page=1.5", wantKeys: []string{"Page"}},
		{name: "pageSize 0", query: "pageSize=0", wantKeys: []string{"PageSize"}},
		{name: "pageSize 101", query: "pageSize=101", wantKeys: []string{"PageSize"}},
		{name: "pageSize abc", query: "pageSize=abc", wantKeys: []string{"PageSize"}},
		{name: "pageSize -1", query: "pageSize=-1", wantKeys: []string{"PageSize"}},
		{name: "both at once", query: "page=0&pageSize=101", wantKeys: []string{"Page", "PageSize"}},
		{name: "unknown sort field", query: "sort=password", wantKeys: []string{"Sort"},
			wantText: `Cannot sort by "password"; allowed: code, createdAt, name.`},
		{name: "unknown field among known ones", query: "sort=name,-secret", wantKeys: []string{"Sort"}, wantText: `"secret"`},
		{name: "column name instead of API name", query: "sort=created_at", wantKeys: []string{"Sort"}, wantText: `"created_at"`},
		{name: "lone minus", query: "sort=-", wantKeys: []string{"Sort"}},
		{name: "double minus", query: "sort=--name", wantKeys: []string{"Sort"}},
		{name: "SQL in sort", query: "sort=" + url.QueryEscape("name; DROP TABLE users"), wantKeys: []string{"Sort"}},
		{name: "search too long", query: "search=" + strings.Repeat("x", 201), wantKeys: []string{"Search"}},
		{name: "everything wrong", query: "page=x&pageSize=x&sort=x", wantKeys: []string{"Page", "PageSize", "Sort"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.query, spec)
			require.Error(t, err)
			assert.Equal(t, paging.Request{}, got)
			ae, ok := apperr.As(err)
			require.True(t, ok, "an *apperr.Error")
			assert.Equal(t, apperr.KindValidation, ae.Kind)
			assert.Equal(t, "validation_failed", ae.Code)
			keys := make([]string, 0, len(ae.Fields))
			for k := range ae.Fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			assert.Equal(t, tc.wantKeys, keys)
			if tc.wantText != "" {
				assert.Contains(t, strings.Join(ae.Fields["Sort"], " "), tc.wantText)
			}
		})
	}
}

func TestParseInvalidDefaultSort(t *testing.T) {
	// A typo in a resource's own default sort shows up at once, not as a
	// silently unsorted list.
	_, err := parse("", paging.Spec{Sort: spec.Sort, DefaultSort: "-created"})
	require.Error(t, err)
	ae, ok := apperr.As(err)
	require.True(t, ok)
	assert.Contains(t, ae.Fields, "Sort")
}

func TestOffset(t *testing.T) {
	tests := []struct {
		page, size, want int
	}{
		{1, 20, 0},
		{2, 20, 20},
		{3, 7, 14},
		{10, 100, 900},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("page %d size %d", tc.page, tc.size), func(t *testing.T) {
			assert.Equal(t, tc.want, paging.Request{Page: tc.page, PageSize: tc.size}.Offset())
		})
	}
}

func TestNewPage(t *testing.T) {
	tests := []struct {
		name      string
		items     []string
		page      int
		size      int
		total     int64
		wantPages int
		wantJSON  string
	}{
		{name: "nil items become an empty array", items: nil, page: 1, size: 20, total: 0, wantPages: 0,
			wantJSON: `{"items":[],"page":1,"pageSize":20,"totalCount":0,"totalPages":0}`},
		{name: "empty page past the end", items: []string{}, page: 9, size: 20, total: 57, wantPages: 3,
			wantJSON: `{"items":[],"page":9,"pageSize":20,"totalCount":57,"totalPages":3}`},
		{name: "partial last page", items: []string{"a"}, page: 3, size: 20, total: 57, wantPages: 3,
			wantJSON: `{"items":["a"],"page":3,"pageSize":20,"totalCount":57,"totalPages":3}`},
		{name: "exact multiple", items: []string{"a", "b"}, page: 1, size: 20, total: 40, wantPages: 2,
			wantJSON: `{"items":["a","b"],"page":1,"pageSize":20,"totalCount":40,"totalPages":2}`},
		{name: "one over a multiple", items: []string{"a"}, page: 1, size: 20, total: 41, wantPages: 3,
			wantJSON: `{"items":["a"],"page":1,"pageSize":20,"totalCount":41,"totalPages":3}`},
		{name: "page size one", items: []string{"a"}, page: 1, size: 1, total: 5, wantPages: 5,
			wantJSON: `{"items":["a"],"page":1,"pageSize":1,"totalCount":5,"totalPages":5}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := paging.NewPage(tc.items, paging.Request{Page: tc.page, PageSize: tc.size}, tc.total)
			assert.NotNil(t, p.Items)
			assert.Equal(t, tc.wantPages, p.TotalPages)
			assert.Equal(t, tc.total, p.TotalCount)
			b, err := json.Marshal(p)
			require.NoError(t, err)
			assert.JSONEq(t, tc.wantJSON, string(b))
		})
	}
}
