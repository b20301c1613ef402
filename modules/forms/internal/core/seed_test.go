package core

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/contractflow/contractflow/modules/forms/internal/render"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/storage"
	"github.com/contractflow/contractflow/platform/testkit"
	"github.com/contractflow/contractflow/seeds/templates"
)

// newService builds the service on a fresh database of the driver, with
// its migrations applied and blob storage in a temporary folder.
func newService(t *testing.T, driver string) (*Service, string) {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "forms.db")
	if driver == "postgres" {
		dsn = testkit.FreshSchema(t)
	}
	d, err := db.Open(db.Config{Driver: driver, DSN: dsn, MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, err := migrate.Up(context.Background(), d, []migrate.Set{{Module: "forms", Migrations: Migrations()}}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	blobs, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Service{db: d, store: &store{db: d}, blobs: blobs, clock: clock.NewManual(time.Now()),
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), maxBytes: 1 << 20, limits: render.DefaultLimits}, root
}

// TestSeedWithoutFiles seeds from a set of files that lacks some templates
// and holds a broken one: those are seeded switched off and without a
// file; seeding again inserts nothing; and a later seed with the full set
// does not touch the rows that already exist.
func TestSeedWithoutFiles(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		svc, root := newService(t, driver)
		ctx := context.Background()
		hdtp, err := fs.ReadFile(templates.Files, "HDTP-01.docx")
		if err != nil {
			t.Fatal(err)
		}
		partial := fstest.MapFS{
			"HDTP-01.docx": {Data: hdtp},
			"NCC-01.docx":  {Data: []byte("not a document")},
		}
		if err := svc.seed(ctx, partial); err != nil {
			t.Fatal(err)
		}
		check := func(wantActive map[string]bool) {
			t.Helper()
			rows, err := svc.store.all(ctx, filter{}, byCode())
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(seedTemplates) {
				t.Fatalf("%d rows, want %d", len(rows), len(seedTemplates))
			}
			for i := range rows {
				r := &rows[i]
				d, err := svc.loadDTO(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				want := wantActive[r.FormCode]
				if d.IsActive != want || d.FileAvailable != want || r.IsActive != want || (r.StoragePath != "") != want {
					t.Errorf("%s: active %v (row %v), file %v, key %q; want %v", r.FormCode, d.IsActive, r.IsActive, d.FileAvailable, r.StoragePath, want)
				}
			}
		}
		check(map[string]bool{"HDTP-01": true})
		first, _ := svc.store.all(ctx, filter{}, byCode())

		if err := svc.seed(ctx, partial); err != nil {
			t.Fatal(err)
		}
		if err := svc.Seed(ctx); err != nil {
			t.Fatal(err)
		}
		check(map[string]bool{"HDTP-01": true})
		again, _ := svc.store.all(ctx, filter{}, byCode())
		for i := range first {
			if first[i].ID != again[i].ID || first[i].StoragePath != again[i].StoragePath || first[i].Version != again[i].Version {
				t.Errorf("seeding again changed %s", first[i].FormCode)
			}
		}
		// Only HDTP-01's file was stored.
		n := 0
		_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, _ error) error {
			if d != nil && !d.IsDir() {
				n++
			}
			return nil
		})
		if n != 1 {
			t.Errorf("%d files stored, want 1", n)
		}
	})
}

// byCode is a list request in form-code order.
func byCode() paging.Request {
	req, err := paging.Parse(func(string) string { return "" }, TemplateSpec)
	if err != nil {
		panic(err)
	}
	return req
}
