// Package contracts is the public contract of the contracts module: the
// phases, and the events other modules react to. A module that must be able
// to refuse a move (the budget check) subscribes to TopicTransitioned with
// events.InTx and returns an error; notifications subscribe after commit.
package contracts

import "github.com/contractflow/contractflow/modules/contracts/internal/core"

// Events published by the module.
type (
	Created      = core.Created
	Transitioned = core.Transitioned
	Deleted      = core.Deleted
	Commented    = core.Commented
	SLAWarning   = core.SLAWarning
)

// Event topics.
const (
	TopicCreated      = core.TopicCreated
	TopicTransitioned = core.TopicTransitioned
	TopicDeleted      = core.TopicDeleted
	TopicCommented    = core.TopicCommented
	TopicSLAWarning   = core.TopicSLAWarning
)

// Phases of a contract.
const (
	DangSoanThao   = core.DangSoanThao
	DangDamPhan    = core.DangDamPhan
	DangGopY       = core.DangGopY
	DangKiemTraCCM = core.DangKiemTraCCM
	DangInKy       = core.DangInKy
	DangTrinhKy    = core.DangTrinhKy
	DangDongDau    = core.DangDongDau
	DaPhatHanh     = core.DaPhatHanh
	TuChoi         = core.TuChoi
)
