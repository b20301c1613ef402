// Package paging parses the list parameters every list endpoint shares
// (page, pageSize, search, sort) and shapes the paged response.
package paging

import (
	"slices"
	"strconv"
	"strings"

	"github.com/contractflow/contractflow/platform/apperr"
)

// Limits of page sizes.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Spec is one resource's whitelist: API sort names mapped to SQL columns,
// and the default order.
type Spec struct {
	Sort        map[string]string
	DefaultSort string // e.g. "-createdAt"
}

// Order is one sort key, already mapped to a whitelisted column.
type Order struct {
	Column string
	Desc   bool
}

// Request is a validated list request.
type Request struct {
	Page     int
	PageSize int
	Search   string
	Sort     []Order
}

// Offset is the number of rows before the page.
func (r Request) Offset() int { return (r.Page - 1) * r.PageSize }

// Parse reads the list parameters through get (a query-string lookup). Pages
// start at 1; pageSize is 1..100; sort is a comma list of whitelisted names,
// "-" meaning descending. Anything else is a validation error.
func Parse(get func(string) string, spec Spec) (Request, error) {
	req := Request{Page: 1, PageSize: DefaultPageSize, Search: strings.TrimSpace(get("search"))}
	fields := apperr.Fields{}
	if s := get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fields.Add("Page", "Must be a whole number of at least 1.")
		}
		req.Page = n
	}
	if s := get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageSize {
			fields.Add("PageSize", "Must be a whole number from 1 to 100.")
		}
		req.PageSize = n
	}
	if len(req.Search) > 200 {
		fields.Add("Search", "Must be at most 200 characters long.")
	}
	sort := get("sort")
	if sort == "" {
		sort = spec.DefaultSort
	}
	for _, part := range strings.Split(sort, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		desc := strings.HasPrefix(part, "-")
		name := strings.TrimPrefix(part, "-")
		col, ok := spec.Sort[name]
		if !ok {
			fields.Add("Sort", "Cannot sort by "+strconv.Quote(name)+"; allowed: "+allowed(spec)+".")
			continue
		}
		req.Sort = append(req.Sort, Order{Column: col, Desc: desc})
	}
	if err := fields.Err(); err != nil {
		return Request{}, err
	}
	return req, nil
}

func allowed(spec Spec) string {
	names := make([]string, 0, len(spec.Sort))
	for k := range spec.Sort {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Page is the generic paged wrapper of every list response.
type Page[T any] struct {
	Items      []T   `json:"items"`
	Page       int   `json:"page"`
	PageSize   int   `json:"pageSize"`
	TotalCount int64 `json:"totalCount"`
	TotalPages int   `json:"totalPages"`
}

// NewPage wraps one page of items; Items is never null.
func NewPage[T any](items []T, req Request, total int64) Page[T] {
	if items == nil {
		items = []T{}
	}
	pages := int((total + int64(req.PageSize) - 1) / int64(req.PageSize))
	return Page[T]{Items: items, Page: req.Page, PageSize: req.PageSize, TotalCount: total, TotalPages: pages}
}
