package core

import (
	"context"
	"fmt"
	"github.com/contractflow/contractflow/platform/search"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/migrate"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "suppliers, projects, departments", Up: v1},
		// Every search on Postgres read the GIN pending list whole, up to
		// 4 MB of it (search.ShortPendingLists).
		{Version: 2, Name: "short pending lists for the Postgres search indexes", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.ShortPendingLists(tx, "ix_suppliers_search", "ix_projects_search", "ix_departments_search")
		}}}
}

// v1Columns are the columns of Record as version 1 created them.
const v1Columns = `id VARCHAR(36) PRIMARY KEY,
	code VARCHAR(32) NOT NULL,
	name VARCHAR(200) NOT NULL,
	is_active BOOLEAN NOT NULL DEFAULT TRUE,
	version INTEGER NOT NULL DEFAULT 1,
	created_at TIMESTAMP NOT NULL,
	created_by VARCHAR(36) NULL,
	updated_at TIMESTAMP NOT NULL,
	updated_by VARCHAR(36) NULL,
	search_text TEXT NOT NULL DEFAULT '',
	deleted_at TIMESTAMP NULL,
	deleted_by VARCHAR(36) NULL`

var v1Tables = []string{"suppliers", "projects", "departments"}

// v1 creates the tables and the indexes that serve every list: codes are
// unique among live rows only (a deleted code can be reused), and each sort
// order and filter has a partial index over live rows. Manager ids are not
// foreign keys: the users table belongs to the identity module.
func v1(ctx context.Context, tx *gorm.DB) error {
	stmts := []string{
		`CREATE TABLE suppliers (` + v1Columns + `,
			supplier_type VARCHAR(20) NOT NULL,
			tax_code VARCHAR(14) NULL,
			address VARCHAR(500) NULL,
			phone VARCHAR(50) NULL,
			email VARCHAR(254) NULL,
			contact_person VARCHAR(200) NULL,
			bank_account VARCHAR(50) NULL,
			bank_name VARCHAR(200) NULL,
			notes VARCHAR(2000) NULL)`,
		`CREATE TABLE projects (` + v1Columns + `,
			client VARCHAR(200) NULL,
			location VARCHAR(300) NULL,
			manager_user_id VARCHAR(36) NULL,
			start_date DATE NULL,
			end_date DATE NULL,
			status VARCHAR(20) NOT NULL)`,
		`CREATE TABLE departments (` + v1Columns + `,
			manager_user_id VARCHAR(36) NULL)`,
		`CREATE INDEX ix_suppliers_type ON suppliers (supplier_type, code) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_projects_status ON projects (status, code) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_projects_start_date ON projects (start_date, id) WHERE deleted_at IS NULL`,
	}
	for _, t := range v1Tables {
		stmts = append(stmts,
			fmt.Sprintf(`CREATE UNIQUE INDEX ux_%s_code ON %[1]s (code) WHERE deleted_at IS NULL`, t),
			fmt.Sprintf(`CREATE INDEX ix_%s_deleted_code ON %[1]s (code) WHERE deleted_at IS NOT NULL`, t),
			fmt.Sprintf(`CREATE INDEX ix_%s_name ON %[1]s (name, id) WHERE deleted_at IS NULL`, t),
			fmt.Sprintf(`CREATE INDEX ix_%s_created_at ON %[1]s (created_at, id) WHERE deleted_at IS NULL`, t))
	}
	if err := migrate.SQL(stmts...)(ctx, tx); err != nil {
		return err
	}
	for _, t := range v1Tables {
		if err := search.TrigramIndex(tx, t); err != nil {
			return err
		}
	}
	return nil
}
