package core

import (
	"context"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/search"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "purchase evaluations, quotations, history, opinions, voucher code sequences", Up: v1},
		{Version: 2, Name: "the inbox in its order", Up: migrate.SQL(
			// An inbox of one phase (a role's usual case) over two policies'
			// definitions was two ranges of the (definition, phase, deadline)
			// index and a sort of every match; this walks the phase in the
			// inbox order (deadline, id), tests the definition in the index
			// and stops at the page. docs/query-plans.md has the plans.
			`CREATE INDEX ix_purchase_evaluations_inbox ON purchase_evaluations (phase, sla_deadline, id, workflow_definition_id, deleted_at)
				WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL`,
		)},
		// Every search on Postgres read the GIN pending list whole, up to
		// 4 MB of it (search.ShortPendingLists).
		{Version: 3, Name: "a short pending list for the Postgres search index", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.ShortPendingLists(tx, "ix_purchase_evaluations_search")
		}}}
}

func v1(_ context.Context, tx *gorm.DB) error {
	for _, stmt := range []string{
		`CREATE TABLE purchase_evaluations (
			id VARCHAR(36) PRIMARY KEY,
			ma_phieu VARCHAR(32) NOT NULL,
			policy VARCHAR(1) NOT NULL,
			title VARCHAR(300) NOT NULL,
			project_id VARCHAR(36) NOT NULL,
			department_id VARCHAR(36) NULL,
			category VARCHAR(16) NULL,
			description TEXT NOT NULL,
			estimated_value BIGINT NOT NULL,
			currency VARCHAR(3) NOT NULL,
			selected_quotation_id VARCHAR(36) NULL,
			selection_reason TEXT NOT NULL,
			payment_terms TEXT NOT NULL,
			contract_id VARCHAR(36) NULL,
			approved_at TIMESTAMP NULL,
			search_text TEXT NOT NULL,
			phase VARCHAR(32) NOT NULL,
			sla_deadline TIMESTAMP NULL,
			sla_warning_sent BOOLEAN NOT NULL DEFAULT FALSE,
			sla_reminded_at TIMESTAMP NULL,
			workflow_definition_id VARCHAR(36) NOT NULL,
			history_hash VARCHAR(64) NOT NULL DEFAULT '',
			version INTEGER NOT NULL DEFAULT 1,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NOT NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			deleted_at TIMESTAMP NULL,
			deleted_by VARCHAR(36) NULL)`,
		// Voucher codes come from a per-prefix sequence and are never reused.
		`CREATE UNIQUE INDEX ux_purchase_evaluations_ma_phieu ON purchase_evaluations (ma_phieu)`,
		// One contract per evaluation, whatever the requests racing for it.
		`CREATE UNIQUE INDEX ux_purchase_evaluations_contract ON purchase_evaluations (contract_id) WHERE contract_id IS NOT NULL`,
		`CREATE INDEX ix_purchase_evaluations_created ON purchase_evaluations (created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_owner ON purchase_evaluations (created_by, created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_workflow_phase ON purchase_evaluations (workflow_definition_id, phase, sla_deadline) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_sla ON purchase_evaluations (sla_deadline) WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL`,
		`CREATE INDEX ix_purchase_evaluations_phase ON purchase_evaluations (phase, created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_project ON purchase_evaluations (project_id) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_department ON purchase_evaluations (department_id) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_purchase_evaluations_winner ON purchase_evaluations (selected_quotation_id, phase) WHERE deleted_at IS NULL`,
		`CREATE TABLE purchase_evaluation_quotations (
			id VARCHAR(36) PRIMARY KEY,
			evaluation_id VARCHAR(36) NOT NULL REFERENCES purchase_evaluations (id),
			supplier_id VARCHAR(36) NOT NULL,
			amount BIGINT NOT NULL,
			delivery_days INTEGER NULL,
			warranty_months INTEGER NULL,
			notes TEXT NOT NULL,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NOT NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NOT NULL)`,
		// A supplier quotes once per evaluation.
		`CREATE UNIQUE INDEX ux_purchase_evaluation_quotations_supplier ON purchase_evaluation_quotations (evaluation_id, supplier_id)`,
		`CREATE INDEX ix_purchase_evaluation_quotations_supplier ON purchase_evaluation_quotations (supplier_id)`,
		`CREATE TABLE purchase_evaluation_history (
			id VARCHAR(36) PRIMARY KEY,
			evaluation_id VARCHAR(36) NOT NULL REFERENCES purchase_evaluations (id),
			from_phase VARCHAR(32) NOT NULL,
			to_phase VARCHAR(32) NOT NULL,
			approver_user_id VARCHAR(36) NULL,
			decision VARCHAR(16) NOT NULL,
			comment TEXT NOT NULL,
			approved_at TIMESTAMP NOT NULL,
			hash VARCHAR(64) NOT NULL,
			prev_hash VARCHAR(64) NOT NULL)`,
		`CREATE INDEX ix_purchase_evaluation_history_evaluation ON purchase_evaluation_history (evaluation_id, approved_at)`,
		// PEDeptOpinions of seed §2.8: one opinion per evaluation and kind.
		`CREATE TABLE pe_dept_opinions (
			id VARCHAR(36) PRIMARY KEY,
			evaluation_id VARCHAR(36) NOT NULL REFERENCES purchase_evaluations (id),
			kind VARCHAR(3) NOT NULL,
			verdict VARCHAR(24) NOT NULL,
			comment TEXT NOT NULL,
			user_id VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL,
			updated_at TIMESTAMP NOT NULL)`,
		`CREATE UNIQUE INDEX ux_pe_dept_opinions_evaluation_kind ON pe_dept_opinions (evaluation_id, kind)`,
		// PurchaseEvaluationCodeSequence of seed §2.8, keyed by prefix (PE/2026/A).
		`CREATE TABLE purchase_evaluation_code_sequences (
			prefix VARCHAR(64) PRIMARY KEY,
			last_seq INTEGER NOT NULL)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return search.TrigramIndex(tx, "purchase_evaluations")
}
