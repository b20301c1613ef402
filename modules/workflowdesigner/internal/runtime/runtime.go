// Package runtime moves documents of every registered kind along their
// pinned workflow definition: it checks the move, runs the kind's
// preconditions and hooks, compare-and-sets the phase, sets the deadline,
// appends the hash-chained history row and publishes the kind's event, all
// in one transaction. It also runs the one SLA job and builds the inbox and
// visibility conditions every kind lists with.
package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/authz"
	"github.com/contractflow/contractflow/platform/calendar"
	"github.com/contractflow/contractflow/platform/clock"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/events"
)

// Definitions serves pinned and assigned workflow definitions (cached by
// id: a published definition never changes).
type Definitions interface {
	Definition(ctx context.Context, id string) (*engine.Definition, error)
	ForDocumentType(ctx context.Context, documentType string) (*engine.Definition, error)
	Published(ctx context.Context, kind string) ([]*engine.Definition, error)
}

// Runtime moves documents; one serves every kind.
type Runtime struct {
	Definitions
	db    *db.DB
	clock clock.Clock
	log   *slog.Logger
	bus   *events.Bus
	cfg   Config
	cal   *calendar.Calendar // how SLA hours count

	mu    sync.RWMutex
	kinds map[string]*Kind
	names []string // registration order, for the SLA job
	hooks map[string][]Hook
}

// New returns a runtime over defs whose SLA hours count on cal.
func New(defs Definitions, database *db.DB, clk clock.Clock, log *slog.Logger, bus *events.Bus, cfg Config, cal *calendar.Calendar) *Runtime {
	return &Runtime{Definitions: defs, db: database, clock: clk, log: log, bus: bus, cfg: cfg, cal: cal,
		kinds: map[string]*Kind{}, hooks: map[string][]Hook{}}
}

// RegisterKind declares a document kind; its owner calls it at provision.
// Registering a name twice is a programming error.
func (r *Runtime) RegisterKind(k Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[k.Name]; dup {
		panic(fmt.Sprintf("workflow: kind %q registered twice", k.Name))
	}
	r.kinds[k.Name] = &k
	r.names = append(r.names, k.Name)
}

// Hook adds work to every move of kind, inside its transaction. A module
// may hook a kind it does not own (the budget hooks contracts), before or
// after the owner registers it.
func (r *Runtime) Hook(kind string, h Hook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks[kind] = append(r.hooks[kind], h)
}

// Kinds returns the registered kinds in registration order.
func (r *Runtime) Kinds() []Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Kind, len(r.names))
	for i, n := range r.names {
		out[i] = *r.kinds[n]
	}
	return out
}

func (r *Runtime) kind(name string) (*Kind, []Hook, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[name]
	if !ok {
		return nil, nil, fmt.Errorf("workflow: no document kind %q is registered", name)
	}
	return k, r.hooks[name], nil
}

// now is the runtime's clock at the precision both databases store, so a
// history row hashes the same before and after a round trip.
func (r *Runtime) now() time.Time { return r.clock.Now().UTC().Truncate(time.Microsecond) }

// deadline is the one place a phase's deadline is computed, on the SLA
// calendar: nil for a terminal phase.
func (r *Runtime) deadline(from time.Time, def *engine.Definition, phase string) *time.Time {
	step, ok := def.Step(phase)
	if !ok || step.Terminal || step.SLAHours <= 0 {
		return nil
	}
	d := r.cal.Deadline(from, step.SLAHours).UTC().Truncate(time.Microsecond)
	return &d
}

// Remaining is the SLA time left until deadline (negative when overdue),
// counted on the calendar deadlines are counted on.
func (r *Runtime) Remaining(deadline time.Time) time.Duration {
	return r.cal.Remaining(r.clock.Now(), deadline)
}

// Start is where a new document begins.
type Start struct {
	Definition *engine.Definition
	Phase      string
	Deadline   *time.Time
}

// Start returns the definition assigned to documentType, which a new
// document pins, with its initial phase and that phase's deadline from now.
func (r *Runtime) Start(ctx context.Context, documentType string) (Start, error) {
	def, err := r.ForDocumentType(ctx, documentType)
	if err != nil {
		return Start{}, err
	}
	return Start{Definition: def, Phase: def.InitialPhase, Deadline: r.deadline(r.clock.Now(), def, def.InitialPhase)}, nil
}

// ActorOf is who asks for a move; nil is the system.
func ActorOf(p *authn.Principal) engine.Actor {
	if p == nil {
		return engine.Actor{System: true}
	}
	// Admin passes every workflow role check as it passes every policy.
	return engine.Actor{Roles: p.Roles, Admin: authz.PassesEveryPolicy(p.Roles...)}
}

// MoveRequest asks to move one document.
type MoveRequest struct {
	Kind    string
	Doc     Document
	To      string
	By      *authn.Principal // nil: the system (passes the role check)
	Comment string
	Version *int // when set, the document must still be at this version
}

// Move checks and applies a move in one transaction (joining the one in
// ctx): the pair must be a move of the pinned definition whose guard holds
// (409 invalid_transition, for Admin too), the caller must hold one of its
// roles (403 transition_forbidden), returns and rejections need a comment
// (400 on Comment), the move's precondition must hold (409 with its code),
// and the document must still be where it was read (409).
func (r *Runtime) Move(ctx context.Context, req MoveRequest) (*Moved, error) {
	k, hooks, err := r.kind(req.Kind)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(k.Phases, req.To) {
		return nil, apperr.FieldError("ToPhase", "Must be one of: "+strings.Join(k.Phases, ", ")+".")
	}
	doc := req.Doc
	def, err := r.Definition(ctx, doc.DefinitionID)
	if err != nil {
		return nil, err
	}
	t, err := def.Move(doc.Phase, req.To, ActorOf(req.By), doc.Facts)
	if err != nil {
		return nil, err
	}
	comment := strings.TrimSpace(req.Comment)
	if t.RequiresComment() && comment == "" {
		return nil, apperr.FieldError("Comment", "A "+string(t.Kind)+" needs a comment saying why.")
	}
	if req.Version != nil && *req.Version != doc.Version {
		return nil, apperr.StaleVersion()
	}
	now := r.now()
	m := &Moved{Kind: k.Name, Doc: doc, Definition: def, Transition: t, From: doc.Phase, To: t.To,
		Decision: t.Decision(req.By == nil), Comment: comment, At: now, Deadline: r.deadline(now, def, t.To),
		InboxRoles: def.InboxRoles(t.To), HistoryID: uuid.Must(uuid.NewV7()).String()}
	if req.By != nil {
		m.ActorID = &req.By.UserID
	}
	err = r.db.InTx(ctx, func(ctx context.Context) error {
		// What the hooks add starts afresh when the transaction runs again
		// (db.Speculative).
		m.Comment, m.Warnings, m.set = comment, nil, nil
		if err := r.checkPrecondition(ctx, k, t, doc); err != nil {
			return err
		}
		for _, h := range hooks {
			if err := h(ctx, m); err != nil {
				return err
			}
		}
		for _, w := range m.Warnings {
			m.Comment = strings.TrimSpace(m.Comment + "\nWarning: " + w)
		}
		m.Hash = Link{DocumentID: doc.ID, From: m.From, To: m.To, ApproverID: m.ActorID, Decision: m.Decision,
			Comment: m.Comment, At: m.At}.Hash(doc.HistoryHash)
		ok, err := r.store().move(ctx, k.Tables, m)
		if err != nil {
			return err
		}
		if !ok {
			return engine.StaleDocument(fmt.Sprintf("It is no longer in %s; reload it.", doc.Phase))
		}
		if k.Transitioned == nil {
			return nil
		}
		return r.bus.Publish(ctx, k.Transitioned(m))
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (r *Runtime) checkPrecondition(ctx context.Context, k *Kind, t engine.Transition, doc Document) error {
	if t.Precondition == "" {
		return nil
	}
	for _, p := range k.Preconditions {
		if p.Name != t.Precondition {
			continue
		}
		reason, err := p.Check(ctx, doc)
		if err != nil {
			return err
		}
		if reason != "" {
			return engine.PreconditionFailed(p.Code, reason)
		}
		return nil
	}
	// Publishing refuses a definition naming an undeclared precondition, so
	// this is a kind that stopped declaring one: fail closed.
	return fmt.Errorf("workflow: kind %s declares no precondition %q", k.Name, t.Precondition)
}

func (r *Runtime) store() store { return store{db: r.db} }
