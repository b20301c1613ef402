// Package core implements the workflow designer module: definitions stored
// as data, their seeding, and the Engine other modules move documents with.
package core

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/cache"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
)

// Service stores definitions and serves them to the engine's users.
type Service struct {
	db    *db.DB
	store *store
	clock clock.Clock

	// Published definitions never change, so they are cached for good.
	// Drafts are never cached: they change until they are published, and
	// publishing a draft that was never cached leaves nothing stale.
	cache sync.Map // id → *engine.Definition

	// The published definitions of each kind (every inbox and list asks
	// for them to build its scope), forgotten on every node when a
	// publication commits (platform/cache: the Bus tells the other nodes
	// sharing Postgres).
	pub *cache.Map[[]*engine.Definition]

	// The definition id assigned to each document type (every create asks
	// for it), forgotten on every node when an assignment commits.
	assigned *cache.Map[string]
}

// New returns the service.
func New(database *db.DB, clk clock.Clock, caches *cache.Bus) *Service {
	return &Service{db: database, store: &store{db: database}, clock: clk,
		pub:      cache.New[[]*engine.Definition](caches, "workflowdesigner.published", 16),
		assigned: cache.New[string](caches, "workflowdesigner.assigned", 64)}
}

// Definition returns a definition by id.
func (s *Service) Definition(ctx context.Context, id string) (*engine.Definition, error) {
	if d, ok := s.cache.Load(id); ok {
		return d.(*engine.Definition), nil
	}
	d, err := s.store.load(ctx, id)
	if db.IsNotFound(err) {
		return nil, apperr.NotFound("Workflow definition")
	}
	if err != nil {
		return nil, fmt.Errorf("load workflow definition %s: %w", id, err)
	}
	if d.Published {
		s.cache.Store(id, d)
	}
	return d, nil
}

// ForDocumentType returns the published definition assigned to a document
// type; new documents pin it.
func (s *Service) ForDocumentType(ctx context.Context, documentType string) (*engine.Definition, error) {
	byType, err := s.assigned.Load(ctx, []string{documentType}, func(ctx context.Context, _ []string) (map[string]string, error) {
		id, err := s.store.assignment(ctx, documentType)
		if db.IsNotFound(err) {
			return nil, nil
		}
		return map[string]string{documentType: id}, err
	})
	if err != nil {
		return nil, err
	}
	id, ok := byType[documentType]
	if !ok {
		return nil, apperr.Conflict("invalid_transition", fmt.Sprintf("No workflow is assigned to %s.", documentType))
	}
	return s.Definition(ctx, id)
}

// assign sets a document type's assignment inside the transaction in ctx,
// replacing any (or only when it has none), and has every node forget the
// cached one once it commits.
func (s *Service) assign(ctx context.Context, a assignmentRow, replace bool) error {
	var err error
	if replace {
		err = s.store.assign(ctx, a)
	} else {
		err = s.store.assignIfMissing(ctx, a)
	}
	if err != nil {
		return err
	}
	return s.assigned.Changed(ctx, a.DocumentType)
}

// Published returns every published definition of a kind: the ones
// documents may be pinned to. Callers must not change the slice.
func (s *Service) Published(ctx context.Context, kind string) ([]*engine.Definition, error) {
	byKind, err := s.pub.Load(ctx, []string{kind}, func(ctx context.Context, _ []string) (map[string][]*engine.Definition, error) {
		ids, err := s.store.publishedIDs(ctx, kind)
		if err != nil {
			return nil, err
		}
		out := make([]*engine.Definition, 0, len(ids))
		for _, id := range ids {
			d, err := s.Definition(ctx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		return map[string][]*engine.Definition{kind: out}, nil
	})
	return byKind[kind], err
}

// published is called by every write that makes a definition published,
// inside its transaction: every node forgets the cached lists once it
// commits (this one before the write returns to its caller), and a
// rolled-back publication changes nothing.
func (s *Service) published(ctx context.Context) error { return s.pub.Changed(ctx) }

// Seed creates each kind's default definitions as published version 1
// (when no version of their key exists) and assigns them to the document
// types that have no assignment. Running it twice changes nothing.
func (s *Service) Seed(ctx context.Context, kinds []engine.Kind) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		for _, k := range kinds {
			for _, def := range k.Defaults {
				if err := s.seedDefault(ctx, k, def); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *Service) seedDefault(ctx context.Context, k engine.Kind, def engine.Default) error {
	if problems := engine.Validate(def.Spec, k, identity.Roles()); len(problems) > 0 {
		return fmt.Errorf("default workflow %s is invalid: %s", def.Spec.Key, problems)
	}
	now := s.now()
	row, err := s.store.definitionByKey(ctx, def.Spec.Key)
	switch {
	case db.IsNotFound(err):
		row = &definitionRow{ID: uuid.Must(uuid.NewV7()).String(), DefKey: def.Spec.Key, Version: 1, DocumentKind: k.Name,
			Name: def.Spec.Name, Status: statusPublished, InitialPhase: def.Spec.InitialPhase,
			CreatedAt: now, UpdatedAt: now, PublishedAt: &now}
		if err := s.store.insert(ctx, *row, def.Spec); err != nil {
			return err
		}
		if err := s.published(ctx); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	for _, t := range def.AssignTo {
		if err := s.assign(ctx, assignmentRow{DocumentType: t, DefinitionID: row.ID, UpdatedAt: now}, false); err != nil {
			return err
		}
	}
	return nil
}

// now is the service's clock at the precision both databases store, so a
// definition reads back as it was written.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }
