package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/httpx"
)

// app.Test connects from 0.0.0.0, so that is the peer every case sees.
const testPeer = "0.0.0.0"

func TestClientIP(t *testing.T) {
	cases := []struct {
		name    string
		trusted []string
		xff     []string // one entry per header line
		want    string
	}{
		{name: "no proxies trusted, no header", want: testPeer},
		{name: "untrusted peer with a spoofed header gets the peer", trusted: []string{"10.0.0.1"},
			xff: []string{"198.51.100.7"}, want: testPeer},
		{name: "trusted peer without a header gets the peer", trusted: []string{testPeer}, want: testPeer},
		{name: "trusted peer gets the only hop", trusted: []string{testPeer},
			xff: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "trusted peer gets the right-most hop, not the client's left-most claim", trusted: []string{testPeer},
			xff: []string{"1.1.1.1, 198.51.100.7"}, want: "198.51.100.7"},
		{name: "trusted hops are skipped", trusted: []string{testPeer, "10.0.0.2"},
			xff: []string{"1.1.1.1, 198.51.100.7, 10.0.0.2"}, want: "198.51.100.7"},
		{name: "CIDR trust skips a range of proxies", trusted: []string{"0.0.0.0/32", "10.0.0.0/8"},
			xff: []string{"1.1.1.1,198.51.100.7,10.1.2.3 , 10.200.0.9"}, want: "198.51.100.7"},
		{name: "several header lines read as one list", trusted: []string{testPeer, "10.0.0.0/8"},
			xff: []string{"1.1.1.1, 198.51.100.7", "10.0.0.5"}, want: "198.51.100.7"},
		{name: "the last header line is the nearest", trusted: []string{testPeer},
			xff: []string{"1.1.1.1", "198.51.100.7"}, want: "198.51.100.7"},
		{name: "every hop trusted gets the peer", trusted: []string{testPeer, "10.0.0.0/8"},
			xff: []string{"10.0.0.3, 10.0.0.4"}, want: testPeer},
		{name: "a hop with a port", trusted: []string{testPeer},
			xff: []string{"198.51.100.7:51234"}, want: "198.51.100.7"},
		{name: "an IPv6 hop", trusted: []string{testPeer},
			xff: []string{"2001:db8::1"}, want: "2001:db8::1"},
		{name: "an IPv6 hop with a port", trusted: []string{testPeer},
			xff: []string{"[2001:db8::1]:443"}, want: "2001:db8::1"},
		{name: "an IPv4-mapped hop reads as IPv4", trusted: []string{testPeer},
			xff: []string{"::ffff:198.51.100.7"}, want: "198.51.100.7"},
		{name: "a malformed hop ends the walk at the peer", trusted: []string{testPeer},
			xff: []string{"198.51.100.7, unknown"}, want: testPeer},
		{name: "empty hops are ignored", trusted: []string{testPeer},
			xff: []string{"198.51.100.7, ,"}, want: "198.51.100.7"},
		{name: "a trusted IPv6 CIDR does not trust IPv4", trusted: []string{"::/0"},
			xff: []string{"198.51.100.7"}, want: testPeer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ip, err := httpx.NewClientIP(tc.trusted)
			require.NoError(t, err)
			app := fiber.New()
			app.Get("/", func(c *fiber.Ctx) error { return c.SendString(ip(c)) })
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, v := range tc.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			resp, err := app.Test(req, -1)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(body))
		})
	}
}

func TestNewClientIPRejectsInvalidEntries(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		wantErr bool
	}{
		{name: "IPv4", entries: []string{"10.0.0.1"}},
		{name: "IPv6", entries: []string{"2001:db8::1"}},
		{name: "CIDRs", entries: []string{"10.0.0.0/8", "2001:db8::/32"}},
		{name: "a CIDR with host bits", entries: []string{"10.1.2.3/8"}},
		{name: "empty list", entries: nil},
		{name: "a host name", entries: []string{"proxy.internal"}, wantErr: true},
		{name: "a bad CIDR", entries: []string{"10.0.0.0/33"}, wantErr: true},
		{name: "an empty entry", entries: []string{""}, wantErr: true},
		{name: "an address with a port", entries: []string{"10.0.0.1:80"}, wantErr: true},
		{name: "one bad entry among good ones", entries: []string{"10.0.0.1", "nope"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ip, err := httpx.NewClientIP(tc.entries)
			if tc.wantErr {
				require.Error(t, err)
				assert.Nil(t, ip)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, ip)
		})
	}
}
