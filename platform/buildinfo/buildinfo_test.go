package buildinfo_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/contractflow/contractflow/platform/buildinfo"
)

func TestInfoString(t *testing.T) {
	tests := []struct {
		name string
		in   buildinfo.Info
		want string
	}{
		{name: "stamped release", in: buildinfo.Info{Version: "v1.2.3", Commit: "6f1cd72aaaabbbbcccc", BuildTime: "2026-11-25T10:00:00Z", GoVersion: "go1.26.8"},
			want: "contractflow v1.2.3 (commit 6f1cd72aaaab; built 2026-11-25T10:00:00Z; go1.26.8)"},
		{name: "plain go build in a modified work tree", in: buildinfo.Info{Version: "v0.0.0-20261124-6f1cd72+dirty", Commit: "6f1cd72", Modified: true, CommitTime: "2026-11-24T09:00:00Z"},
			want: "contractflow v0.0.0-20261124-6f1cd72+dirty (commit 6f1cd72, modified; committed 2026-11-24T09:00:00Z)"},
		{name: "nothing known", in: buildinfo.Info{Version: "dev", Commit: "unknown"}, want: "contractflow dev (commit unknown)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.in.String()) })
	}
}

func TestReadPrefersStampedValues(t *testing.T) {
	defer func(v, r, b string) { buildinfo.Version, buildinfo.Revision, buildinfo.BuildTime = v, r, b }(buildinfo.Version, buildinfo.Revision, buildinfo.BuildTime)
	buildinfo.Version, buildinfo.Revision, buildinfo.BuildTime = "v9", "abc123", "2026-01-01T00:00:00Z"
	in := buildinfo.Read()
	assert.Equal(t, "v9", in.Version)
	assert.Equal(t, "abc123", in.Commit)
	assert.True(t, strings.Contains(in.String(), "built 2026-01-01T00:00:00Z"))
}
