package core

import (
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "budgets, lines, commitments, adjustments", Up: migrate.SQL(
		`CREATE TABLE budgets (
			id VARCHAR(36) PRIMARY KEY,
			code VARCHAR(32) NOT NULL,
			name VARCHAR(200) NOT NULL,
			project_id VARCHAR(36) NULL,
			department_id VARCHAR(36) NULL,
			fiscal_year INTEGER NOT NULL,
			currency VARCHAR(3) NOT NULL,
			status VARCHAR(16) NOT NULL,
			on_exceed VARCHAR(8) NOT NULL,
			description TEXT NOT NULL,
			planned_total BIGINT NOT NULL DEFAULT 0,
			adjustments_total BIGINT NOT NULL DEFAULT 0,
			reserved_total BIGINT NOT NULL DEFAULT 0,
			committed_total BIGINT NOT NULL DEFAULT 0,
			actual_total BIGINT NOT NULL DEFAULT 0,
			remaining BIGINT NOT NULL DEFAULT 0,
			approved_at TIMESTAMP NULL,
			approved_by VARCHAR(36) NULL,
			closed_at TIMESTAMP NULL,
			closed_by VARCHAR(36) NULL,
			search_text TEXT NOT NULL DEFAULT '',
			version INTEGER NOT NULL DEFAULT 1,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			deleted_at TIMESTAMP NULL,
			deleted_by VARCHAR(36) NULL)`,
		`CREATE UNIQUE INDEX ux_budgets_code ON budgets (code) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_budgets_project ON budgets (project_id, status) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_budgets_year ON budgets (fiscal_year, code) WHERE deleted_at IS NULL`,
		`CREATE TABLE budget_lines (
			id VARCHAR(36) PRIMARY KEY,
			budget_id VARCHAR(36) NOT NULL REFERENCES budgets (id),
			code VARCHAR(32) NOT NULL,
			name VARCHAR(200) NOT NULL,
			category VARCHAR(100) NULL,
			original_amount BIGINT NOT NULL,
			adjustments_total BIGINT NOT NULL DEFAULT 0,
			planned_amount BIGINT NOT NULL,
			reserved_amount BIGINT NOT NULL DEFAULT 0,
			committed_amount BIGINT NOT NULL DEFAULT 0,
			actual_amount BIGINT NOT NULL DEFAULT 0,
			remaining BIGINT NOT NULL,
			version INTEGER NOT NULL DEFAULT 1,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			deleted_at TIMESTAMP NULL,
			deleted_by VARCHAR(36) NULL)`,
		`CREATE UNIQUE INDEX ux_budget_lines_code ON budget_lines (budget_id, code) WHERE deleted_at IS NULL`,
		`CREATE TABLE budget_commitments (
			id VARCHAR(36) PRIMARY KEY,
			budget_line_id VARCHAR(36) NOT NULL REFERENCES budget_lines (id),
			contract_id VARCHAR(36) NULL,
			amount BIGINT NOT NULL,
			kind VARCHAR(16) NOT NULL,
			note TEXT NOT NULL,
			source VARCHAR(16) NOT NULL,
			closed_at TIMESTAMP NULL,
			superseded_by VARCHAR(36) NULL,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL)`,
		// The line totals sum open entries by kind: this index covers it.
		`CREATE INDEX ix_budget_commitments_open ON budget_commitments (budget_line_id, kind, amount) WHERE closed_at IS NULL`,
		`CREATE INDEX ix_budget_commitments_contract ON budget_commitments (contract_id, budget_line_id) WHERE closed_at IS NULL AND contract_id IS NOT NULL`,
		`CREATE INDEX ix_budget_commitments_line ON budget_commitments (budget_line_id, created_at)`,
		`CREATE TABLE budget_adjustments (
			id VARCHAR(36) PRIMARY KEY,
			budget_line_id VARCHAR(36) NOT NULL REFERENCES budget_lines (id),
			delta BIGINT NOT NULL,
			reason TEXT NOT NULL,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL)`,
		`CREATE INDEX ix_budget_adjustments_line ON budget_adjustments (budget_line_id, created_at)`,
	)}, {Version: 2, Name: "one index of a line's ledger", Up: migrate.SQL(
		// Every ledger entry a contract move adds went into five b-trees,
		// each a page the commit writes: the three indexes of version 1
		// become one, led by the line, which answers the line's totals, its
		// open entries, whether it has any, and what a contract holds on it.
		// Entries posted by hand for a contract keep a small index of their
		// own (a deleted contract's are released wherever they are); the
		// hook's own entries are all on the contract's line.
		`DROP INDEX ix_budget_commitments_open`,
		`DROP INDEX ix_budget_commitments_contract`,
		`DROP INDEX ix_budget_commitments_line`,
		`CREATE INDEX ix_budget_commitments_line ON budget_commitments (budget_line_id, closed_at, kind, contract_id, amount)`,
		`CREATE INDEX ix_budget_commitments_manual ON budget_commitments (contract_id) WHERE source = 'manual' AND contract_id IS NOT NULL`,
	)}, {Version: 3, Name: "the Postgres check of a reservation sent ahead of the move", Up: migrate.PerDialect(nil, []string{
		// budget_expect(ok) raises, when ok does not hold, the error that
		// runs a speculative transaction again (store.reserveAhead).
		db.ExpectFunction("budget_expect"),
	})}}
}
