package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/calendar"
	"github.com/contractflow/contractflow/platform/notify"
)

// Config is the sla section of the configuration.
type Config struct {
	JobInterval   time.Duration `mapstructure:"jobInterval"`
	FirstRunDelay time.Duration `mapstructure:"firstRunDelay"`
	WarningHours  int           `mapstructure:"warningHours"`
	// Calendar says how SLA hours count: wall-clock hours or working time
	// (business.workingDays, workingHours, holidays; DESIGN §4.1).
	Calendar calendar.Mode `mapstructure:"calendar"`
	// ReminderHours spaces the reminders of a step whose breach policy is
	// remind, while the document stays overdue.
	ReminderHours int `mapstructure:"reminderHours"`
}

// DefaultConfig holds the documented defaults (seed §8, DESIGN §4.1, §5).
func DefaultConfig() *Config {
	return &Config{JobInterval: 15 * time.Minute, FirstRunDelay: 30 * time.Second, WarningHours: 24,
		Calendar: calendar.Hours, ReminderHours: 24}
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
	case c.ReminderHours < 1:
		return fmt.Errorf("config key sla.reminderHours: must be at least 1")
	case c.Calendar != calendar.Hours && c.Calendar != calendar.WorkingHours:
		return fmt.Errorf("config key sla.calendar: must be %s or %s", calendar.Hours, calendar.WorkingHours)
	}
	return nil
}

// JobName names the SLA job and the lock that keeps it on one node.
const JobName = "workflow.sla"

// slaBatch bounds one query of the job; the job pages through all of them.
const slaBatch = 200

// RunSLA is one run of the SLA job over every registered kind: each
// document whose deadline passed takes its pinned definition's normal move
// as the system, or, where the step's breach policy is remind, stays and
// reminds its inbox and owner once per sla.reminderHours; then documents
// nearing their deadline get their one warning. A failing document is logged and skipped. With several nodes
// only one runs a batch at a time, and every move is a compare-and-set, so
// a document never moves twice for one expiry.
func (r *Runtime) RunSLA(ctx context.Context) error {
	_, err := r.db.RunExclusive(ctx, JobName, func(ctx context.Context) error {
		now := r.now()
		for _, k := range r.Kinds() {
			moved, failed, err := r.advanceOverdue(ctx, k, now)
			if err != nil {
				return err
			}
			warned, err := r.warn(ctx, k, now)
			if moved+failed+warned > 0 {
				r.log.Info("sla job", "kind", k.Name, "moved", moved, "failed", failed, "warned", warned)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func (r *Runtime) advanceOverdue(ctx context.Context, k Kind, now time.Time) (moved, failed int, err error) {
	var afterDeadline time.Time // the zero time sorts before every deadline
	afterID := ""
	for {
		rows, err := r.store().overdue(ctx, k.Tables, now, afterDeadline, afterID, slaBatch)
		if err != nil {
			return moved, failed, err
		}
		for _, row := range rows {
			afterDeadline, afterID = row.SLADeadline, row.ID
			if err := r.autoAdvance(ctx, k, row.ID, now); err != nil {
				failed++
				r.log.Error("sla: auto-advance failed", "kind", k.Name, "id", row.ID, "err", err)
				continue
			}
			moved++
		}
		if len(rows) < slaBatch {
			return moved, failed, nil
		}
	}
}

func (r *Runtime) autoAdvance(ctx context.Context, k Kind, id string, now time.Time) error {
	doc, err := k.Load(ctx, id)
	if err != nil {
		return err
	}
	if doc.Deadline == nil || !doc.Deadline.Before(now) {
		return nil // moved since the scan
	}
	def, err := r.Definition(ctx, doc.DefinitionID)
	if err != nil {
		return err
	}
	if step, _ := def.Step(doc.Phase); step.Breach() == engine.BreachRemind {
		return r.remind(ctx, k, doc, def, now)
	}
	t, ok := def.NormalMove(doc.Phase, doc.Facts)
	if !ok {
		return fmt.Errorf("phase %s has no normal move", doc.Phase)
	}
	hours := int(-r.cal.Remaining(now, *doc.Deadline).Hours())
	comment := fmt.Sprintf("Automatic move: the SLA of phase %s expired %d hour(s) ago.", doc.Phase, hours)
	_, err = r.Move(ctx, MoveRequest{Kind: k.Name, Doc: doc, To: t.To, Comment: comment})
	return err
}

// warn sends one warning per phase for documents due within sla.warningHours.
func (r *Runtime) warn(ctx context.Context, k Kind, now time.Time) (int, error) {
	if r.cfg.WarningHours == 0 || k.SLAWarning == nil {
		return 0, nil
	}
	rows, err := r.store().dueSoon(ctx, k.Tables, now, r.cal.Deadline(now, r.cfg.WarningHours), 1000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, row := range rows {
		// Like a failing move, a failing warning is logged and skipped.
		sent, err := r.warnOne(ctx, k, row)
		if err != nil {
			r.log.Error("sla: warning failed", "kind", k.Name, "id", row.ID, "err", err)
			continue
		}
		if sent {
			n++
		}
	}
	return n, nil
}

// warnOne flags a document as warned and publishes its warning, unless
// another node already did.
func (r *Runtime) warnOne(ctx context.Context, k Kind, row dueRow) (bool, error) {
	doc, err := k.Load(ctx, row.ID)
	if err != nil {
		return false, err
	}
	def, err := r.Definition(ctx, doc.DefinitionID)
	if err != nil {
		return false, err
	}
	sent := false
	err = r.db.InTx(ctx, func(ctx context.Context) error {
		ok, err := r.store().markWarned(ctx, k.Tables, row.ID, row.SLADeadline)
		if err != nil || !ok {
			return err
		}
		sent = true
		return r.bus.Publish(ctx, k.SLAWarning(doc, def.InboxRoles(doc.Phase)))
	})
	return sent && err == nil, err
}

// SLABreached is published when an overdue document whose step says remind
// stays where it is: notifications tell the phase's inbox and the owner.
type SLABreached struct {
	Kind, DocumentID, Phase, OwnerID string
	Deadline                         time.Time
	InboxRoles                       []string
}

// Topic is "<kind>.slaBreached".
func (e SLABreached) Topic() string { return e.Kind + ".slaBreached" }

// Notifications remind the phase's inbox and the document's owner.
func (e SLABreached) Notifications() []notify.Draft {
	d := Audience(e.Kind, e.DocumentID, e.OwnerID, e.InboxRoles, nil)
	d.Kind, d.Title = e.Topic(), "Overdue: "+e.Kind+" in "+e.Phase
	d.Body = fmt.Sprintf("The SLA of %s expired at %s; the %s is still waiting.", e.Phase, e.Deadline.UTC().Format(time.RFC3339), e.Kind)
	return []notify.Draft{d}
}

// remind publishes one reminder per sla.reminderHours while doc stays
// overdue; the compare-and-set on sla_reminded_at keeps it to one across
// nodes, and every move clears it.
func (r *Runtime) remind(ctx context.Context, k Kind, doc Document, def *engine.Definition, now time.Time) error {
	return r.db.InTx(ctx, func(ctx context.Context) error {
		ok, err := r.store().markReminded(ctx, k.Tables, doc, now, now.Add(-time.Duration(r.cfg.ReminderHours)*time.Hour))
		if err != nil || !ok {
			return err
		}
		return r.bus.Publish(ctx, SLABreached{Kind: k.Name, DocumentID: doc.ID, Phase: doc.Phase, OwnerID: doc.OwnerID,
			Deadline: doc.Deadline.UTC(), InboxRoles: def.InboxRoles(doc.Phase)})
	})
}
