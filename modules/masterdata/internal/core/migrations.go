package core

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/migrate"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "suppliers, projects, departments", Up: v1}}
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
	if tx.Dialector.Name() == "postgres" {
		return v1Trigrams(tx)
	}
	return nil
}

// v1Trigrams makes the search's LIKE '%word%' index-backed on Postgres. The
// pg_trgm extension is database-wide: it is created once, in schema public,
// under a lock so that schemas migrating side by side do not race, and each
// index names the operator class by the schema the extension lives in.
func v1Trigrams(tx *gorm.DB) error {
	schema, err := trgmSchema(tx)
	if err != nil {
		return err
	}
	if schema == "" {
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(7312, hashtext('pg_trgm'))`).Error; err != nil {
			return err
		}
		if err := tx.Exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`).Error; err != nil {
			return fmt.Errorf("create extension pg_trgm, which search needs (a database owner or superuser can run CREATE EXTENSION pg_trgm WITH SCHEMA public once): %w", err)
		}
		if schema, err = trgmSchema(tx); err != nil {
			return err
		}
	}
	opclass := `"` + strings.ReplaceAll(schema, `"`, `""`) + `".gin_trgm_ops`
	for _, t := range v1Tables {
		if err := tx.Exec(fmt.Sprintf(`CREATE INDEX ix_%s_search ON %[1]s USING gin (search_text %s) WHERE deleted_at IS NULL`, t, opclass)).Error; err != nil {
			return err
		}
	}
	return nil
}

func trgmSchema(tx *gorm.DB) (string, error) {
	var schema string
	err := tx.Raw(`SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`).Scan(&schema).Error
	return schema, err
}
