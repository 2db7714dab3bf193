package manifest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCases pin every document shape, for both kinds of caller where
// visibility changes the answer.
var goldenCases = []struct {
	file     string
	path     string
	auth     bool
	pageSize int
}{
	{"root", "/manifest.json", false, 0},

	{"skills-index-anon", "/skills/v1/index.json", false, 0},
	{"skills-index-paged-anon", "/skills/v1/index.json", false, 3},
	{"skills-index-paged-auth", "/skills/v1/index.json", true, 3},
	{"skills-page-all-anon", "/skills/v1/pages/all.json", false, 0},
	{"skills-page-all-auth", "/skills/v1/pages/all.json", true, 0},
	{"skills-page-range-anon", "/skills/v1/pages/p~s.json", false, 0},
	{"skills-page-open-end-auth", "/skills/v1/pages/s~.json", true, 0},
	{"skill-identity", "/skills/v1/deploy-via-pr/index.json", false, 0},
	{"skill-identity-hotfix", "/skills/v1/pdf-tools/index.json", false, 0},
	{"skill-version-md-build-metadata", "/skills/v1/deploy-via-pr/versions/1.2.0+build.5.json", false, 0},
	{"skill-version-zip", "/skills/v1/pdf-tools/versions/2.1.0.json", false, 0},
	{"skill-version-targz", "/skills/v1/log-digest/versions/0.3.0.json", false, 0},
	{"skill-version-routes-public", "/skills/v1/support-triage/versions/1.0.0.json", false, 0},
	{"skill-version-routes-hidden-anon", "/skills/v1/security-audit/versions/1.0.0.json", false, 0},
	{"skill-version-routes-hidden-auth", "/skills/v1/security-audit/versions/1.0.0.json", true, 0},
	{"skill-version-routes-unknown", "/skills/v1/release-notes/versions/1.0.0.json", false, 0},
	{"skill-version-external", "/skills/v1/vendor-skill/versions/sha256-04fb442a6c25.json", false, 0},
	{"skill-version-authenticated", "/skills/v1/internal-runbook/versions/1.1.0.json", true, 0},

	{"subagents-index-anon", "/subagents/v1/index.json", false, 0},
	{"subagents-page-all-anon", "/subagents/v1/pages/all.json", false, 0},
	{"subagents-page-all-auth", "/subagents/v1/pages/all.json", true, 0},
	{"subagent-identity", "/subagents/v1/technical-support-diagnostician/index.json", false, 0},
	{"subagent-version", "/subagents/v1/technical-support-diagnostician/versions/1.1.0.json", false, 0},
	{"subagent-version-authenticated", "/subagents/v1/security-reviewer/versions/0.9.0.json", true, 0},

	{"api-skills-anon", "/api/v1/skills", false, 0},
	{"api-skills-auth-skip-take", "/api/v1/skills?skip=2&take=3", true, 0},
	{"api-skills-search", "/api/v1/skills?q=support", false, 0},
	{"api-skill-versions", "/api/v1/skills/pdf-tools", false, 0},
	{"api-skill-latest", "/api/v1/skills/deploy-via-pr/latest", false, 0},
	{"api-skill-version", "/api/v1/skills/deploy-via-pr/1.0.0", false, 0},
	{"api-subagents-auth", "/api/v1/subagents", true, 0},
	{"api-subagents-search", "/api/v1/subagents?q=reviewers", false, 0},
	{"api-subagent-latest", "/api/v1/subagents/changelog-reviewer/latest", false, 0},
}

func TestGoldenDocuments(t *testing.T) {
	fx := newFixture(t)
	for _, tc := range goldenCases {
		t.Run(tc.file, func(t *testing.T) {
			f := fx.feed(tc.auth)
			f.PageSize = tc.pageSize
			res := get(t, f, tc.path)
			if res.Outcome != Document {
				t.Fatalf("%s: outcome %v (%v), want a document", tc.path, res.Outcome, res.Err)
			}
			checkGolden(t, tc.file, res.Document)
		})
	}
}

func TestGoldenCheckUpdates(t *testing.T) {
	fx := newFixture(t)
	queries, err := ParseUpdateQueries([]byte(`[
		{"name": "deploy-via-pr", "version": "1.1.0"},
		{"name": "pdf-tools", "version": "2.0.1-hotfix"},
		{"name": "internal-runbook", "version": "1.0.0"},
		{"name": "no-such-skill", "version": "1.0.0"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "check-updates-anon", fx.feed(false).CheckUpdates(queries))
}

func checkGolden(t *testing.T, name string, doc any) {
	t.Helper()
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (review, then go test -update):\n%s", name, file, got)
	}
}
