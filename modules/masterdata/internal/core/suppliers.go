package core

import (
	"context"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
)

// SupplierTypes are the five kinds of supplier (DESIGN §3).
var SupplierTypes = []string{"Material", "Subcontractor", "Service", "Equipment", "Consultant"}

// Supplier is a company the organisation buys from or subcontracts to.
type Supplier struct {
	Record
	SupplierType  string  `json:"supplierType"`
	TaxCode       *string `json:"taxCode"`
	Address       *string `json:"address"`
	Phone         *string `json:"phone"`
	Email         *string `json:"email"`
	ContactPerson *string `json:"contactPerson"`
	BankAccount   *string `json:"bankAccount"`
	BankName      *string `json:"bankName"`
	Notes         *string `json:"notes"`
}

func (Supplier) TableName() string { return "suppliers" }

// searchParts: a supplier is also found by its tax code.
func (s *Supplier) searchParts() []string { return []string{deref(s.TaxCode)} }

// SupplierInput is the body of POST /api/suppliers and PUT /api/suppliers/{id}.
type SupplierInput struct {
	Head
	SupplierType  string  `json:"supplierType" validate:"required,oneof=Material Subcontractor Service Equipment Consultant"`
	TaxCode       *string `json:"taxCode"`
	Address       *string `json:"address" validate:"omitempty,max=500"`
	Phone         *string `json:"phone" validate:"omitempty,max=50"`
	Email         *string `json:"email" validate:"omitempty,email,max=254"`
	ContactPerson *string `json:"contactPerson" validate:"omitempty,max=200"`
	BankAccount   *string `json:"bankAccount" validate:"omitempty,max=50"`
	BankName      *string `json:"bankName" validate:"omitempty,max=200"`
	Notes         *string `json:"notes" validate:"omitempty,max=2000"`
}

func (in *SupplierInput) prepare(_ context.Context, _ *Service, f apperr.Fields) error {
	trimAll(&in.TaxCode, &in.Address, &in.Phone, &in.Email, &in.ContactPerson, &in.BankAccount, &in.BankName, &in.Notes)
	checkTaxCode(in.TaxCode, f)
	return nil
}

func (in *SupplierInput) applyTo(s *Supplier) {
	s.SupplierType, s.TaxCode, s.Address, s.Phone, s.Email = in.SupplierType, in.TaxCode, in.Address, in.Phone, in.Email
	s.ContactPerson, s.BankAccount, s.BankName, s.Notes = in.ContactPerson, in.BankAccount, in.BankName, in.Notes
}

var supplierSpec = spec{
	Kind: KindSupplier, Title: "Supplier", Path: "/api/suppliers",
	Menu: kernel.Menu{Key: "Suppliers", Title: "Suppliers", Path: "/suppliers", Order: 70, Grants: kernel.Grants{
		identity.RoleDrafter: "RC", identity.RoleDeptManager: "R", identity.RoleProjectManager: "R",
		identity.RoleProcurement: "CRU", identity.RoleCostControl: "R", identity.RoleEquipment: "R",
		identity.RoleDirector: "R",
	}},
	List: paging.Spec{Sort: map[string]string{"code": "code", "name": "name", "createdAt": "created_at"}, DefaultSort: "code"},
	Filters: []filter{
		{Param: "supplierType", Column: "supplier_type", Values: SupplierTypes},
		{Param: "isActive", Column: "is_active"},
	},
}
