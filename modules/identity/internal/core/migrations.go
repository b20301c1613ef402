package core

import (
	"context"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/search"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "users, roles, tokens, menus, permissions", Up: migrate.SQL(
		`CREATE TABLE roles (
			id VARCHAR(36) PRIMARY KEY,
			name VARCHAR(50) NOT NULL UNIQUE,
			code VARCHAR(10) NULL,
			description VARCHAR(200) NOT NULL DEFAULT '')`,
		`CREATE TABLE users (
			id VARCHAR(36) PRIMARY KEY,
			email VARCHAR(254) NOT NULL,
			normalized_email VARCHAR(254) NOT NULL,
			full_name VARCHAR(200) NOT NULL,
			password_hash VARCHAR(200) NOT NULL,
			is_active BOOLEAN NOT NULL DEFAULT TRUE,
			security_stamp VARCHAR(64) NOT NULL,
			lockout_enabled BOOLEAN NOT NULL DEFAULT TRUE,
			access_failed_count INTEGER NOT NULL DEFAULT 0,
			lockout_end TIMESTAMP NULL,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			version INTEGER NOT NULL DEFAULT 1)`,
		`CREATE UNIQUE INDEX ux_users_normalized_email ON users (normalized_email)`,
		`CREATE INDEX ix_users_created_at ON users (created_at)`,
		`CREATE INDEX ix_users_full_name ON users (full_name)`,
		`CREATE TABLE user_roles (
			user_id VARCHAR(36) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
			role_id VARCHAR(36) NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
			PRIMARY KEY (user_id, role_id))`,
		`CREATE INDEX ix_user_roles_role ON user_roles (role_id)`,
		`CREATE TABLE refresh_tokens (
			id VARCHAR(36) PRIMARY KEY,
			user_id VARCHAR(36) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
			family_id VARCHAR(36) NOT NULL,
			token_hash VARCHAR(64) NOT NULL UNIQUE,
			expires_at TIMESTAMP NOT NULL,
			created_at TIMESTAMP NOT NULL,
			used_at TIMESTAMP NULL,
			revoked_at TIMESTAMP NULL)`,
		`CREATE INDEX ix_refresh_tokens_family ON refresh_tokens (family_id)`,
		`CREATE INDEX ix_refresh_tokens_user ON refresh_tokens (user_id)`,
		`CREATE TABLE menu_items (
			menu_key VARCHAR(50) PRIMARY KEY,
			title VARCHAR(100) NOT NULL,
			path VARCHAR(200) NOT NULL DEFAULT '',
			parent_key VARCHAR(50) NULL,
			sort_order INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE permissions (
			role_id VARCHAR(36) NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
			menu_key VARCHAR(50) NOT NULL REFERENCES menu_items (menu_key) ON DELETE CASCADE,
			can_read BOOLEAN NOT NULL DEFAULT FALSE,
			can_create BOOLEAN NOT NULL DEFAULT FALSE,
			can_update BOOLEAN NOT NULL DEFAULT FALSE,
			can_delete BOOLEAN NOT NULL DEFAULT FALSE,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			PRIMARY KEY (role_id, menu_key))`,
		`CREATE TABLE identity_state (
			id INTEGER PRIMARY KEY,
			permissions_version BIGINT NOT NULL,
			users_version BIGINT NOT NULL)`,
		`INSERT INTO identity_state (id, permissions_version, users_version) VALUES (1, 0, 0)`,
	)}, {Version: 2, Name: "users search_text", Up: v2SearchText},
		// Every search on Postgres read the GIN pending list whole, up to
		// 4 MB of it (search.ShortPendingLists).
		{Version: 3, Name: "a short pending list for the Postgres search index", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.ShortPendingLists(tx, "ix_users_search")
		}}}
}

// v2SearchText adds search_text (email and full name, folded as
// platform/search folds: SQLite's LOWER knows only ASCII, so "ánh" never
// found "Ánh"), fills it for existing users and indexes it on Postgres.
func v2SearchText(_ context.Context, tx *gorm.DB) error {
	if err := tx.Exec(`ALTER TABLE users ADD COLUMN search_text TEXT NOT NULL DEFAULT ''`).Error; err != nil {
		return err
	}
	var rows []struct{ ID, Email, FullName string }
	if err := tx.Raw(`SELECT id, email, full_name FROM users`).Scan(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if err := tx.Exec(`UPDATE users SET search_text = ? WHERE id = ?`, userSearchText(r.Email, r.FullName), r.ID).Error; err != nil {
			return err
		}
	}
	return search.TrigramIndexAll(tx, "users")
}
