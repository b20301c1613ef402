// Package core implements the masterdata module: suppliers, projects and
// departments, served by one generic implementation (resource.go) that each
// resource parameterises with its model, its input and a spec.
package core

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/search"
)

// Service holds the three resources and answers other modules' lookups.
type Service struct {
	db     *db.DB
	caches *cache.Bus
	clock  clock.Clock
	bus    *events.Bus
	users  userNames

	factsMu sync.RWMutex
	facts   []SupplierFacts // other modules' facts shown on a supplier

	suppliers   *resource[Supplier, SupplierInput, *Supplier, *SupplierInput]
	projects    *resource[Project, ProjectInput, *Project, *ProjectInput]
	departments *resource[Department, DepartmentInput, *Department, *DepartmentInput]
}

// New builds the service; users resolves manager ids (identity's Directory).
func New(ctx context.Context, app *kernel.App, users userNames) (*Service, error) {
	indexed, err := search.EnsureIndexes(ctx, app.DB, app.Log, "suppliers", "projects", "departments")
	if err != nil {
		return nil, err
	}
	s := &Service{db: app.DB, caches: app.Caches, clock: app.Clock, bus: app.Bus, users: users}
	s.suppliers = newResource[Supplier, SupplierInput](s, supplierSpec, indexed)
	s.suppliers.extra = s.supplierFacts
	s.projects = newResource[Project, ProjectInput](s, projectSpec, indexed)
	s.departments = newResource[Department, DepartmentInput](s, departmentSpec, indexed)
	return s, nil
}

// now is the transaction time, to the microsecond both engines store.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// Routes declares the fifteen endpoints.
func (s *Service) Routes(r *httpx.Routes) {
	s.suppliers.routes(r)
	s.projects.routes(r)
	s.departments.routes(r)
}

// Menus are the menu keys whose policies guard the routes.
func Menus() []kernel.Menu {
	return []kernel.Menu{supplierSpec.Menu, projectSpec.Menu, departmentSpec.Menu}
}

// Lookup, for other modules (see the root package's Lookup).

func (s *Service) Supplier(ctx context.Context, id string) (Ref, error) {
	return s.suppliers.ref(ctx, id)
}

func (s *Service) Project(ctx context.Context, id string) (Ref, error) {
	return s.projects.ref(ctx, id)
}

// SupplierParty returns a live supplier's party facts, or NotFound.
func (s *Service) SupplierParty(ctx context.Context, id string) (SupplierParty, error) {
	sup, err := s.suppliers.get(ctx, id)
	if err != nil {
		return SupplierParty{}, err
	}
	return SupplierParty{
		Ref:     Ref{ID: sup.ID, Code: sup.Code, Name: sup.Name, IsActive: sup.IsActive},
		TaxCode: deref(sup.TaxCode), Address: deref(sup.Address), Phone: deref(sup.Phone), Email: deref(sup.Email),
		ContactPerson: deref(sup.ContactPerson), BankAccount: deref(sup.BankAccount), BankName: deref(sup.BankName),
	}, nil
}

// ProjectSite returns a live project's site facts, or NotFound.
func (s *Service) ProjectSite(ctx context.Context, id string) (ProjectSite, error) {
	p, err := s.projects.get(ctx, id)
	if err != nil {
		return ProjectSite{}, err
	}
	return ProjectSite{Ref: Ref{ID: p.ID, Code: p.Code, Name: p.Name, IsActive: p.IsActive},
		Client: deref(p.Client), Location: deref(p.Location)}, nil
}

func (s *Service) Department(ctx context.Context, id string) (Ref, error) {
	return s.departments.ref(ctx, id)
}

func (s *Service) Suppliers(ctx context.Context, ids []string) (map[string]Ref, error) {
	return s.suppliers.refs(ctx, ids)
}

func (s *Service) Projects(ctx context.Context, ids []string) (map[string]Ref, error) {
	return s.projects.refs(ctx, ids)
}

func (s *Service) Departments(ctx context.Context, ids []string) (map[string]Ref, error) {
	return s.departments.refs(ctx, ids)
}

// AddSupplierFacts registers another module's facts about suppliers,
// shown by GET /api/suppliers/{id} (see the root package's SupplierFactsRegistry).
func (s *Service) AddSupplierFacts(f SupplierFacts) {
	s.factsMu.Lock()
	defer s.factsMu.Unlock()
	s.facts = append(s.facts, f)
}

// supplierFacts gathers every registered module's facts about a supplier.
func (s *Service) supplierFacts(ctx context.Context, id string) (map[string]any, error) {
	s.factsMu.RLock()
	providers := s.facts
	s.factsMu.RUnlock()
	out := map[string]any{}
	for _, f := range providers {
		facts, err := f.SupplierFacts(ctx, id)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, facts)
	}
	return out, nil
}

func (s *Service) SearchProjectIDs(ctx context.Context, text string, limit int) ([]string, error) {
	return s.projects.searchIDs(ctx, text, limit)
}

func (s *Service) SearchSupplierIDs(ctx context.Context, text string, limit int) ([]string, error) {
	return s.suppliers.searchIDs(ctx, text, limit)
}

// Import inserts the records whose codes no row has used yet (live or
// deleted), validated as POST validates, in one transaction; the demo seed
// and the benchmark's 100 000 suppliers come in this way. It returns how many
// rows it inserted.
func (s *Service) Import(ctx context.Context, suppliers []SupplierInput, projects []ProjectInput, departments []DepartmentInput) (int, error) {
	total := 0
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		for _, step := range []func() (int, error){
			func() (int, error) { return s.suppliers.insertMissing(ctx, suppliers) },
			func() (int, error) { return s.projects.insertMissing(ctx, projects) },
			func() (int, error) { return s.departments.insertMissing(ctx, departments) },
		} {
			n, err := step()
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}
