package masterdata_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// lookupOf is the instance's masterdata.Lookup.
func lookupOf(t testing.TB, app *testkit.App) masterdata.Lookup {
	t.Helper()
	l, err := kernel.Need[masterdata.Lookup](app.Kernel.App())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// refsOf is the batch lookup of a kind (Suppliers, Projects, Departments).
func refsOf(l masterdata.Lookup, k kind) func(ctx context.Context, ids []string) (map[string]masterdata.Ref, error) {
	switch k.kind {
	case masterdata.KindSupplier:
		return l.Suppliers
	case masterdata.KindProject:
		return l.Projects
	}
	return l.Departments
}

// searchOf is the search of a kind's ids (nil for departments).
func searchOf(l masterdata.Lookup, k kind) func(ctx context.Context, text string, limit int) ([]string, error) {
	switch k.kind {
	case masterdata.KindSupplier:
		return l.SearchSupplierIDs
	case masterdata.KindProject:
		return l.SearchProjectIDs
	}
	return nil
}

// The lookups and searches answer from memory, and the next read after a
// create, a rename, a deactivation or a delete sees it.
func TestLookupCachesSeeChanges(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, app *testkit.App, admin string, k kind) {
		checkLookupSeesChanges(t, app, app, admin, k, func(t *testing.T, what string, cond func() bool) {
			if !cond() {
				t.Errorf("%s: not seen by the next read", what)
			}
		})
	})
}

// A second node on the same Postgres database sees the changes made on the
// first within the cache bus's bound, polled without sleeping longer than
// needed.
func TestLookupCachesAcrossNodes(t *testing.T) {
	t.Parallel()
	if len(testkit.Drivers()) < 2 {
		t.Skip("Postgres only: set " + testkit.PostgresDSNEnv)
	}
	dsn := testkit.FreshSchema(t)
	a, admin := start(t, "postgres", testkit.WithConfig("database.dsn", dsn))
	b, _ := start(t, "postgres", testkit.WithConfig("database.dsn", dsn))
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			checkLookupSeesChanges(t, a, b, admin, k, func(t *testing.T, what string, cond func() bool) {
				deadline := time.Now().Add(3 * time.Second) // the bound is 2 s with a silently dead listener; ms otherwise
				for !cond() {
					if time.Now().After(deadline) {
						t.Fatalf("%s: not seen by the other node within 3 s", what)
					}
					time.Sleep(5 * time.Millisecond)
				}
			})
		})
	}
}

// checkLookupSeesChanges changes a record on app a and checks, with seen,
// that b's lookups (b may be a) answer the change, each read made first so
// that the cache holds the old answer.
func checkLookupSeesChanges(t *testing.T, a, b *testkit.App, admin string, k kind, seen func(t *testing.T, what string, cond func() bool)) {
	ctx := t.Context()
	refs := refsOf(lookupOf(t, b), k)
	read := func(id string) (masterdata.Ref, bool) {
		got, err := refs(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := got[id]
		return r, ok
	}
	search := searchOf(lookupOf(t, b), k)
	found := func(text, id string) bool {
		if search == nil {
			return id != "" // nothing to search: what the check expects
		}
		ids, err := search(ctx, text, 500)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ids, id)
	}
	code := newCode("CACHE")
	renamed := "Renamed " + code
	found(code, "") // cached: nothing holds the code yet
	found(renamed, "")
	rec := create(t, a, admin, k.path, k.body(code))
	id := rec["id"].(string)
	seen(t, "a new record", func() bool { _, ok := read(id); return ok })
	seen(t, "a new record found by a search", func() bool { return found(code, id) })

	body := k.body(code)
	body["name"], body["version"] = "Renamed "+code, rec["version"]
	body["isActive"] = false
	r := do(t, a, "PUT", k.path+"/"+id, admin, body)
	if r.Status != 200 {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	seen(t, "a rename and deactivation", func() bool {
		ref, ok := read(id)
		return ok && ref.Name == "Renamed "+code && !ref.IsActive
	})
	seen(t, "a rename found by a search", func() bool { return found(renamed, id) })

	r = do(t, a, "DELETE", k.path+"/"+id, admin, nil)
	if r.Status != 204 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	seen(t, "a delete", func() bool { _, ok := read(id); return !ok })
	seen(t, "a delete no search finds", func() bool { return search == nil || !found(code, id) })
}

// Renames racing reads (run with -race): once the renames stop, the lookup
// answers the last name, never one a read loaded before a later rename.
func TestLookupCacheUnderConcurrentChanges(t *testing.T) {
	t.Parallel()
	testkit.ForEachDriver(t, func(t *testing.T, driver string) {
		app, admin := start(t, driver)
		k := kinds[0]
		lookup := lookupOf(t, app)
		code := newCode("RACE")
		rec := create(t, app, admin, k.path, k.body(code))
		id := rec["id"].(string)
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for range 4 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := lookup.Suppliers(context.Background(), []string{id}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		version := rec["version"]
		last := ""
		for i := range 15 {
			body := k.body(code)
			last = fmt.Sprintf("Name %d", i)
			body["name"], body["version"] = last, version
			r := do(t, app, "PUT", k.path+"/"+id, admin, body)
			if r.Status != 200 {
				t.Fatalf("PUT: %d %s", r.Status, r.Body)
			}
			var out record
			r.JSON(t, &out)
			version = out["version"]
		}
		close(stop)
		readers.Wait()
		got, err := lookup.Suppliers(t.Context(), []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if got[id].Name != last {
			t.Errorf("after the renames the lookup answers %q, want %q", got[id].Name, last)
		}
	})
}
