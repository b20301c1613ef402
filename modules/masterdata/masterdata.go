// Package masterdata is the public contract of the masterdata module:
// suppliers, projects and departments. Other modules never touch its tables;
// they look records up through Lookup and refuse deletes of records they
// still use by subscribing to Deleted.
//
// Resolving a page of references in one query:
//
//	lookup, err := kernel.Need[masterdata.Lookup](app) // in Provision
//	refs, err := lookup.Suppliers(ctx, supplierIDs)     // map id → Ref
//
// Refusing the delete of a supplier a live contract uses:
//
//	app.Bus.Subscribe(masterdata.TopicDeleted, events.InTx, func(ctx context.Context, e events.Event) error {
//		d := e.(masterdata.Deleted)
//		if d.Kind == masterdata.KindSupplier && usedByLiveContract(ctx, d.ID) {
//			return masterdata.InUse("Contract HDTP-2026-001 uses this supplier.")
//		}
//		return nil
//	})
package masterdata

import (
	"context"

	"github.com/contractflow/contractflow/modules/masterdata/internal/core"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/events"
)

// Lookup answers other modules' questions about master data. Obtain it with
// kernel.Need[masterdata.Lookup](app) from a module that requires
// "masterdata". Only live records are found: a deleted one is as unknown as
// an id that never existed. Called inside a transaction on Postgres, the
// rows found stay share-locked until it ends, so a concurrent delete waits
// and then sees, through its Deleted subscribers, what the transaction wrote.
// Elsewhere Supplier(s), Project(s) and Department(s) answer from a cache of
// Refs that every create, update, delete and import drops after commit, on
// every node (platform/cache; docs/decisions.md).
type Lookup interface {
	// Supplier returns a live supplier, or an apperr NotFound error.
	Supplier(ctx context.Context, id string) (Ref, error)
	// Project returns a live project, or an apperr NotFound error.
	Project(ctx context.Context, id string) (Ref, error)
	// Department returns a live department, or an apperr NotFound error.
	Department(ctx context.Context, id string) (Ref, error)
	// SupplierParty returns what a live supplier's record says about it as
	// a contract's party B (tax code, address, bank account …), or an
	// apperr NotFound error.
	SupplierParty(ctx context.Context, id string) (SupplierParty, error)
	// ProjectSite returns a live project's client and location, or an
	// apperr NotFound error.
	ProjectSite(ctx context.Context, id string) (ProjectSite, error)

	// Suppliers maps ids to live suppliers, reading those not in memory in
	// one query (per 500 ids); unknown and deleted ids are left out.
	Suppliers(ctx context.Context, ids []string) (map[string]Ref, error)
	// Projects maps ids to live projects; unknown and deleted ids are left out.
	Projects(ctx context.Context, ids []string) (map[string]Ref, error)
	// Departments maps ids to live departments; unknown and deleted ids are left out.
	Departments(ctx context.Context, ids []string) (map[string]Ref, error)

	// SearchSupplierIDs returns up to limit live suppliers whose code, name
	// or tax code match text the way the supplier list's search does.
	SearchSupplierIDs(ctx context.Context, text string, limit int) ([]string, error)
	// SearchProjectIDs returns up to limit live projects whose code or name
	// match text the way the project list's search does.
	SearchProjectIDs(ctx context.Context, text string, limit int) ([]string, error)
}

// SupplierFacts is implemented by a module that knows more about a supplier
// than master data does (procurement: the approved evaluations it won).
// GET /api/suppliers/{id} adds the facts it returns, keyed by property name,
// to the supplier; they never replace one of the supplier's own properties.
// An error fails that request.
type SupplierFacts = core.SupplierFacts

// SupplierFactsRegistry takes the SupplierFacts of other modules. Obtain it
// with kernel.Need[masterdata.SupplierFactsRegistry](app) in Provision, from
// a module that requires "masterdata", and register there: master data never
// imports the module that adds facts, and without that module they are absent.
type SupplierFactsRegistry interface {
	AddSupplierFacts(f SupplierFacts)
}

// Ref is a master-data record as other modules see it: {ID, Code, Name, IsActive}.
type Ref = core.Ref

// SupplierParty is a supplier's record as a contract party: Ref plus
// TaxCode, Address, Phone, Email, ContactPerson, BankAccount, BankName.
type SupplierParty = core.SupplierParty

// ProjectSite is a project's record for documents: Ref plus Client, Location.
type ProjectSite = core.ProjectSite

// Kind names a resource: KindSupplier, KindProject or KindDepartment.
type Kind = core.Kind

// The kinds of master data.
const (
	KindSupplier   = core.KindSupplier
	KindProject    = core.KindProject
	KindDepartment = core.KindDepartment
)

// Deleted {Kind, ID, Code} is published on TopicDeleted inside the
// transaction that soft-deletes a record. An events.InTx subscriber that
// still uses the record returns InUse: the delete is rolled back and the
// client gets 409 in_use with that detail.
type Deleted = core.Deleted

// TopicDeleted is the topic of Deleted: "masterdata.deleted".
const TopicDeleted = core.TopicDeleted

// InUse is the error that vetoes a delete (409 in_use). detail tells the
// user what still uses the record.
func InUse(detail string) *apperr.Error { return core.InUse(detail) }

// Veto is the TopicDeleted subscriber (events.InTx) of a module whose live
// documents name master data in the columns supplier_id, project_id and
// department_id: referencing says whether a live document names id in
// column, and the refusal says "A live <document> references this <kind>."
func Veto(document string, referencing func(ctx context.Context, column, id string) (bool, error)) events.Handler {
	return func(ctx context.Context, e events.Event) error {
		d := e.(Deleted)
		column := map[Kind]string{KindSupplier: "supplier_id", KindProject: "project_id", KindDepartment: "department_id"}[d.Kind]
		if column == "" {
			return nil
		}
		used, err := referencing(ctx, column, d.ID)
		if err != nil || !used {
			return err
		}
		return InUse("A live " + document + " references this " + string(d.Kind) + ".")
	}
}

// CheckRef checks the record id that a request names in field: one that does
// not exist or is inactive is a field error added to fields; a record found
// is put in into (nil for none). Other errors are returned.
func CheckRef(ctx context.Context, fields apperr.Fields, field string, lookup func(context.Context, string) (Ref, error), id string, into map[string]Ref) error {
	r, err := lookup(ctx, id)
	if apperr.KindOf(err) == apperr.KindNotFound {
		fields.Add(field, "No such record.")
		return nil
	}
	if err != nil {
		return err
	}
	if !r.IsActive {
		fields.Add(field, "The record is inactive.")
	}
	if into != nil {
		into[id] = r
	}
	return nil
}
