package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// server is a real contractflow node listening on a free port, built from
// every compiled-in module, as the binary runs.
type server struct {
	URL  string
	stop func()
}

// serve starts a node with the given settings (testkit.Isolated's plus
// generous rate limits) and stops it when the test ends.
func serve(t *testing.T, set map[string]any) *server {
	t.Helper()
	set["http.address"] = "127.0.0.1:0"
	set["rateLimit.globalPerMinute"] = 1_000_000
	set["rateLimit.loginPerMinute"] = 1_000_000
	set["log.level"] = "warn"
	k, err := kernel.New(kernel.Options{Set: set, Environ: []string{}, LogOutput: io.Discard, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Serve(ctx) }()
	s := &server{}
	select {
	case addr := <-k.Listening():
		s.URL = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	t.Cleanup(s.stop)
	return s
}

// client calls the API as one user.
type client struct {
	t     testing.TB
	base  string
	token string
}

func (s *server) login(t testing.TB, email, password string) *client {
	c := &client{t: t, base: s.URL}
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	c.json("POST", "/api/auth/login", map[string]string{"email": email, "password": password}, 200, &out)
	c.token = out.AccessToken
	return c
}

// do sends a request and returns the status and body; it never fails the
// test itself, so goroutines may call it.
func (c *client) do(method, path, contentType string, body io.Reader) (int, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// json sends v as JSON, expects status and decodes the answer into out.
func (c *client) json(method, path string, v any, status int, out any) {
	c.t.Helper()
	if err := c.tryJSON(method, path, v, status, out); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) tryJSON(method, path string, v any, status int, out any) error {
	var body io.Reader
	ct := ""
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	got, b, err := c.do(method, path, ct, body)
	if err != nil {
		return err
	}
	if got != status {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, got, status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// upload attaches data to a contract and returns the attachment's id.
func (c *client) upload(contractID, name string, data []byte) (string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("purpose", "ScannedSigned")
	f, err := w.CreateFormFile("file", name)
	if err != nil {
		return "", err
	}
	_, _ = f.Write(data)
	_ = w.Close()
	got, b, err := c.do("POST", "/api/contracts/"+contractID+"/attachments", w.FormDataContentType(), &buf)
	if err != nil {
		return "", err
	}
	if got != 201 {
		return "", fmt.Errorf("upload: status %d: %s", got, b)
	}
	var out struct {
		ID string `json:"id"`
	}
	return out.ID, json.Unmarshal(b, &out)
}

// pdf is a small PDF whose body differs by n, so each attachment has its
// own checksum.
func pdf(n int) []byte {
	return []byte(fmt.Sprintf("%%PDF-1.4\n%% attachment %d %s\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%%%EOF\n", n, strings.Repeat("x", n%97)))
}

var _ = testkit.Isolated
