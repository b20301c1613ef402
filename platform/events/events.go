// Package events is the in-process bus modules use to react to each other
// without importing each other. A subscriber chooses when it runs:
//
//   - InTx handlers run synchronously inside the publisher's transaction; an
//     error aborts the publisher's change (e.g. a budget check refusing a move).
//   - AfterCommit handlers run once the publisher's transaction has committed,
//     for side effects such as notifications; their errors are only logged.
package events

import (
	"context"
	"log/slog"
	"sync"

	"github.com/contractflow/contractflow/platform/db"
)

// Event is anything published on the bus; its Topic names it in the past
// tense (e.g. "contract.transitioned").
type Event interface {
	Topic() string
}

// Handler reacts to one event.
type Handler func(ctx context.Context, e Event) error

// Mode says when a handler runs relative to the publisher's transaction.
type Mode int

const (
	InTx Mode = iota
	AfterCommit
)

type subscription struct {
	mode    Mode
	handler Handler
}

// Bus routes events to subscribers by topic.
type Bus struct {
	log  *slog.Logger
	mu   sync.RWMutex
	subs map[string][]subscription
	all  []subscription // run for every topic, after the topic's own
}

// NewBus returns an empty bus that logs failed after-commit handlers to log.
func NewBus(log *slog.Logger) *Bus {
	return &Bus{log: log, subs: map[string][]subscription{}}
}

// Subscribe registers h for topic.
func (b *Bus) Subscribe(topic string, mode Mode, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[topic] = append(b.subs[topic], subscription{mode: mode, handler: h})
}

// SubscribeAll registers h for every topic, for a consumer that reacts to
// what events have in common rather than to one topic (notifications look
// for events that say whom to notify). It runs after the topic's own
// subscribers of the same mode.
func (b *Bus) SubscribeAll(mode Mode, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = append(b.all, subscription{mode: mode, handler: h})
}

// Publish runs the InTx handlers now, in subscription order, stopping at the
// first error, which it returns; AfterCommit handlers are queued until the
// transaction in ctx commits (or run at once without one).
func (b *Bus) Publish(ctx context.Context, e Event) error {
	b.mu.RLock()
	topic := b.subs[e.Topic()]
	subs := make([]subscription, 0, len(topic)+len(b.all))
	subs = append(append(subs, topic...), b.all...)
	b.mu.RUnlock()
	for _, s := range subs {
		if s.mode != InTx {
			continue
		}
		if err := s.handler(ctx, e); err != nil {
			return err
		}
	}
	for _, s := range subs {
		if s.mode != AfterCommit {
			continue
		}
		h := s.handler
		db.AfterCommit(ctx, func() {
			// The request may be over when this runs; keep its values, not its deadline.
			if err := h(db.WithoutTx(context.WithoutCancel(ctx)), e); err != nil {
				b.log.Error("event handler failed", "topic", e.Topic(), "err", err)
			}
		})
	}
	return nil
}
