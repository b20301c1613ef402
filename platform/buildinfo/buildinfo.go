// Package buildinfo carries the version stamped into the binary at build
// time: go build -ldflags "-X github.com/contractflow/contractflow/platform/buildinfo.Version=v1.2.3".
package buildinfo

import "runtime/debug"

// Version is the release, or "dev" for an unstamped build.
var Version = "dev"

// Commit returns the VCS revision recorded by the Go toolchain, if any.
func Commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
