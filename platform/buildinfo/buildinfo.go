// Package buildinfo describes the running binary: its version, the commit it
// was built from and when. A release build stamps them with
//
//	go build -ldflags "-X github.com/contractflow/contractflow/platform/buildinfo.Version=v1.2.3
//	  -X github.com/contractflow/contractflow/platform/buildinfo.Revision=$(git rev-parse HEAD)
//	  -X github.com/contractflow/contractflow/platform/buildinfo.BuildTime=2026-11-25T10:00:00Z"
//
// and a plain `go build` inside the repository still knows the commit and
// its time from the VCS settings the Go toolchain records.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the release, or "dev" for an unstamped build.
var Version = "dev"

// BuildTime is when the binary was built (RFC 3339), when stamped.
var BuildTime = ""

// Revision is the commit, when stamped (a Docker build has no .git for the
// toolchain to read).
var Revision = ""

// Info is what the binary knows about how it was built.
type Info struct {
	Version    string
	Commit     string // "unknown" when built outside a repository
	Modified   bool   // the work tree had uncommitted changes
	CommitTime string // the commit's time, from the VCS settings
	BuildTime  string // stamped at build time, or ""
	GoVersion  string
}

// Read gathers the stamped values and the toolchain's build information.
func Read() Info {
	in := Info{Version: Version, Commit: "unknown", BuildTime: BuildTime}
	if Revision != "" {
		in.Commit = Revision
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	in.GoVersion = bi.GoVersion
	if in.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		in.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if Revision == "" {
				in.Commit = s.Value
			}
		case "vcs.time":
			in.CommitTime = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Commit returns the VCS revision recorded by the Go toolchain, if any.
func Commit() string { return Read().Commit }

// String is one line: "contractflow v1.2.3 (commit 6f1cd72, modified; built …; committed …; go1.26)".
func (in Info) String() string {
	parts := []string{"commit " + short(in.Commit)}
	if in.Modified {
		parts[0] += ", modified"
	}
	if in.BuildTime != "" {
		parts = append(parts, "built "+in.BuildTime)
	}
	if in.CommitTime != "" {
		parts = append(parts, "committed "+in.CommitTime)
	}
	if in.GoVersion != "" {
		parts = append(parts, in.GoVersion)
	}
	return fmt.Sprintf("contractflow %s (%s)", in.Version, strings.Join(parts, "; "))
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
