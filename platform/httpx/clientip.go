package httpx

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ClientIPFunc tells the address of the client behind a request. Rate limits
// and access logs key on it, so it must be an address the client cannot
// choose.
type ClientIPFunc func(c *fiber.Ctx) string

// NewClientIP returns the client-address rule for a list of trusted proxies,
// each an IP ("10.0.0.7") or a CIDR ("10.0.0.0/8"); anything else is an error.
//
// A request from an untrusted peer is answered with the peer's own address:
// whatever X-Forwarded-For it sends is the client's invention. A request from
// a trusted proxy is answered with the right-most X-Forwarded-For hop that is
// not itself a trusted proxy, because each proxy appends the address it saw
// and only the part to the right of the first untrusted hop was written by
// proxies we trust. Fiber's c.IP() with a ProxyHeader returns the left-most
// value instead, which the client controls.
func NewClientIP(trustedProxies []string) (ClientIPFunc, error) {
	trusted := make([]netip.Prefix, 0, len(trustedProxies))
	for _, entry := range trustedProxies {
		p, err := parseTrusted(entry)
		if err != nil {
			return nil, err
		}
		trusted = append(trusted, p)
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(c *fiber.Ctx) string {
		peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
		if !ok {
			return c.Context().RemoteIP().String()
		}
		peer = peer.Unmap()
		if !isTrusted(peer) {
			return peer.String()
		}
		if hop, ok := forwardedClient(c, isTrusted); ok {
			return hop.String()
		}
		return peer.String()
	}, nil
}

// parseTrusted reads one trusted-proxy entry as a prefix; a single address
// becomes a prefix of its full length.
func parseTrusted(entry string) (netip.Prefix, error) {
	s := strings.TrimSpace(entry)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("trusted proxy %q is neither an IP nor a CIDR", entry)
		}
		p = p.Masked()
		if p.Addr().Is4In6() {
			// ::ffff:10.0.0.0/104 names IPv4 addresses; compare them unmapped.
			bits := p.Bits() - 96
			if bits < 0 {
				return netip.Prefix{}, fmt.Errorf("trusted proxy %q is neither an IP nor a CIDR", entry)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), bits)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("trusted proxy %q is neither an IP nor a CIDR", entry)
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// forwardedClient walks every X-Forwarded-For value, over all header lines in
// order, from right to left. It skips trusted proxies and returns the first
// untrusted address. A value that is not an address ends the walk without an
// answer: the chain of proxies we trust is broken there, and what lies to its
// left is not theirs.
func forwardedClient(c *fiber.Ctx, isTrusted func(netip.Addr) bool) (netip.Addr, bool) {
	lines := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
	for i := len(lines) - 1; i >= 0; i-- {
		hops := bytes.Split(lines[i], []byte{','})
		for j := len(hops) - 1; j >= 0; j-- {
			raw := strings.TrimSpace(string(hops[j]))
			if raw == "" {
				continue
			}
			a, ok := parseHop(raw)
			if !ok {
				return netip.Addr{}, false
			}
			if !isTrusted(a) {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}

// parseHop accepts an address, optionally with a port ("1.2.3.4:5678",
// "[2001:db8::1]:443"), as some proxies write them.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
