package core

// ListFilter is what the budget list filters on.
type ListFilter = listFilter

// ParseListFilter reads the list's filters from a query string (get) the
// way GET /api/budgets and the list page both take them.
func ParseListFilter(get func(string) string) (ListFilter, error) { return parseListFilter(get) }
