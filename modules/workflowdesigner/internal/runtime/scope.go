package runtime

import (
	"context"
	"slices"
	"strings"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
)

// Scope is what one caller may see of a kind's documents, as SQL over its
// documents table, so paging counts stay right: their own documents, plus
// the phases of each published definition whose inbox roles they hold.
// Admin sees everything.
type Scope struct {
	all    bool
	userID string
	kind   string
	tables Tables
	phases []definitionPhases
	db     *db.DB // where InboxCount reads the counts
}

// definitionPhases are the phases a caller sees in documents pinned to
// any of definitionIDs: definitions that show the caller the same phases
// share one term, "definition IN (…) AND phase IN (…)", which the
// (workflow_definition_id, phase, sla_deadline) index serves directly
// (an OR of one term per version made SQLite fall back to its phase index).
type definitionPhases struct {
	definitionIDs []string
	phases        []string
}

// Scope computes what p may see of kind's documents.
func (r *Runtime) Scope(ctx context.Context, kind string, p authn.Principal) (Scope, error) {
	k, _, err := r.kind(kind)
	if err != nil {
		return Scope{}, err
	}
	if p.IsAdmin() {
		return Scope{all: true, kind: kind, tables: k.Tables, db: r.db}, nil
	}
	defs, err := r.Published(ctx, kind)
	if err != nil {
		return Scope{}, err
	}
	sc := Scope{userID: p.UserID, kind: kind, tables: k.Tables, db: r.db}
	group := map[string]int{} // the phases, joined → index in sc.phases
	for _, d := range defs {
		phases := d.PhasesSeenBy(p.Roles)
		if len(phases) == 0 {
			continue
		}
		slices.Sort(phases)
		key := strings.Join(phases, ",")
		if i, ok := group[key]; ok {
			sc.phases[i].definitionIDs = append(sc.phases[i].definitionIDs, d.ID)
			continue
		}
		group[key] = len(sc.phases)
		sc.phases = append(sc.phases, definitionPhases{definitionIDs: []string{d.ID}, phases: phases})
	}
	return sc, nil
}

// All reports whether the caller sees every document (Admin): Visible is
// then no condition at all.
func (sc Scope) All() bool { return sc.all }

// Visible is the condition of the documents the caller may list and open:
// owned, or waiting in a phase the caller's roles see.
func (sc Scope) Visible() (string, []any) { return sc.where(true) }

// Inbox is the condition of the documents waiting on the caller's roles
// (every document that has a deadline, for Admin).
func (sc Scope) Inbox() (string, []any) {
	cond, args := sc.where(false)
	return cond + " AND " + sc.tables.Documents + ".sla_deadline IS NOT NULL", args
}

func (sc Scope) where(owned bool) (string, []any) {
	if sc.all {
		return "1 = 1", nil
	}
	t := sc.tables.Documents
	var conds []string
	var args []any
	if owned {
		conds = append(conds, t+"."+sc.tables.Owner+" = ?")
		args = append(args, sc.userID)
	}
	for _, dp := range sc.phases {
		conds = append(conds, "("+t+".workflow_definition_id IN ? AND "+t+".phase IN ?)")
		args = append(args, dp.definitionIDs, dp.phases)
	}
	if len(conds) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}

// CanSee is the visibility rule for one document: its owner, or a holder of
// an inbox role of its current phase; Admin sees all. It returns the pinned
// definition, which the caller usually needs next.
func (r *Runtime) CanSee(ctx context.Context, p authn.Principal, doc Document) (*engine.Definition, error) {
	def, err := r.Definition(ctx, doc.DefinitionID)
	if err != nil {
		return nil, err
	}
	if p.IsAdmin() || doc.OwnerID == p.UserID || p.HasAnyRole(def.InboxRoles(doc.Phase)...) {
		return def, nil
	}
	return nil, apperr.Forbidden("You are not involved in this document.")
}
