// Package procurement is the public contract of the procurement module:
// purchase evaluations (supplier approvals) with their quotations compared
// side by side, department opinions and a voucher code, approved under
// policy A or B. Evaluations move on the workflow runtime as the document
// kind KindName; a module that must act inside a move hooks that kind with
// workflowdesigner.Engine.Hook, and notifications subscribe to the events
// after commit.
package procurement

import "github.com/contractflow/contractflow/modules/procurement/internal/core"

// KindName is the evaluations' document kind on the workflow runtime.
const KindName = core.KindName

// Phases lists the seven phases in workflow order.
var Phases = core.Phases

// Events published by the module.
type (
	Transitioned = core.Transitioned
	OpinionSaved = core.OpinionSaved
	SLAWarning   = core.SLAWarning
)

// Event topics.
const (
	TopicTransitioned = core.TopicTransitioned
	TopicOpinionSaved = core.TopicOpinionSaved
	TopicSLAWarning   = core.TopicSLAWarning
)
