// Package migrate applies each module's numbered, forward-only migrations and
// records them in schema_migrations. A run is one transaction under a database
// lock, so nodes that start together on one Postgres database apply every
// migration exactly once: the first takes the lock and migrates, the others
// wait, then find nothing left to do.
package migrate

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
)

// Migration is one schema change. Up receives the run's transaction; it must
// use frozen structs or SQL, never the module's live models, so later model
// changes cannot rewrite history.
type Migration struct {
	Version int
	Name    string
	Up      func(ctx context.Context, tx *gorm.DB) error
}

// Set is one module's migrations, in version order.
type Set struct {
	Module     string
	Migrations []Migration
}

// SQL returns an Up that executes portable statements in order.
func SQL(statements ...string) func(context.Context, *gorm.DB) error {
	return func(_ context.Context, tx *gorm.DB) error {
		for _, s := range statements {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	}
}

// PerDialect returns an Up that executes the statements written for the
// database's engine; use it only where the engines' SQL truly differs.
func PerDialect(sqlite, postgres []string) func(context.Context, *gorm.DB) error {
	return func(ctx context.Context, tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			return SQL(postgres...)(ctx, tx)
		}
		return SQL(sqlite...)(ctx, tx)
	}
}

// Record is one row of schema_migrations.
type Record struct {
	Module    string    `gorm:"primaryKey"`
	Version   int       `gorm:"primaryKey"`
	Name      string    `gorm:"not null"`
	AppliedAt time.Time `gorm:"not null"`
}

func (Record) TableName() string { return "schema_migrations" }

// Status is one migration and whether it is applied.
type Status struct {
	Module    string
	Version   int
	Name      string
	AppliedAt *time.Time
}

// Up applies every pending migration of sets, in the order given, and returns
// what it applied.
func Up(ctx context.Context, database *db.DB, sets []Set) ([]Status, error) {
	if err := check(sets); err != nil {
		return nil, err
	}
	var applied []Status
	err := database.InTx(ctx, func(ctx context.Context) error {
		tx := database.Conn(ctx)
		if err := lock(tx, database.Dialect()); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if err := ensureTable(tx); err != nil {
			return err
		}
		done, err := appliedVersions(tx)
		if err != nil {
			return err
		}
		for _, set := range sets {
			for _, m := range set.Migrations {
				if done[key(set.Module, m.Version)] {
					continue
				}
				if err := m.Up(ctx, tx); err != nil {
					return fmt.Errorf("migration %s %04d %s: %w", set.Module, m.Version, m.Name, err)
				}
				now := time.Now().UTC()
				if err := tx.Create(&Record{Module: set.Module, Version: m.Version, Name: m.Name, AppliedAt: now}).Error; err != nil {
					return fmt.Errorf("record migration %s %04d: %w", set.Module, m.Version, err)
				}
				applied = append(applied, Status{Module: set.Module, Version: m.Version, Name: m.Name, AppliedAt: &now})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// List reports every migration of sets with its applied time, if any.
func List(ctx context.Context, database *db.DB, sets []Set) ([]Status, error) {
	tx := database.Conn(ctx)
	if err := ensureTable(tx); err != nil {
		return nil, err
	}
	var records []Record
	if err := tx.Find(&records).Error; err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	at := map[string]time.Time{}
	for _, r := range records {
		at[key(r.Module, r.Version)] = r.AppliedAt
	}
	var out []Status
	for _, set := range sets {
		for _, m := range set.Migrations {
			s := Status{Module: set.Module, Version: m.Version, Name: m.Name}
			if t, ok := at[key(set.Module, m.Version)]; ok {
				s.AppliedAt = &t
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// lock serialises migration runs. On Postgres it is a transaction-scoped
// advisory lock keyed by the current schema (so test schemas migrate in
// parallel); on SQLite the writer's BEGIN IMMEDIATE already holds the only
// write lock of the file.
func lock(tx *gorm.DB, d db.Dialect) error {
	if d != db.Postgres {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock(7311, hashtext(current_schema()))").Error
}

func ensureTable(tx *gorm.DB) error {
	err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		module VARCHAR(64) NOT NULL,
		version INTEGER NOT NULL,
		name VARCHAR(200) NOT NULL,
		applied_at TIMESTAMP NOT NULL,
		PRIMARY KEY (module, version))`).Error
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return nil
}

func appliedVersions(tx *gorm.DB) (map[string]bool, error) {
	var records []Record
	if err := tx.Select("module", "version").Find(&records).Error; err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	done := make(map[string]bool, len(records))
	for _, r := range records {
		done[key(r.Module, r.Version)] = true
	}
	return done, nil
}

func check(sets []Set) error {
	seen := map[string]bool{}
	for _, set := range sets {
		if seen[set.Module] {
			return fmt.Errorf("migrations of module %s listed twice", set.Module)
		}
		seen[set.Module] = true
		for i, m := range set.Migrations {
			if m.Version != i+1 {
				return fmt.Errorf("module %s: migration %q has version %d, want %d (versions run 1, 2, 3, …)", set.Module, m.Name, m.Version, i+1)
			}
			if m.Up == nil || m.Name == "" {
				return fmt.Errorf("module %s: migration %d needs a name and an Up", set.Module, m.Version)
			}
		}
	}
	return nil
}

func key(module string, version int) string { return fmt.Sprintf("%s/%d", module, version) }
