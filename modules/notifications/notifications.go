// Package notifications is the public contract of the notifications
// module: the kinds of notification it stores (DESIGN §10).
//
// A producer does not import this package. It makes its event implement
// notify.Notifiable (platform/notify): the module subscribes inside the
// publisher's transaction to every event, and for one that returns drafts
// stores each as one message to the audience of its role holders (and a
// small row per user it names besides), in that transaction (an undone change notifies no one), then pushes them to the
// recipients' WebSockets on every node once it commits.
package notifications

// Kinds of notification (DESIGN §10 and §4.1). A document kind's SLA
// reminder is "<kind>.slaBreached".
const (
	KindContractTransitioned   = "contract.transitioned"
	KindContractSLAWarning     = "contract.slaWarning"
	KindContractAutoAdvanced   = "contract.autoAdvanced"
	KindContractCommented      = "contract.commented"
	KindEvaluationTransitioned = "purchaseEvaluation.transitioned"
	KindEvaluationOpinionSaved = "purchaseEvaluation.opinionSaved"
)
