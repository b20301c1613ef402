package httpx_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/httpx"
)

// A request that does not arrive within the read timeout is answered 408
// request_timeout, not 400 validation_failed.
func TestReadTimeoutIsItsOwnProblem(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: httpx.ErrorHandler(slog.New(slog.DiscardHandler)),
		ReadTimeout: 100 * time.Millisecond, DisableStartupMessage: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET /api/x HTTP/1.1\r\nHost: a\r\n")) // the headers never end
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	var p map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
	require.Equal(t, "request_timeout", p["code"])
}
