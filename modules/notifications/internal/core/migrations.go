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
	)}, {Version: 2, Name: "messages to audiences, recipient rows and read marks", Up: migrate.PerDialect(
		messagesTables(" WITHOUT ROWID"), messagesTables(""))}}
}

// messagesTables store a notification once, as a message, and whom it is
// for without a row per recipient: the holders of the roles it names are
// an audience — the sorted set of their ids, stored once under its hash and
// shared by every message to the same people — minus the one user the
// message leaves out (the actor); users named besides get a recipient row.
// A move that tells 300 role holders writes one message row (and, the
// first time those 300 are an audience, their 300 audience rows), instead
// of 300 rows scattered over every user's pages. Read marks are rows of
// their own, written when a user reads. The rows of version 1 move over,
// each its own message with its id kept, a recipient row for its user and a
// read mark when it was read, and the old table goes.
func messagesTables(withoutRowID string) []string {
	return []string{
		`CREATE TABLE notification_messages (
			id VARCHAR(36) PRIMARY KEY,
			kind VARCHAR(64) NOT NULL,
			title TEXT NOT NULL,
			body TEXT NOT NULL,
			entity_type VARCHAR(64) NOT NULL,
			entity_id VARCHAR(36) NOT NULL,
			audience_id VARCHAR(64) NULL,
			except_user_id VARCHAR(36) NULL,
			created_at TIMESTAMP NOT NULL)`,
		// An audience's messages in time order: a user's list is the
		// messages of the audiences they are in, and their recipient rows.
		`CREATE INDEX ix_notification_messages_audience ON notification_messages (audience_id, created_at) WHERE audience_id IS NOT NULL`,
		// The retention job.
		`CREATE INDEX ix_notification_messages_created ON notification_messages (created_at)`,
		`CREATE TABLE notification_audiences (
			audience_id VARCHAR(64) NOT NULL,
			user_id VARCHAR(36) NOT NULL,
			PRIMARY KEY (audience_id, user_id))` + withoutRowID,
		// The audiences a user is in.
		`CREATE INDEX ix_notification_audiences_user ON notification_audiences (user_id, audience_id)`,
		`CREATE TABLE notification_recipients (
			user_id VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL,
			message_id VARCHAR(36) NOT NULL,
			PRIMARY KEY (user_id, created_at, message_id))` + withoutRowID,
		`CREATE TABLE notification_reads (
			user_id VARCHAR(36) NOT NULL,
			message_id VARCHAR(36) NOT NULL,
			read_at TIMESTAMP NOT NULL,
			created_at TIMESTAMP NOT NULL,
			PRIMARY KEY (user_id, message_id))` + withoutRowID,
		`INSERT INTO notification_messages (id, kind, title, body, entity_type, entity_id, created_at)
			SELECT id, kind, title, body, entity_type, entity_id, created_at FROM notifications`,
		`INSERT INTO notification_recipients (user_id, created_at, message_id)
			SELECT user_id, created_at, id FROM notifications`,
		`INSERT INTO notification_reads (user_id, message_id, read_at, created_at)
			SELECT user_id, id, read_at, created_at FROM notifications WHERE read_at IS NOT NULL`,
		`DROP TABLE notifications`,
	}
}
