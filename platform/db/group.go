package db

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"gorm.io/gorm"
)

// On SQLite every write transaction runs on the one writer connection, one
// after another, and each commit writes the pages it changed to the WAL:
// the contract's row, but also the index leaves, counter rows and table
// tails that every move changes alike. A move's commit cost as much as its
// statements. The group committer runs the transactions that queued up while
// the connection was busy as savepoints of one transaction and commits them
// together, so a hot page is written once per group instead of once per
// move; alone, a transaction runs as before. Each member is still all or
// nothing: a member that fails rolls back to its savepoint and the others
// go on; a failed commit fails every member it carried. Members run in
// arrival order and see the writes of those before them, as they would
// have after their commits.
type groupCommitter struct {
	gorm  *gorm.DB
	queue chan *member
	done  chan struct{}

	mu     sync.RWMutex // senders hold it shared, so that stop never closes the queue under one
	closed bool
}

// maxGroup bounds a group, so that one commit's WAL write and the wait of
// the group's first member stay short.
const maxGroup = 32

type member struct {
	ctx      context.Context
	fn       func(ctx context.Context) error
	st       txState
	err      error
	panicked any
	done     chan struct{}
}

// errClosed answers a transaction asked for after Close.
var errClosed = errors.New("db: the database is closed")

func startGroupCommitter(g *gorm.DB) *groupCommitter {
	c := &groupCommitter{gorm: g, queue: make(chan *member, 256), done: make(chan struct{})}
	go c.run()
	return c
}

// do runs fn as a member of the next group and returns its outcome once
// the group has committed. A panic in fn is raised again here, in the
// caller's goroutine.
func (c *groupCommitter) do(ctx context.Context, fn func(ctx context.Context) error) error {
	m := &member{ctx: ctx, fn: fn, done: make(chan struct{})}
	if err := c.enqueue(m); err != nil {
		return err
	}
	<-m.done
	if m.panicked != nil {
		panic(m.panicked)
	}
	if m.err != nil {
		return m.err
	}
	for _, f := range m.st.afterCommit {
		f()
	}
	return nil
}

func (c *groupCommitter) enqueue(m *member) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return errClosed
	}
	select {
	case c.queue <- m:
		return nil
	case <-m.ctx.Done():
		return m.ctx.Err()
	}
}

// run commits groups until stop closes the queue and it is empty.
func (c *groupCommitter) run() {
	defer close(c.done)
	group := make([]*member, 0, maxGroup)
	for first := range c.queue {
		group = append(group[:0], first)
	fill:
		for len(group) < maxGroup {
			select {
			case m := <-c.queue:
				group = append(group, m)
			default:
				break fill
			}
		}
		c.commit(group)
		for _, m := range group {
			close(m.done)
		}
	}
}

// stop refuses new transactions and returns once the queued ones have
// committed; Close may call it more than once.
func (c *groupCommitter) stop() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.done
}

// commit runs the group in one transaction. The members run without their
// contexts' cancellation: the driver answers a cancelled statement with
// sqlite3_interrupt, which rolls back the whole transaction, the other
// members' work with it. A member whose context has ended by the time it
// returns is rolled back to its savepoint instead, as its own transaction
// would have been.
func (c *groupCommitter) commit(group []*member) {
	tx := c.gorm.WithContext(context.Background()).Begin()
	if tx.Error != nil {
		c.fail(group, tx.Error)
		return
	}
	// A member alone needs no savepoint: the transaction is its own.
	savepoint := func(query string) error {
		if len(group) == 1 {
			return nil
		}
		return exec(tx, query)
	}
	committed := 0
	for _, m := range group {
		if m.err = m.ctx.Err(); m.err != nil {
			continue
		}
		if err := savepoint("SAVEPOINT cf_member"); err != nil {
			c.abort(tx, group, err)
			return
		}
		m.st.tx = tx
		m.run()
		end := "ROLLBACK TO cf_member; RELEASE cf_member"
		if m.err == nil && m.panicked == nil {
			if m.err = m.ctx.Err(); m.err == nil {
				end = "RELEASE cf_member"
				committed++
			}
		}
		if err := savepoint(end); err != nil {
			c.abort(tx, group, err)
			return
		}
	}
	if committed == 0 {
		_ = tx.Rollback().Error
		return
	}
	if err := tx.Commit().Error; err != nil {
		c.fail(group, err)
	}
}

// abort rolls back a transaction that can no longer serve its group and
// fails every member in it that had not failed already.
func (c *groupCommitter) abort(tx *gorm.DB, group []*member, err error) {
	_ = tx.Rollback().Error
	c.fail(group, err)
}

func (c *groupCommitter) fail(group []*member, err error) {
	for _, m := range group {
		if m.err == nil && m.panicked == nil {
			m.err = fmt.Errorf("commit: %w", err)
		}
	}
}

// run calls the member's function, keeping a panic for its caller.
func (m *member) run() {
	defer func() {
		if p := recover(); p != nil {
			m.panicked = p
		}
	}()
	m.err = m.fn(context.WithValue(context.WithoutCancel(m.ctx), txKey{}, &m.st))
}

func exec(tx *gorm.DB, query string) error {
	_, err := tx.Statement.ConnPool.ExecContext(context.Background(), query)
	return err
}
