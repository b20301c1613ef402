package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"golang.org/x/crypto/argon2"
)

// rawTransaction measures the writes of a transition as one database/sql
// transaction, no HTTP and no service code: compare-and-set UPDATE of the
// contract, INSERT of the approval, COMMIT. It runs on the benchmark's own
// database with the server stopped: on SQLite a second writer next to the
// server's would fight it for the file lock (busy waits) and measure the
// contention rather than the limit. Like the server, it writes SQLite
// through one connection (transactions queue in database/sql) and Postgres
// through a pool as large as the concurrency.
//
// The pool holds contracts in the initial phase that the HTTP scenario did
// not touch. Each pass over the pool moves them one step further along the
// engine's normal path (g.Normal, up to the phase before sealPhase, so no
// contract code is due), which keeps every operation a compare-and-set on
// a distinct (contract, phase); deadlines follow the steps' SLA hours.
func rawTransaction(ctx context.Context, d *database, g *graph, pool []string, actorID string, l limits) (result, error) {
	conns := l.Clients
	if d.driver == "sqlite" {
		conns = 1
	}
	db, err := d.open(conns)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	upd, err := db.PrepareContext(ctx, d.rebind(sqlRawContractMove))
	if err != nil {
		return result{}, err
	}
	defer upd.Close()
	ins, err := db.PrepareContext(ctx, d.rebind(sqlRawContractApproval))
	if err != nil {
		return result{}, err
	}
	defer ins.Close()
	passes := len(g.Normal) - 2 // stop before the terminal phase
	if i := slices.Index(g.Normal, sealPhase); i > 0 {
		passes = i - 1
	}
	n := len(pool)
	if n == 0 {
		return result{}, errors.New("no contracts left for the raw transaction")
	}
	l.MaxOps = min(l.MaxOps, n*passes)
	fn := func(ctx context.Context, _, seq int) error {
		id, step := pool[seq%n], seq/n
		from, to := g.Normal[step], g.Normal[step+1]
		now := time.Now().UTC()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		res, err := tx.StmtContext(ctx, upd).ExecContext(ctx, to, now.Add(time.Duration(g.slaHours(to))*time.Hour), false, now, actorID, id, from)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return fmt.Errorf("contract %s not in %s (%d rows, %v)", id, from, k, err)
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, uuid.Must(uuid.NewV7()).String(), id, from, to, actorID, "Approve", "", now); err != nil {
			return err
		}
		return tx.Commit()
	}
	cpu := selfCPU()
	r := drive(ctx, rawTx, l, fn)
	r.CPU = selfCPU() - cpu
	r.Group = "raw"
	connsNote := fmt.Sprintf("a pool of %d connections", conns)
	if d.driver == "sqlite" {
		connsNote = "one connection, as the server's single SQLite writer"
	}
	r.Note = "UPDATE … WHERE id AND phase + INSERT approval + COMMIT via database/sql, " + connsNote
	return r, nil
}

// rawHashRun measures the password hash alone: argon2id with the service's
// parameters (m = 19 456 KiB, t = 2, p = 1, 32-byte key), as a login
// verifies it once.
func rawHashRun(ctx context.Context, l limits) result {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	pw := []byte(benchPassword)
	cpu := selfCPU()
	r := drive(ctx, rawHash, l, func(context.Context, int, int) error {
		_ = argon2.IDKey(pw, salt, 2, 19456, 1, 32)
		return nil
	})
	r.CPU = selfCPU() - cpu
	r.Group, r.Note = "raw", rawHashNote
	return r
}

const rawHashNote = "argon2.IDKey m=19456 KiB t=2 p=1, 32 bytes"

// rawFiberHandler serves GET /ping → {"status":"ok"} from a bare Fiber app
// on another port of 127.0.0.1 and drives it with the same load generator:
// the ceiling of any GET through Fiber on this machine.
func rawFiberHandler(ctx context.Context, l limits) (result, error) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/ping", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	c := newClient("http://"+ln.Addr().String(), l.Clients)
	defer func() {
		c.close() // else the shutdown waits for the keep-alive connections
		_ = app.ShutdownWithTimeout(5 * time.Second)
		<-served
	}()
	if err := c.call(ctx, http.MethodGet, "/ping", "", nil, http.StatusOK, nil); err != nil {
		return result{}, err
	}
	get := func(ctx context.Context, _, _ int) error {
		return c.call(ctx, http.MethodGet, "/ping", "", nil, http.StatusOK, nil)
	}
	drive(ctx, "fiber warm-up", limits{Clients: l.Clients, Duration: time.Second, MaxOps: 200}, get)
	cpu := selfCPU()
	r := drive(ctx, rawFiber, l, get)
	r.CPU = selfCPU() - cpu
	r.Group, r.Note = "raw", `fiber.New(); GET /ping → c.JSON({"status":"ok"}) in this process; its CPU includes the client's`
	return r, nil
}
