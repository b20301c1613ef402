package webtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser tests drive Debian's chromium headless through chromedp. One
// Chromium serves a whole test package (starting it costs about a second);
// each Tab is a separate browser context, so each user has their own
// cookies. Call CloseBrowser from TestMain after m.Run.

var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel context.CancelFunc
	browserErr    error
	browserDir    string
)

// ChromiumPath finds the browser: $CONTRACTFLOW_CHROMIUM, else chromium,
// chromium-browser or google-chrome on the PATH.
func ChromiumPath() string {
	if p := os.Getenv("CONTRACTFLOW_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startBrowser starts the shared Chromium once. The flags keep a headless
// browser quiet on a machine without network: no background requests, no
// component updates, no sync.
func startBrowser() {
	path := ChromiumPath()
	if path == "" {
		browserErr = fmt.Errorf("chromium is not installed (apt-get install -y chromium)")
		return
	}
	browserDir, browserErr = os.MkdirTemp("", "contractflow-chromium-")
	if browserErr != nil {
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(browserDir), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider"),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancelCtx()
		cancelAlloc()
		browserErr = fmt.Errorf("start chromium %s: %w", path, err)
		return
	}
	browserCtx = ctx
	browserCancel = func() { cancelCtx(); cancelAlloc() }
}

// Main runs a package's tests and then stops the shared Chromium: a
// package with browser tests calls it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	CloseBrowser()
	os.Exit(code)
}

// CloseBrowser stops the shared Chromium, if it was started.
func CloseBrowser() {
	if browserCancel != nil {
		browserCancel()
	}
	if browserDir != "" {
		_ = os.RemoveAll(browserDir)
	}
}

// requireBrowser skips the test when Chromium is missing, except under
// CI=true, where a missing browser fails it.
func requireBrowser(t *testing.T) {
	t.Helper()
	browserOnce.Do(startBrowser)
	if browserErr == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("browser test: %v", browserErr)
	}
	t.Skipf("browser test skipped: %v", browserErr)
}

// Tab is one user's browser window, with cookies of its own.
type Tab struct {
	t    *testing.T
	ctx  context.Context
	Base string
	// Timeout bounds each Do; a page that never shows what a step waits
	// for fails the test rather than hanging it.
	Timeout time.Duration
}

// NewTab opens a window on the server at base. When the test fails, a
// screenshot of the window's last state is saved and its path printed.
func NewTab(t *testing.T, base string) *Tab {
	t.Helper()
	requireBrowser(t)
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		t.Fatalf("browser: open a window: %v", err)
	}
	tab := &Tab{t: t, ctx: ctx, Base: base, Timeout: 20 * time.Second}
	t.Cleanup(func() {
		if t.Failed() {
			tab.saveScreenshot()
		}
		cancel()
	})
	return tab
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// saveScreenshot writes the window as PNG. The test's own TempDir is
// removed when the test ends, so the picture goes to a folder named after
// the test under the system's temp folder, which outlives it.
func (tab *Tab) saveScreenshot() {
	ctx, cancel := context.WithTimeout(tab.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tab.t.Logf("browser: no screenshot: %v", err)
		return
	}
	dir := filepath.Join(os.TempDir(), "contractflow-browser-tests", unsafeName.ReplaceAllString(tab.t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tab.t.Logf("browser: no screenshot: %v", err)
		return
	}
	file := filepath.Join(dir, time.Now().Format("150405.000")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		tab.t.Logf("browser: no screenshot: %v", err)
		return
	}
	tab.t.Logf("browser: screenshot of the failing page: %s", file)
}

// Do runs browser steps and fails the test at the first that fails.
func (tab *Tab) Do(steps ...chromedp.Action[chromedp.Void]) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, tab.Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(tab.ctx, chromedp.Location())
		tab.t.Fatalf("browser at %s: %v", loc, err)
	}
}

// Open navigates to a page address and waits for its main content.
func (tab *Tab) Open(path string) {
	tab.t.Helper()
	tab.Do(chromedp.Navigate(tab.Base+path), chromedp.WaitVisible(chromedp.CSS("main")))
}

// Text returns the visible text of the first element matching a CSS
// selector.
func (tab *Tab) Text(css string) string {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, tab.Timeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		tab.t.Fatalf("browser: text of %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

// Eval evaluates a JavaScript expression in the page; a promise is
// awaited.
func Eval[T any](tab *Tab, expr string) T {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, tab.Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tab.t.Fatalf("browser: eval %s: %v", expr, err)
	}
	return v
}

// Path is the window's current address without the server's base.
func (tab *Tab) Path() string {
	tab.t.Helper()
	loc, err := chromedp.Run(tab.ctx, chromedp.Location())
	if err != nil {
		tab.t.Fatalf("browser: location: %v", err)
	}
	return strings.TrimPrefix(loc, tab.Base)
}

// SignIn fills the sign-in form and waits for the page after it.
func (tab *Tab) SignIn(email, password string) {
	tab.t.Helper()
	tab.Open("/login")
	tab.Do(
		chromedp.SendKeys(chromedp.CSS("#f-Email"), email),
		chromedp.SendKeys(chromedp.CSS("#f-Password"), password),
		chromedp.Click(chromedp.CSS("form[action='/login'] button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("form[action='/logout']")),
	)
}

// Screenshot saves the window as PNG at file (the README's pictures).
func (tab *Tab) Screenshot(file string) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, tab.Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tab.t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		tab.t.Fatalf("browser: write %s: %v", file, err)
	}
}

// WaitJS waits until a JavaScript expression is true in the page (a live
// count rising, say), failing the test after the tab's timeout.
func (tab *Tab) WaitJS(expr string) {
	tab.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, tab.Timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		tab.t.Fatalf("browser: waiting for %s: %v", expr, err)
	}
}

// ScreenshotTo saves the window as PNG in the folder named by the
// environment variable CONTRACTFLOW_SCREENSHOTS, when it is set (make
// screenshots uses it to refresh the README's pictures).
func (tab *Tab) ScreenshotTo(name string) {
	tab.t.Helper()
	dir := os.Getenv("CONTRACTFLOW_SCREENSHOTS")
	if dir == "" {
		return
	}
	tab.Screenshot(filepath.Join(dir, name))
}

// On returns the window reporting to t: a window opened by a parent test
// and used in a subtest must fail the subtest, not the parent.
func (tab *Tab) On(t *testing.T) *Tab {
	c := *tab
	c.t = t
	return &c
}
