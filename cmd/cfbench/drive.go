package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// errExhausted ends a worker when its scenario has no work left (the
// transition scenario runs out of contracts in DangSoanThao). It is not an
// error of the request.
var errExhausted = errors.New("no work left")

// op is one measured unit of work: an HTTP request with its whole response
// read, a raw database transaction or one password hash. seq numbers the
// operations of a run from 0, so an op can pick distinct work by it.
type op func(ctx context.Context, worker, seq int) error

// limits bound a run: it ends when the window closes or after maxOps
// operations, whichever comes first. Operations in flight when the window
// closes finish and count; the elapsed time includes them.
type limits struct {
	Clients  int
	Duration time.Duration
	MaxOps   int
}

// result is what one run measured.
type result struct {
	Name     string
	Group    string // "http" or "raw"
	Clients  int
	Ops      int // finished operations, failed ones included
	Errors   int
	Elapsed  time.Duration
	Lat      []time.Duration // every finished operation, sorted
	FirstErr string
	Note     string

	PeakRSS int64         // server's peak RSS during the run, bytes (0: not measured)
	CPU     time.Duration // CPU time the server (raw: this process) spent on the run
	Ratio   float64       // to the raw limit named by RawOf (0: none)
	RawOf   string
}

// add folds another run of the same work into r: the rounds of a
// scenario measured in turns with another (budgetMoves).
func (r *result) add(o result) {
	r.Clients, r.Group, r.RawOf = o.Clients, o.Group, o.RawOf
	r.Ops += o.Ops
	r.Errors += o.Errors
	r.Elapsed += o.Elapsed
	r.CPU += o.CPU
	r.Lat = append(r.Lat, o.Lat...)
	slices.Sort(r.Lat)
	r.PeakRSS = max(r.PeakRSS, o.PeakRSS)
	if r.FirstErr == "" {
		r.FirstErr = o.FirstErr
	}
}

// cpuPerOp is the CPU time per finished operation.
func (r result) cpuPerOp() time.Duration {
	if r.Ops == 0 || r.CPU <= 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Ops)
}

// rate is finished operations per second.
func (r result) rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops-r.Errors) / r.Elapsed.Seconds()
}

// pct is the nearest-rank percentile p (0..1) of the latencies.
func (r result) pct(p float64) time.Duration {
	if len(r.Lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(r.Lat)))) - 1
	return r.Lat[max(0, min(i, len(r.Lat)-1))]
}

// drive runs fn from l.Clients goroutines until l.Duration has passed,
// l.MaxOps operations have started or fn reports errExhausted, and measures
// each operation's latency. ctx cancels the whole run (Ctrl-C, overall limit).
func drive(ctx context.Context, name string, l limits, fn op) result {
	deadline := time.Now().Add(l.Duration)
	var next atomic.Int64
	lat := make([][]time.Duration, l.Clients)
	errs := make([]int, l.Clients)
	var firstErr atomic.Pointer[string]
	var wg sync.WaitGroup
	start := time.Now()
	for w := range l.Clients {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				seq := int(next.Add(1) - 1)
				if seq >= l.MaxOps {
					return
				}
				t0 := time.Now()
				err := fn(ctx, w, seq)
				d := time.Since(t0)
				if errors.Is(err, errExhausted) || (err != nil && ctx.Err() != nil) {
					return
				}
				lat[w] = append(lat[w], d)
				if err != nil {
					errs[w]++
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
			}
		})
	}
	wg.Wait()
	r := result{Name: name, Clients: l.Clients, Elapsed: time.Since(start)}
	for w := range l.Clients {
		r.Lat = append(r.Lat, lat[w]...)
		r.Errors += errs[w]
	}
	slices.Sort(r.Lat)
	r.Ops = len(r.Lat)
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	return r
}

// client is a keep-alive HTTP client of one base address on 127.0.0.1:
// fasthttp's, which sends a request and reads its response in the calling
// goroutine. net/http's client hands each request to two goroutines of its
// connection and cost about 0.1 ms of CPU per request, a third of an
// inbox's server CPU, taken from the same two cores as the server; its
// wake-ups stretched the latencies this harness reports.
type client struct {
	base string
	hc   *fasthttp.HostClient
}

// requestTimeout bounds one request (an export of 100 000 rows included).
const requestTimeout = 3 * time.Minute

func newClient(base string, conns int) *client {
	return &client{base: base, hc: &fasthttp.HostClient{
		Addr:                strings.TrimPrefix(base, "http://"),
		MaxConns:            conns * 2,
		MaxConnWaitTimeout:  requestTimeout, // a caller beyond MaxConns waits, not fails
		MaxIdleConnDuration: 90 * time.Second,
		StreamResponseBody:  true, // exports are counted, not kept
	}}
}

// do sends one request and hands its response to read while it is open.
// ctx's deadline, when sooner than requestTimeout, bounds it; a request in
// flight when ctx is cancelled runs to its end (the drivers stop after it).
func (c *client) do(ctx context.Context, method, path, token string, body []byte, read func(*fasthttp.Response) error) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(c.base + path)
	req.Header.SetMethod(method)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	deadline := time.Now().Add(requestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.hc.DoDeadline(req, resp, deadline); err != nil {
		return err
	}
	return read(resp)
}

// call sends one request and reads the whole response. It fails unless the
// status is want. out, when not nil, receives the decoded JSON body.
func (c *client) call(ctx context.Context, method, path, token string, body []byte, want int, out any) error {
	return c.do(ctx, method, path, token, body, func(resp *fasthttp.Response) error {
		b := resp.Body()
		if resp.StatusCode() != want {
			return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode(), want, b[:min(len(b), 200)])
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				return fmt.Errorf("%s %s: decode: %w", method, path, err)
			}
		}
		return nil
	})
}

// download sends a GET and counts the response bytes without keeping them
// (exports).
func (c *client) download(ctx context.Context, path, token string) (int64, error) {
	var n int64
	err := c.do(ctx, fasthttp.MethodGet, path, token, nil, func(resp *fasthttp.Response) error {
		var err error
		if s := resp.BodyStream(); s != nil {
			n, err = io.Copy(io.Discard, s)
		} else {
			n = int64(len(resp.Body()))
		}
		if err != nil {
			return fmt.Errorf("GET %s: read body: %w", path, err)
		}
		if resp.StatusCode() != fasthttp.StatusOK {
			return fmt.Errorf("GET %s: status %d", path, resp.StatusCode())
		}
		return nil
	})
	return n, err
}

// close closes the idle keep-alive connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// mustJSON marshals a request body known to be marshalable.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
