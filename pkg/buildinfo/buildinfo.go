// Package buildinfo owns the build's version: the one string the CLI
// prints (skilldrop --version), the API function reports as the MCP
// server version, and every AWS client the CLI and the functions build
// sends in its User-Agent.
//
// The Makefile sets it at link time:
//
//	go build -ldflags "-X github.com/skilldrop/skilldrop/pkg/buildinfo.version=v1.2.0"
//
// Without it, the Go toolchain's build information stands in: the module
// version of `go install …@v1.2.0`, else the VCS revision stamped by a
// build from a checkout, else "dev".
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// version is set with -ldflags -X; empty means "not set".
var version string

// Name is the product name, in user agents and the MCP server info.
const Name = "skilldrop"

// Version returns the build's version.
func Version() string {
	if version != "" {
		return version
	}
	info, _ := debug.ReadBuildInfo()
	return fromBuildInfo(info)
}

// fromBuildInfo is the version the toolchain recorded, or "dev".
func fromBuildInfo(info *debug.BuildInfo) string {
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "dev-" + rev
}

// AppID is the application id the AWS SDK sends in its User-Agent
// (aws.Config.AppID, "app/<id>"): the name and version, within the SDK's
// 50 characters.
func AppID() string {
	id := Name + "-" + strings.TrimSpace(Version())
	if len(id) > 50 {
		id = id[:50]
	}
	return id
}
