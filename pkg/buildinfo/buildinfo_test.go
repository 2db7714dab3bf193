package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "dev"},
		{"go install at a version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "85cb68f3a1b2c3d4e5f6", "vcs.modified", "false")}, "dev-85cb68f3a1b2"},
		{"a modified checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "85cb68f", "vcs.modified", "true")}, "dev-85cb68f-dirty"},
		{"nothing recorded", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := fromBuildInfo(tt.info); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLinkTimeVersionWins(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v9.9.9"
	if Version() != "v9.9.9" || AppID() != "skilldrop-v9.9.9" {
		t.Fatalf("Version %q, AppID %q", Version(), AppID())
	}
	version = strings.Repeat("x", 80)
	if len(AppID()) != 50 {
		t.Fatalf("AppID is %d characters, the SDK takes 50", len(AppID()))
	}
}
