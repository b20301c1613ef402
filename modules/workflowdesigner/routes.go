package workflowdesigner

import (
	_ "embed"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
)

var (
	_ kernel.RouteProvider   = (*Module)(nil)
	_ kernel.OpenAPIProvider = (*Module)(nil)
)

// Routes declares the workflow endpoints under /api/workflows, policy
// Workflows.*: the designer's (DESIGN §4, §4.1) first, whose
// /api/workflows/assignments must come before /api/workflows/:id.
func (m *Module) Routes(r *httpx.Routes) {
	core.NewDesigner(m.svc, m.declaredKinds).Routes(r)
	// In-flight migration (DESIGN §4.1) moves documents: the runtime's.
	m.rt.Routes(r)
}

// declaredKinds are the registered document kinds as definitions are
// validated against them.
func (m *Module) declaredKinds() []engine.Kind {
	kinds := m.rt.Kinds()
	out := make([]engine.Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.Declared()
	}
	return out
}

//go:embed openapi.yaml
var openapiFragment []byte

// OpenAPI documents the workflow endpoints.
func (*Module) OpenAPI() []byte { return openapiFragment }
