package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/paging"
	"github.com/contractflow/contractflow/platform/search"
)

// spec describes one resource to the generic code.
type spec struct {
	Kind    Kind
	Title   string      // "Supplier", in messages
	Path    string      // "/api/suppliers"
	Menu    kernel.Menu // its key names the policies: "<Key>.<Read|Create|Update|Delete>"
	List    paging.Spec // the sortable fields
	Filters []filter
}

// filter is one equality filter of a list: a boolean, or one of Values.
type filter struct {
	Param  string   // the query parameter, e.g. "supplierType"
	Column string   // the column it compares
	Values []string // the allowed values; nil for a boolean
}

// entity is what the generic code needs of a model: its shared Record and
// the texts its search matches besides code and name.
type entity[T any] interface {
	*T
	record() *Record
	searchParts() []string
}

// input is what the generic code needs of a request body.
type input[In, T any] interface {
	*In
	head() *Head
	// prepare normalises the resource's own fields and adds the field
	// errors its validate tags cannot express.
	prepare(ctx context.Context, s *Service, f apperr.Fields) error
	// applyTo copies every editable field into t: PUT is a full update.
	applyTo(t *T)
}

// resource is the one implementation of list, get, create, update and
// delete that suppliers, projects and departments share.
type resource[T, In any, PT entity[T], PI input[In, T]] struct {
	spec
	svc   *Service
	store store[T, PT]
	// cached holds the Refs other modules look up, and the zero Ref for
	// ids that are not live (deleted or unknown), so an old contract's
	// deleted supplier is not asked for again either.
	cached *cache.Map[Ref]
	// searched holds the ids another module's search found (a contracts
	// list searches supplier names on every request), forgotten on any
	// change of the table.
	searched *cache.Map[[]string]
	// extra adds other modules' facts to GET of one record; nil for none.
	extra func(ctx context.Context, id string) (map[string]any, error)
}

func newResource[T, In any, PT entity[T], PI input[In, T]](s *Service, sp spec, indexed map[string]bool) *resource[T, In, PT, PI] {
	table := any(new(T)).(interface{ TableName() string }).TableName()
	return &resource[T, In, PT, PI]{spec: sp, svc: s, store: store[T, PT]{db: s.db, table: table, indexed: indexed[table]},
		cached:   cache.New[Ref](s.caches, "masterdata."+table, maxCachedRefs),
		searched: cache.New[[]string](s.caches, "masterdata."+table+".search", maxCachedSearches)}
}

// maxCachedRefs bounds each resource's cache of Refs: these tables hold
// thousands of rows (the benchmark's 100 000 suppliers are an outlier whose
// pages still find their few dozen suppliers cached).
const maxCachedRefs = 50_000

// maxCachedSearches bounds each resource's cache of search results (up to
// 500 ids each).
const maxCachedSearches = 64

// refs resolves ids to live Refs from memory, reading the missing ones in
// one query. Inside a transaction on Postgres it reads the database, which
// share-locks the rows found until the transaction ends (see store.refs).
func (r *resource[T, In, PT, PI]) refs(ctx context.Context, ids []string) (map[string]Ref, error) {
	if r.svc.db.Dialect() == db.Postgres && db.InTransaction(ctx) {
		return r.store.refs(ctx, ids)
	}
	got, err := r.cached.Load(ctx, ids, func(ctx context.Context, missing []string) (map[string]Ref, error) {
		found, err := r.store.refs(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, id := range missing {
			if _, ok := found[id]; !ok {
				found[id] = Ref{} // not live: cached as such
			}
		}
		return found, nil
	})
	if err != nil {
		return nil, err
	}
	for id, ref := range got { // Load's map is the caller's
		if ref.ID == "" {
			delete(got, id)
		}
	}
	return got, nil
}

// searchIDs returns the ids of up to limit live records matching every
// word of text, from memory once searched.
func (r *resource[T, In, PT, PI]) searchIDs(ctx context.Context, text string, limit int) ([]string, error) {
	words := search.Words(text)
	if len(words) == 0 {
		return nil, nil
	}
	key := fmt.Sprintf("%d %s", limit, strings.Join(words, " "))
	got, err := r.searched.Load(ctx, []string{key}, func(ctx context.Context, _ []string) (map[string][]string, error) {
		ids, err := r.store.search(ctx, words, limit)
		return map[string][]string{key: ids}, err
	})
	return got[key], err
}

// changed forgets, once the transaction commits, the cached Refs of ids
// (all of them when none) and every cached search, on every node.
func (r *resource[T, In, PT, PI]) changed(ctx context.Context, ids ...string) error {
	if err := r.cached.Changed(ctx, ids...); err != nil {
		return err
	}
	return r.searched.Changed(ctx)
}

func (r *resource[T, In, PT, PI]) notFound() error { return apperr.NotFound(r.Title) }

func (r *resource[T, In, PT, PI]) duplicate(code string) error {
	return apperr.Conflict("duplicate_code",
		fmt.Sprintf("Another %s already has the code %s; choose another code.", strings.ToLower(r.Title), code))
}

// validate normalises in and reports every invalid field at once.
func (r *resource[T, In, PT, PI]) validate(ctx context.Context, in PI) error {
	f := apperr.Fields{}
	checkHead(in.head(), f)
	if err := in.prepare(ctx, r.svc, f); err != nil {
		return err
	}
	if err := mergeFields(f, httpx.Validate(in)); err != nil {
		return err
	}
	return f.Err()
}

// newRow starts a row created by actor ("" for the system) at now.
func newRow[T any, PT entity[T]](actor string, now time.Time) *T {
	t := new(T)
	*PT(t).record() = Record{ID: uuid.Must(uuid.NewV7()).String(), Version: 1,
		CreatedAt: now, CreatedBy: actorRef(actor), UpdatedAt: now, UpdatedBy: actorRef(actor)}
	return t
}

func actorRef(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// fill copies a validated input into t and refreshes its search text.
func (r *resource[T, In, PT, PI]) fill(t PT, in PI) {
	h, rec := in.head(), t.record()
	rec.Code, rec.Name = h.Code, h.Name
	rec.IsActive = h.IsActive == nil || *h.IsActive
	in.applyTo((*T)(t))
	rec.SearchText = search.Text(append([]string{rec.Code, rec.Name}, t.searchParts()...)...)
}

// get returns a live record; unknown, malformed and deleted ids are 404.
func (r *resource[T, In, PT, PI]) get(ctx context.Context, id string) (*T, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, r.notFound()
	}
	t, err := r.store.byID(ctx, id)
	if db.IsNotFound(err) {
		return nil, r.notFound()
	}
	return t, err
}

// listQuery is a validated list request with its filters and search words.
type listQuery struct {
	paging.Request
	Where []condition
	Words []string
}

type condition struct {
	Column string
	Value  any
}

func (r *resource[T, In, PT, PI]) list(ctx context.Context, q listQuery) (paging.Page[T], error) {
	rows, total, err := r.store.list(ctx, q)
	if err != nil {
		return paging.Page[T]{}, err
	}
	return paging.NewPage(rows, q.Request, total), nil
}

// create inserts a record; the partial unique index on live codes decides
// between concurrent creates of one code.
func (r *resource[T, In, PT, PI]) create(ctx context.Context, actor string, in PI) (*T, error) {
	if err := r.validate(ctx, in); err != nil {
		return nil, err
	}
	t := newRow[T, PT](actor, r.svc.now())
	r.fill(t, in)
	err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
		if err := r.store.insert(ctx, t); err != nil {
			return err
		}
		return r.changed(ctx, PT(t).record().ID)
	})
	if db.IsUniqueViolation(err) {
		return nil, r.duplicate(in.head().Code)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// update replaces the editable fields. It writes only over the version it
// read, so a change made meanwhile is never lost: that, or a version in the
// body other than the current one, answers 409 stale_version.
func (r *resource[T, In, PT, PI]) update(ctx context.Context, actor, id string, in PI) (*T, error) {
	cur, err := r.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := r.validate(ctx, in); err != nil {
		return nil, err
	}
	read := PT(cur).record().Version
	if v := in.head().Version; v != nil && *v != read {
		return nil, apperr.StaleVersion()
	}
	next := *cur
	rec := PT(&next).record()
	rec.Version, rec.UpdatedAt, rec.UpdatedBy = read+1, r.svc.now(), actorRef(actor)
	r.fill(&next, in)
	var ok bool
	err = r.svc.db.InTx(ctx, func(ctx context.Context) error {
		if ok, err = r.store.update(ctx, &next, read); err != nil || !ok {
			return err
		}
		return r.changed(ctx, id)
	})
	switch {
	case db.IsUniqueViolation(err):
		return nil, r.duplicate(rec.Code)
	case err != nil:
		return nil, err
	case !ok:
		if _, err := r.get(ctx, id); err != nil {
			return nil, err // deleted meanwhile
		}
		return nil, apperr.StaleVersion()
	}
	return &next, nil
}

// delete soft-deletes a record and, in the same transaction, publishes
// Deleted; a subscriber that still uses the record vetoes with InUse and
// the delete is rolled back.
func (r *resource[T, In, PT, PI]) delete(ctx context.Context, actor, id string) error {
	cur, err := r.get(ctx, id)
	if err != nil {
		return err
	}
	return r.svc.db.InTx(ctx, func(ctx context.Context) error {
		ok, err := r.store.softDelete(ctx, id, actorRef(actor), r.svc.now())
		if err != nil {
			return err
		}
		if !ok {
			return r.notFound() // deleted meanwhile
		}
		if err := r.changed(ctx, id); err != nil {
			return err
		}
		rec := PT(cur).record()
		return r.svc.bus.Publish(ctx, Deleted{Kind: r.Kind, ID: rec.ID, Code: rec.Code})
	})
}

// ref returns one live record's Ref, NotFound otherwise.
func (r *resource[T, In, PT, PI]) ref(ctx context.Context, id string) (Ref, error) {
	refs, err := r.refs(ctx, []string{id})
	if err != nil {
		return Ref{}, err
	}
	ref, ok := refs[id]
	if !ok {
		return Ref{}, r.notFound()
	}
	return ref, nil
}

// insertMissing validates every input as POST does and inserts, in one
// transaction, those whose code no row has used yet, live or deleted: seeding
// twice adds nothing, and a seeded record a user deleted stays deleted. It
// returns how many rows it inserted.
func (r *resource[T, In, PT, PI]) insertMissing(ctx context.Context, ins []In) (int, error) {
	const batch = 500
	now := r.svc.now()
	inserted := 0
	err := r.svc.db.InTx(ctx, func(ctx context.Context) error {
		for start := 0; start < len(ins); start += batch {
			part := ins[start:min(start+batch, len(ins))]
			codes := make([]string, len(part))
			for i := range part {
				in := PI(&part[i])
				if err := r.validate(ctx, in); err != nil {
					return fmt.Errorf("%s %q: %w", r.Kind, in.head().Code, err)
				}
				codes[i] = in.head().Code
			}
			// Live codes are skipped by the insert itself; deleted ones here.
			used, err := r.store.deletedCodes(ctx, codes)
			if err != nil {
				return err
			}
			rows := make([]T, 0, len(part))
			for i := range part {
				in := PI(&part[i])
				if used[codes[i]] {
					continue
				}
				used[codes[i]] = true
				t := newRow[T, PT]("", now)
				r.fill(t, in)
				rows = append(rows, *t)
			}
			n, err := r.store.insertMany(ctx, rows)
			if err != nil {
				return err
			}
			inserted += n
		}
		if inserted == 0 {
			return nil
		}
		// New ids can only be cached as unknown: forget every one (one
		// notification, not one per row).
		return r.changed(ctx)
	})
	return inserted, err
}
