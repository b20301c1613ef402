package core

import (
	"context"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/paging"
)

// ListQuery is the filter of the contracts list page: the query parameters
// of GET /api/contracts.
type ListQuery struct {
	Phase, SupplierID, ProjectID, ContractType string
}

// ListFor is List for the pages, with the API's filter, visibility and
// checks.
func (s *Service) ListFor(ctx context.Context, p authn.Principal, q ListQuery, req paging.Request) (paging.Page[Summary], error) {
	return s.List(ctx, p, listFilter{Phase: q.Phase, SupplierID: q.SupplierID, ProjectID: q.ProjectID,
		ContractType: q.ContractType, Search: req.Search}, req)
}
