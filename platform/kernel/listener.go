package kernel

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// silentConns is the service's listener: it remembers the connections that
// have not sent a byte yet, so that a shutdown can close them. fasthttp
// counts a new connection as busy before its first byte arrives, so a
// client that connects and sends nothing (a browser's speculative
// connection, a pool's spare) held every shutdown until the connection's
// read timeout (http.readTimeout, longer than http.shutdownTimeout): the
// service then exited with an error after the whole shutdown timeout.
type silentConns struct {
	net.Listener
	mu     sync.Mutex
	silent map[*watchedConn]struct{}
}

func newSilentConns(ln net.Listener) *silentConns {
	return &silentConns{Listener: ln, silent: map[*watchedConn]struct{}{}}
}

func (l *silentConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	w := &watchedConn{Conn: c, l: l, at: time.Now()}
	l.mu.Lock()
	l.silent[w] = struct{}{}
	l.mu.Unlock()
	return w, nil
}

// closeSilent closes the connections that have sent nothing for a second
// since they were accepted, once the listener is closed: a request is not
// on its way on them (a second leaves a request that is time to be read,
// as net/http's shutdown does with five).
func (l *silentConns) closeSilent() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for w := range l.silent {
		if time.Since(w.at) >= silentFor {
			_ = w.Conn.Close()
			delete(l.silent, w)
		}
	}
}

// silentFor is how long a connection that sent nothing is let be at shutdown.
const silentFor = time.Second

func (l *silentConns) heard(w *watchedConn) {
	l.mu.Lock()
	delete(l.silent, w)
	l.mu.Unlock()
}

// watchedConn tells its listener when its first byte arrives.
type watchedConn struct {
	net.Conn
	l     *silentConns
	at    time.Time // accepted
	heard atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() && c.heard.CompareAndSwap(false, true) {
		c.l.heard(c)
	}
	return n, err
}

// NetConn is the connection c watches (as tls.Conn's): the WebSockets
// size its kernel buffers.
func (c *watchedConn) NetConn() net.Conn { return c.Conn }

func (c *watchedConn) Close() error {
	if c.heard.CompareAndSwap(false, true) {
		c.l.heard(c)
	}
	return c.Conn.Close()
}
