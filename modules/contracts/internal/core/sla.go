package core

import (
	"context"
	"fmt"
	"time"
)

// Config is the sla section of the configuration.
type Config struct {
	JobInterval   time.Duration `mapstructure:"jobInterval"`
	FirstRunDelay time.Duration `mapstructure:"firstRunDelay"`
	WarningHours  int           `mapstructure:"warningHours"`
}

// DefaultConfig holds the documented defaults (seed §8, DESIGN §5).
func DefaultConfig() *Config {
	return &Config{JobInterval: 15 * time.Minute, FirstRunDelay: 30 * time.Second, WarningHours: 24}
}

// Validate checks the section.
func (c *Config) Validate() error {
	switch {
	case c.JobInterval < time.Second:
		return fmt.Errorf("config key sla.jobInterval: must be at least 1s")
	case c.FirstRunDelay < 0:
		return fmt.Errorf("config key sla.firstRunDelay: must not be negative")
	case c.WarningHours < 0:
		return fmt.Errorf("config key sla.warningHours: must not be negative")
	}
	return nil
}

// slaBatch bounds one query of the job; the job pages through all of them.
const slaBatch = 200

// RunSLA is one run of the SLA job: each contract whose deadline passed
// moves along its pinned definition's normal move, as the system; then
// contracts nearing their deadline get their one warning. A failing
// contract is logged and skipped. With several nodes only one runs a batch
// at a time, and every move is a compare-and-set, so a contract never moves
// twice for one expiry.
func (s *Service) RunSLA(ctx context.Context) error {
	_, err := s.DB.RunExclusive(ctx, "contracts.sla", func(ctx context.Context) error {
		now := s.now()
		moved, failed := 0, 0
		var afterDeadline time.Time // the zero time sorts before every deadline
		afterID := ""
		for {
			rows, err := s.store.overdue(ctx, now, afterDeadline, afterID, slaBatch)
			if err != nil {
				return err
			}
			for i := range rows {
				c := &rows[i]
				afterDeadline, afterID = *c.SLADeadline, c.ID
				if err := s.autoAdvance(ctx, c, now); err != nil {
					failed++
					s.Log.Error("sla: auto-advance failed", "contract", c.ID, "phase", c.Phase, "err", err)
					continue
				}
				moved++
			}
			if len(rows) < slaBatch {
				break
			}
		}
		warned, err := s.warn(ctx, now)
		if moved+failed+warned > 0 {
			s.Log.Info("sla job", "moved", moved, "failed", failed, "warned", warned)
		}
		return err
	})
	return err
}

func (s *Service) autoAdvance(ctx context.Context, c *Contract, now time.Time) error {
	def, err := s.Workflows.Definition(ctx, c.WorkflowDefinitionID)
	if err != nil {
		return err
	}
	t, ok := def.NormalMove(c.Phase, factsOf(c))
	if !ok {
		return fmt.Errorf("phase %s has no normal move", c.Phase)
	}
	hours := int(now.Sub(*c.SLADeadline).Hours())
	comment := fmt.Sprintf("Automatic move: the SLA of phase %s expired %d hour(s) ago.", c.Phase, hours)
	return s.move(ctx, c, def, t, nil, t.Decision(true), comment)
}

// warn sends one warning per phase for contracts due within sla.warningHours.
func (s *Service) warn(ctx context.Context, now time.Time) (int, error) {
	if s.Config.WarningHours == 0 {
		return 0, nil
	}
	rows, err := s.store.dueSoon(ctx, now, now.Add(time.Duration(s.Config.WarningHours)*time.Hour), 1000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range rows {
		// Like a failing move, a failing warning is logged and skipped.
		sent, err := s.warnOne(ctx, c)
		if err != nil {
			s.Log.Error("sla: warning failed", "contract", c.ID, "phase", c.Phase, "err", err)
			continue
		}
		if sent {
			n++
		}
	}
	return n, nil
}

// warnOne flags a contract as warned and publishes its warning, unless
// another node already did.
func (s *Service) warnOne(ctx context.Context, c Contract) (bool, error) {
	def, err := s.Workflows.Definition(ctx, c.WorkflowDefinitionID)
	if err != nil {
		return false, err
	}
	sent := false
	err = s.DB.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.store.markWarned(ctx, c.ID, *c.SLADeadline)
		if err != nil || !ok {
			return err
		}
		sent = true
		return s.Bus.Publish(ctx, SLAWarning{ContractID: c.ID, Title: c.Title, Phase: c.Phase, Deadline: c.SLADeadline.UTC(),
			InboxRoles: def.InboxRoles(c.Phase), DrafterID: c.DrafterID})
	})
	return sent && err == nil, err
}
