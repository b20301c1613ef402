package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
)

// DecisionMigrated is the history decision of a document re-pinned to
// another definition version.
const DecisionMigrated = "Migrated"

// PhaseCount is how many in-flight documents wait in one phase; Mapped
// says whether a migration target has a non-terminal step for it.
type PhaseCount struct {
	Phase  string `json:"phase"`
	Count  int64  `json:"count"`
	Mapped *bool  `json:"mapped,omitempty"`
}

// InFlight is the plan of the documents still moving on a definition.
type InFlight struct {
	Total   int64        `json:"total"`
	ByPhase []PhaseCount `json:"byPhase"`
}

// InFlight counts the non-terminal documents pinned to definition id, by phase.
func (r *Runtime) InFlight(ctx context.Context, id string) (InFlight, error) {
	def, k, err := r.definitionAndKind(ctx, id)
	if err != nil {
		return InFlight{}, err
	}
	counts, err := r.store().countByPhase(ctx, k.Name, def.ID, def.NonTerminalPhases())
	if err != nil {
		return InFlight{}, err
	}
	out := InFlight{ByPhase: []PhaseCount{}}
	for _, phase := range def.NonTerminalPhases() { // the definition's order
		if n := counts[phase]; n > 0 {
			out.ByPhase = append(out.ByPhase, PhaseCount{Phase: phase, Count: n})
			out.Total += n
		}
	}
	return out, nil
}

func (r *Runtime) definitionAndKind(ctx context.Context, id string) (*engine.Definition, *Kind, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil, apperr.NotFound("Workflow definition")
	}
	def, err := r.Definition(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	k, _, err := r.kind(def.DocumentKind)
	if err != nil {
		return nil, nil, err
	}
	return def, k, nil
}

// Migrate re-pins every non-terminal document pinned to definition id onto
// the published definition toID of the same kind, in one transaction: each
// keeps its phase and deadline and gets a Migrated history row. Phases the
// target has no non-terminal step for refuse the whole migration (409
// invalid_transition naming them). With dryRun the plan is returned and
// nothing changes.
//
// A document moved concurrently is either migrated in its new phase (the
// per-document compare-and-set fails, the row is read again and retried) or
// its move is refused (its compare-and-set sees the new history head); it
// is never left pinned to a definition lacking its phase.
func (r *Runtime) Migrate(ctx context.Context, by authn.Principal, id, toID string, dryRun bool) (InFlight, error) {
	from, k, err := r.definitionAndKind(ctx, id)
	if err != nil {
		return InFlight{}, err
	}
	to, err := r.target(ctx, from, toID)
	if err != nil {
		return InFlight{}, err
	}
	mapped := func(phase string) bool { return to.HasPhase(phase) && !to.Terminal(phase) }
	plan, err := r.InFlight(ctx, id)
	if err != nil {
		return InFlight{}, err
	}
	var unmapped []string
	for i, pc := range plan.ByPhase {
		ok := mapped(pc.Phase)
		plan.ByPhase[i].Mapped = &ok
		if !ok {
			unmapped = append(unmapped, pc.Phase)
		}
	}
	if dryRun {
		return plan, nil
	}
	if len(unmapped) > 0 {
		return InFlight{}, unmappedPhases(to, unmapped)
	}
	comment := fmt.Sprintf("Migrated from %s v%d to %s v%d.", from.Key, from.Version, to.Key, to.Version)
	err = r.db.InTx(ctx, func(ctx context.Context) error {
		docs, err := r.store().pinned(ctx, k.Tables, from.ID, from.NonTerminalPhases())
		if err != nil {
			return err
		}
		for _, d := range docs {
			if err := r.migrateOne(ctx, k, d, from, to, by, comment, mapped); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return InFlight{}, err
	}
	return plan, nil
}

func (r *Runtime) target(ctx context.Context, from *engine.Definition, toID string) (*engine.Definition, error) {
	bad := func(msg string) error { return apperr.FieldError("ToDefinitionId", msg) }
	if _, err := uuid.Parse(toID); err != nil {
		return nil, bad("No such workflow definition.")
	}
	to, err := r.Definition(ctx, toID)
	switch {
	case apperr.KindOf(err) == apperr.KindNotFound:
		return nil, bad("No such workflow definition.")
	case err != nil:
		return nil, err
	case !to.Published:
		return nil, bad("Only a published definition can receive documents.")
	case to.DocumentKind != from.DocumentKind:
		return nil, bad("The definition is for " + to.DocumentKind + " documents, not " + from.DocumentKind + ".")
	case to.ID == from.ID:
		return nil, bad("The documents are already on this definition.")
	}
	return to, nil
}

func unmappedPhases(to *engine.Definition, phases []string) error {
	return apperr.Conflict("invalid_transition", fmt.Sprintf("%s v%d has no step for %s; nothing was migrated.",
		to.Key, to.Version, strings.Join(phases, ", ")))
}

// migrateOne re-pins one document by compare-and-set, reading it again
// when a concurrent move changed it first.
func (r *Runtime) migrateOne(ctx context.Context, k *Kind, d pinnedRow, from, to *engine.Definition,
	by authn.Principal, comment string, mapped func(string) bool) error {
	for {
		if !mapped(d.Phase) {
			return unmappedPhases(to, []string{d.Phase})
		}
		m := &Moved{Kind: k.Name, Doc: Document{ID: d.ID, Phase: d.Phase, HistoryHash: d.HistoryHash},
			From: d.Phase, To: d.Phase, Decision: DecisionMigrated, Comment: comment, ActorID: &by.UserID, At: r.now(),
			HistoryID: uuid.Must(uuid.NewV7()).String()}
		m.Hash = Link{DocumentID: d.ID, From: d.Phase, To: d.Phase, ApproverID: m.ActorID, Decision: m.Decision,
			Comment: comment, At: m.At}.Hash(d.HistoryHash)
		ok, err := r.store().repin(ctx, k.Tables, m, from.ID, to.ID)
		if err != nil {
			return err
		}
		if ok {
			return r.store().appendHistory(ctx, k.Tables, m)
		}
		now, found, err := r.store().pinnedOne(ctx, k.Tables, d.ID)
		if err != nil {
			return err
		}
		if !found || now.DefinitionID != from.ID || !slices.Contains(from.NonTerminalPhases(), now.Phase) {
			return nil // deleted, finished or re-pinned meanwhile: nothing left to migrate
		}
		d = now
	}
}
