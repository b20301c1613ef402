package core

import "github.com/contractflow/contractflow/platform/paging"

// ListFilter is what the evaluation list filters on.
type ListFilter = listFilter

// FilterOf reads the list's filters from a query string (get) the way GET
// /api/purchase-evaluations and the list page both take them.
func FilterOf(get func(string) string, req paging.Request) ListFilter {
	return listFilter{Phase: get("phase"), Policy: get("policy"), ProjectID: get("projectId"), Search: req.Search}
}
