package core

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
)

// BenchmarkFanOut stores one notification for the 250 holders of a phase's
// inbox roles and its drafter per operation, in its own transaction, on a
// SQLite file: the write a contract move makes.
func BenchmarkFanOut(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(db.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "cf.db"), MaxOpenConns: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	if _, err := migrate.Up(ctx, d, []migrate.Set{{Module: "notifications", Migrations: Migrations()}}); err != nil {
		b.Fatal(err)
	}
	s := &store{db: d}
	users := make([]string, 250)
	for i := range users {
		users[i] = uuid.NewString()
	}
	slices.Sort(users)
	at := time.Now().UTC()
	b.ResetTimer()
	for i := range b.N {
		m := Message{ID: uuid.Must(uuid.NewV7()).String(), Kind: "contract.transitioned", Title: "Contract moved to DangDamPhan",
			Body: fmt.Sprintf("%q moved from DangSoanThao to DangDamPhan.", "Hợp đồng thi công móng"), EntityType: "contract",
			EntityID: uuid.NewString(), CreatedAt: at.Add(time.Duration(i) * time.Microsecond)}
		err := d.InTx(ctx, func(ctx context.Context) (err error) {
			if m.AudienceID, err = s.audience(ctx, []string{"Finance"}, users); err != nil {
				return err
			}
			return s.insert(ctx, m, []string{uuid.NewString()})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// An audience's id is the hash of its NUL-terminated sorted ids: stored
// audiences keep their ids whatever computes it.
func TestAudienceIDIsStable(t *testing.T) {
	if got := audienceID([]string{"a", "b"}); got != "8fb20ef63ced4145fc2e983ffe597d1dcff39154c3bf21f0fa9dde6a0c50fdc9" {
		t.Fatalf("audienceID(a, b) = %s, want sha256 of \"a\\0b\\0\"", got)
	}
}
