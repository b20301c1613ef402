package masterdata_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity/identitytest"
	"github.com/contractflow/contractflow/modules/masterdata"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/events"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// referrer stands in for contracts and procurement: a module that requires
// masterdata, keeps its own references, and vetoes deleting what it uses.
type referrer struct {
	mu     sync.Mutex
	inUse  map[string]string // id → what uses it
	events []masterdata.Deleted
	fails  []string // what the handler saw that it should not have
}

var (
	_ kernel.Provisioner   = (*referrer)(nil)
	_ kernel.EventDeclarer = (*referrer)(nil)
)

func (*referrer) Info() kernel.Info {
	return kernel.Info{Name: "referrer", Requires: []string{"masterdata"}}
}

func (*referrer) Events() kernel.Events {
	return kernel.Events{Consumes: []string{masterdata.TopicDeleted}}
}

func (m *referrer) Provision(_ context.Context, app *kernel.App) error {
	lookup, err := kernel.Need[masterdata.Lookup](app)
	if err != nil {
		return err
	}
	app.Bus.Subscribe(masterdata.TopicDeleted, events.InTx, func(ctx context.Context, e events.Event) error {
		d := e.(masterdata.Deleted)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.events = append(m.events, d)
		// Inside the delete's transaction the record is already gone.
		find := map[masterdata.Kind]func(context.Context, string) (masterdata.Ref, error){
			masterdata.KindSupplier: lookup.Supplier, masterdata.KindProject: lookup.Project, masterdata.KindDepartment: lookup.Department,
		}[d.Kind]
		if _, err := find(ctx, d.ID); apperr.KindOf(err) != apperr.KindNotFound {
			m.fails = append(m.fails, fmt.Sprintf("%s %s: lookup inside the delete gave %v", d.Kind, d.ID, err))
		}
		if what, ok := m.inUse[d.ID]; ok {
			return masterdata.InUse(what)
		}
		return nil
	})
	return nil
}

func (m *referrer) use(id, what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if what == "" {
		delete(m.inUse, id)
		return
	}
	m.inUse[id] = what
}

// withReferrer loads every registered module plus ref.
func withReferrer(ref *referrer) testkit.Option {
	return testkit.WithModules(append(kernel.Registered(), func() kernel.Module { return ref })...)
}

// A subscriber's veto rolls the delete back and answers 409 in_use.
func TestDeleteVetoedWhileInUse(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		ref := &referrer{inUse: map[string]string{}}
		app := identitytest.Start(t, d, withReferrer(ref))
		admin := identitytest.AdminToken(t, app)
		for _, k := range kinds {
			t.Run(k.name, func(t *testing.T) {
				used := create(t, app, admin, k.path, k.body(newCode("USE-")))
				free := create(t, app, admin, k.path, k.body(newCode("USE-")))
				usedPath := k.path + "/" + used["id"].(string)
				ref.use(used["id"].(string), "Contract HDTP-2026-001 uses this record.")

				r := do(t, app, "DELETE", usedPath, admin, nil)
				if r.Status != 409 {
					t.Fatalf("delete of a used record: %d %s", r.Status, r.Body)
				}
				if p := r.Problem(t); p.Code != "in_use" || p.Detail != "Contract HDTP-2026-001 uses this record." {
					t.Errorf("problem %+v", p)
				}
				if got := get(t, app, admin, usedPath); got["version"] != 1.0 {
					t.Errorf("after the veto: %v", got)
				}
				if p := list(t, app, admin, k.path+"?search="+used["code"].(string)); p.TotalCount != 1 {
					t.Errorf("a vetoed delete hid the record from the list")
				}

				if r := do(t, app, "DELETE", k.path+"/"+free["id"].(string), admin, nil); r.Status != 204 {
					t.Errorf("delete of an unused record: %d %s", r.Status, r.Body)
				}
				ref.use(used["id"].(string), "")
				if r := do(t, app, "DELETE", usedPath, admin, nil); r.Status != 204 {
					t.Errorf("delete once no longer used: %d %s", r.Status, r.Body)
				}

				ref.mu.Lock()
				defer ref.mu.Unlock()
				want := masterdata.Deleted{Kind: k.kind, ID: free["id"].(string), Code: free["code"].(string)}
				gotFree := false
				for _, e := range ref.events {
					gotFree = gotFree || e == want
				}
				if !gotFree {
					t.Errorf("no event %+v among %+v", want, ref.events)
				}
				for _, f := range ref.fails {
					t.Error(f)
				}
			})
		}
	})
}

func TestLookup(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		lookup, err := kernel.Need[masterdata.Lookup](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		type one func(context.Context, string) (masterdata.Ref, error)
		type many func(context.Context, []string) (map[string]masterdata.Ref, error)
		for i, c := range []struct {
			one  one
			many many
		}{{lookup.Supplier, lookup.Suppliers}, {lookup.Project, lookup.Projects}, {lookup.Department, lookup.Departments}} {
			k := kinds[i]
			t.Run(k.name, func(t *testing.T) {
				a := create(t, app, admin, k.path, k.body(newCode("LK-")))
				b := create(t, app, admin, k.path, with(k.body(newCode("LK-")), "isActive", false))
				gone := create(t, app, admin, k.path, k.body(newCode("LK-")))
				do(t, app, "DELETE", k.path+"/"+gone["id"].(string), admin, nil)
				id := func(r record) string { return r["id"].(string) }

				ids := []string{id(a), id(b), id(gone), uuid.NewString(), "not-a-uuid", "", id(a)}
				for range 1000 { // more ids than one query takes
					ids = append(ids, uuid.NewString())
				}
				refs, err := c.many(ctx, ids)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]masterdata.Ref{
					id(a): {ID: id(a), Code: a["code"].(string), Name: a["name"].(string), IsActive: true},
					id(b): {ID: id(b), Code: b["code"].(string), Name: b["name"].(string), IsActive: false},
				}
				if fmt.Sprint(refs) != fmt.Sprint(want) {
					t.Errorf("batch lookup %v, want %v", refs, want)
				}
				if refs, err := c.many(ctx, nil); err != nil || len(refs) != 0 {
					t.Errorf("empty batch: %v, %v", refs, err)
				}
				// Inside a transaction (share-locked on Postgres).
				err = app.Kernel.App().DB.InTx(ctx, func(ctx context.Context) error {
					refs, err := c.many(ctx, []string{id(a)})
					if err == nil && len(refs) != 1 {
						err = fmt.Errorf("in a transaction: %v", refs)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}

				if r, err := c.one(ctx, id(b)); err != nil || r != want[id(b)] {
					t.Errorf("one %v, %v; want %v", r, err, want[id(b)])
				}
				for _, missing := range []string{id(gone), uuid.NewString(), "not-a-uuid"} {
					if _, err := c.one(ctx, missing); apperr.KindOf(err) != apperr.KindNotFound {
						t.Errorf("lookup of %q: %v, want not found", missing, err)
					}
				}
			})
		}
	})
}

// SearchSupplierIDs finds live suppliers as the list's search does: every
// word, accents ignored, deleted ones left out, at most limit.
func TestSearchSupplierIDs(t *testing.T) {
	testkit.ForEachDriver(t, func(t *testing.T, d string) {
		app, admin := start(t, d)
		lookup, err := kernel.Need[masterdata.Lookup](app.Kernel.App())
		if err != nil {
			t.Fatal(err)
		}
		body := func(code, name string) map[string]any {
			return map[string]any{"code": code, "name": name, "supplierType": "Material"}
		}
		thep := create(t, app, admin, "/api/suppliers", body(newCode("S-"), "Công ty Thép Hòa Phát"))
		thep2 := create(t, app, admin, "/api/suppliers", body(newCode("S-"), "Thép Việt Nhật"))
		gone := create(t, app, admin, "/api/suppliers", body(newCode("S-"), "Thép Cũ"))
		create(t, app, admin, "/api/suppliers", body(newCode("S-"), "Xi măng Hà Tiên"))
		do(t, app, "DELETE", "/api/suppliers/"+gone["id"].(string), admin, nil)

		ctx := t.Context()
		cases := []struct {
			text  string
			limit int
			want  []string
		}{
			{"thep", 10, []string{thep["id"].(string), thep2["id"].(string)}},
			{"THÉP hòa", 10, []string{thep["id"].(string)}},
			{"thep", 1, nil}, // one of the two
			{"nothing-like-it", 10, []string{}},
			{"", 10, []string{}},
		}
		for _, c := range cases {
			got, err := lookup.SearchSupplierIDs(ctx, c.text, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if len(got) != c.limit {
					t.Errorf("%q limit %d: %v", c.text, c.limit, got)
				}
				continue
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%q: %v, want %v", c.text, got, c.want)
			}
		}
	})
}
