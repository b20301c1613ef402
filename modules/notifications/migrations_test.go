package notifications_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/notifications"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/testkit"
)

// Migration 2 moves the rows of the one-row-per-recipient table into a
// message, a recipient row and a read mark (when read) each, keeping ids
// and times.
func TestMigrationKeepsNotifications(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		dsn := filepath.Join(t.TempDir(), "cf.db")
		if driver == "postgres" {
			dsn = testkit.FreshSchema(t)
		}
		d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		ctx := context.Background()
		all := notifications.New().Migrations()
		if _, err := migrate.Up(ctx, d, []migrate.Set{{Module: "notifications", Migrations: all[:1]}}); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
		read := at.Add(time.Hour)
		conn := d.Conn(ctx)
		for _, row := range []struct {
			id, user string
			readAt   *time.Time
		}{{"0193a000-0000-7000-8000-000000000001", "u1", nil}, {"0193a000-0000-7000-8000-000000000002", "u2", &read}} {
			if err := conn.Exec(`INSERT INTO notifications (id, user_id, kind, title, body, entity_type, entity_id, read_at, created_at)
				VALUES (?, ?, 'contract.transitioned', 'T', 'B', 'contract', 'c1', ?, ?)`, row.id, row.user, row.readAt, at).Error; err != nil {
				t.Fatal(err)
			}
		}
		if _, err := migrate.Up(ctx, d, []migrate.Set{{Module: "notifications", Migrations: all}}); err != nil {
			t.Fatal(err)
		}
		var got []struct {
			ID, UserID, Kind, Title string
			ReadAt                  *time.Time
			CreatedAt               time.Time
		}
		if err := conn.Raw(`SELECT m.id, r.user_id, m.kind, m.title, rd.read_at, r.created_at
			FROM notification_recipients r JOIN notification_messages m ON m.id = r.message_id
			LEFT JOIN notification_reads rd ON rd.user_id = r.user_id AND rd.message_id = m.id ORDER BY m.id`).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].UserID != "u1" || got[0].ReadAt != nil || got[1].UserID != "u2" || got[1].ReadAt == nil ||
			!got[1].ReadAt.Equal(read) || !got[0].CreatedAt.Equal(at) || got[0].Kind != "contract.transitioned" || got[0].Title != "T" {
			t.Fatalf("after migration: %+v", got)
		}
		if conn.Migrator().HasTable("notifications") {
			t.Error("the old table is still there")
		}
	})
}
