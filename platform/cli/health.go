package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
)

// health probes /health/ready of the service this configuration describes,
// for container health checks (the image has no curl). Not ready, or not
// answering within five seconds, is an error: exit code 1.
func health(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	target := fs.String("url", "", "probe this URL instead of http.address's /health/ready")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	if fs.NArg() > 0 {
		return errUsage
	}
	u := *target
	if u == "" {
		cfg, err := kernel.LoadConfig(opts)
		if err != nil {
			return err
		}
		u = "http://" + probeAddress(cfg.HTTP.Address) + "/health/ready"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s", u, resp.Status)
	}
	fmt.Fprintf(out, "ready: %s\n", u)
	return nil
}

// probeAddress turns a listen address into one to dial: ":8080" and
// "0.0.0.0:8080" listen on every interface, so the probe uses loopback.
func probeAddress(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
