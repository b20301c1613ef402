package core

import "github.com/contractflow/contractflow/platform/migrate"

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "notifications and WebSocket tickets", Up: migrate.SQL(
		// No foreign key to users: the users table is identity's.
		`CREATE TABLE notifications (
			id VARCHAR(36) PRIMARY KEY,
			user_id VARCHAR(36) NOT NULL,
			kind VARCHAR(64) NOT NULL,
			title TEXT NOT NULL,
			body TEXT NOT NULL,
			entity_type VARCHAR(64) NOT NULL,
			entity_id VARCHAR(36) NOT NULL,
			read_at TIMESTAMP NULL,
			created_at TIMESTAMP NOT NULL)`,
		// A user's list, newest first, and the catch-up after a reconnection.
		`CREATE INDEX ix_notifications_user_created ON notifications (user_id, created_at, id)`,
		// The unread count and the unreadOnly list.
		`CREATE INDEX ix_notifications_user_unread ON notifications (user_id, created_at) WHERE read_at IS NULL`,
		// The retention job.
		`CREATE INDEX ix_notifications_created ON notifications (created_at)`,
		`CREATE TABLE notification_tickets (
			hash VARCHAR(64) PRIMARY KEY,
			user_id VARCHAR(36) NOT NULL,
			stamp VARCHAR(64) NOT NULL,
			expires_at TIMESTAMP NOT NULL)`,
		`CREATE INDEX ix_notification_tickets_expires ON notification_tickets (expires_at)`,
	)}}
}
