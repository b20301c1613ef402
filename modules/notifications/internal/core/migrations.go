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
	)}, {Version: 2, Name: "one message row and small recipient rows", Up: migrate.PerDialect(
		messagesTables(" WITHOUT ROWID"), messagesTables(""))}}
}

// messagesTables store a notification once, as a message, and who it is
// for as recipient rows of a user, a time, a message and a read mark: a
// move that tells 300 people writes one message and 300 rows of four
// columns, keyed for the owner's list, instead of 300 copies of the text
// under four indexes. On SQLite the recipient rows live in their primary
// key's b-tree (WITHOUT ROWID). The rows of version 1 move over, each its
// own message with its id kept, and the old table goes.
func messagesTables(withoutRowID string) []string {
	return []string{
		`CREATE TABLE notification_messages (
			id VARCHAR(36) PRIMARY KEY,
			kind VARCHAR(64) NOT NULL,
			title TEXT NOT NULL,
			body TEXT NOT NULL,
			entity_type VARCHAR(64) NOT NULL,
			entity_id VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL)`,
		// The retention job.
		`CREATE INDEX ix_notification_messages_created ON notification_messages (created_at)`,
		// The owner's list newest first, the catch-up after a reconnection,
		// one notification of the owner (with its message's created_at).
		`CREATE TABLE notification_recipients (
			user_id VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL,
			message_id VARCHAR(36) NOT NULL,
			read_at TIMESTAMP NULL,
			PRIMARY KEY (user_id, created_at, message_id))` + withoutRowID,
		// The unread count and the unreadOnly list.
		`CREATE INDEX ix_notification_recipients_unread ON notification_recipients (user_id, created_at) WHERE read_at IS NULL`,
		`INSERT INTO notification_messages (id, kind, title, body, entity_type, entity_id, created_at)
			SELECT id, kind, title, body, entity_type, entity_id, created_at FROM notifications`,
		`INSERT INTO notification_recipients (user_id, created_at, message_id, read_at)
			SELECT user_id, created_at, id, read_at FROM notifications`,
		`DROP TABLE notifications`,
	}
}
