package core

import "github.com/contractflow/contractflow/platform/migrate"

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "contract templates", Up: migrate.SQL(
		`CREATE TABLE contract_templates (
			id VARCHAR(36) PRIMARY KEY,
			form_code VARCHAR(32) NOT NULL,
			name VARCHAR(200) NOT NULL,
			contract_type VARCHAR(32) NOT NULL,
			file_name VARCHAR(255) NOT NULL,
			storage_path VARCHAR(300) NOT NULL DEFAULT '',
			format VARCHAR(8) NOT NULL,
			field_spec TEXT NOT NULL,
			is_active BOOLEAN NOT NULL DEFAULT TRUE,
			version INTEGER NOT NULL DEFAULT 1,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL)`,
		`CREATE UNIQUE INDEX ux_contract_templates_form_code ON contract_templates (form_code)`,
		`CREATE INDEX ix_contract_templates_contract_type ON contract_templates (contract_type)`,
	)}}
}
