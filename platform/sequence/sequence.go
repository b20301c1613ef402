// Package sequence allocates per-prefix counters for generated codes
// (contract codes DA001-HDTP-001, voucher codes PE/2026/A/001): one row per
// prefix in a table the owning module creates with columns prefix (primary
// key) and last_seq.
package sequence

import (
	"context"
	"fmt"

	"gorm.io/plugin/dbresolver"

	"github.com/contractflow/contractflow/platform/db"
)

// Next increments prefix's counter in table and returns the new value, in
// the transaction riding in ctx. The single upsert takes the row lock on
// Postgres (and SQLite has one writer), so concurrent callers on one or
// several nodes never get the same value; a rolled-back transaction gives
// its number back.
func Next(ctx context.Context, database *db.DB, table, prefix string) (int, error) {
	var seq int
	err := database.Conn(ctx).Clauses(dbresolver.Write).Raw(
		`INSERT INTO `+table+` (prefix, last_seq) VALUES (?, 1)
		 ON CONFLICT (prefix) DO UPDATE SET last_seq = `+table+`.last_seq + 1
		 RETURNING last_seq`, prefix).Scan(&seq).Error
	if err != nil {
		return 0, fmt.Errorf("next number of %s in %s: %w", prefix, table, err)
	}
	return seq, nil
}
