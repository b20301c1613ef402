package core

import (
	"context"

	"github.com/contractflow/contractflow/platform/apperr"
)

// The types in this file cross the module boundary: the root package
// re-exports them as aliases, because internal packages never import it.

// Kind names the three master-data resources.
type Kind string

// The kinds of master data.
const (
	KindSupplier   Kind = "supplier"
	KindProject    Kind = "project"
	KindDepartment Kind = "department"
)

// Ref is what another module needs to show or check a master-data record.
type Ref struct {
	ID       string `json:"id"`
	Code     string `json:"code"`
	Name     string `json:"name"`
	IsActive bool   `json:"isActive"`
}

// SupplierParty is what a supplier's record says about it as party B of a
// contract; a field the record leaves empty is "".
type SupplierParty struct {
	Ref
	TaxCode, Address, Phone, Email, ContactPerson, BankAccount, BankName string
}

// ProjectSite is what a project's record says for a contract's project
// placeholders; a field the record leaves empty is "".
type ProjectSite struct {
	Ref
	Client, Location string
}

// TopicDeleted is published inside the transaction that soft-deletes a
// supplier, project or department.
const TopicDeleted = "masterdata.deleted"

// Deleted says a record is being deleted. Subscribers with events.InTx that
// still reference it return InUse, which rolls the delete back.
type Deleted struct {
	Kind Kind
	ID   string
	Code string
}

// Topic names the event on the bus.
func (Deleted) Topic() string { return TopicDeleted }

// InUse is the error a subscriber returns to refuse a delete (409 in_use).
// detail tells the user what still uses the record, e.g. "Contract
// HDTP-2026-001 uses this supplier."
func InUse(detail string) *apperr.Error { return apperr.Conflict("in_use", detail) }

// SupplierFacts is what another module knows about a supplier and wants
// shown on it (procurement: the approved evaluations it won).
type SupplierFacts interface {
	SupplierFacts(ctx context.Context, supplierID string) (map[string]any, error)
}
