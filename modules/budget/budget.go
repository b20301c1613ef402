// Package budget is the public contract of the budget module: budgets of a
// project (or of no project, funding any), their lines, and what contracts
// hold on a line as they move. The module hooks the contract kind on the
// workflow runtime (contracts never import budget): a contract naming a
// budgetLineId reserves its value on entering DangTrinhKy, the reservation
// becomes a commitment at DaPhatHanh and is released at TuChoi, on deletion
// or when the contract goes back out of DangTrinhKy. docs/decisions.md
// ("Budget") lists every move and what it does.
//
// Other modules read utilisation through Utilisation:
//
//	if u, ok := kernel.Lookup[budget.Utilisation](app); ok { … } // Info.Uses: ["budget"]
package budget

import (
	"context"

	"github.com/contractflow/contractflow/modules/budget/internal/core"
)

// Utilisation answers how much of the planned money of each project is
// spoken for. Obtain it with kernel.Lookup[budget.Utilisation] from a module
// that lists "budget" in Info.Uses: without the budget module it is absent.
type Utilisation interface {
	// ByProject totals the Approved and Closed budgets that name a project,
	// per project, ordered by project id. Draft budgets are plans not yet in
	// force, and budgets without a project cannot be attributed to one, so
	// neither is counted.
	ByProject(ctx context.Context) ([]ProjectUtilisation, error)
}

// ProjectUtilisation is one project's planned money (adjustments included)
// and what reservations, commitments and actuals hold of it.
type ProjectUtilisation = core.ProjectUtilisation

// Overdrawn is published inside the move's transaction when a contract
// reserves more than its line's remaining amount under onExceed Warn (the
// move goes through with a warning): an after-commit subscriber notifies
// people.
type Overdrawn = core.Overdrawn

// TopicOverdrawn is the topic of Overdrawn: "budget.overdrawn".
const TopicOverdrawn = core.TopicOverdrawn
