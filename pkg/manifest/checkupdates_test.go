package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
)

func TestParseUpdateQueries(t *testing.T) {
	items := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"name":"s%d","version":"1.0.0"}`, i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	tests := []struct {
		name, body, code, mention string
		want                      int
	}{
		{"empty array", `[]`, "", "", 0},
		{"one item", `[{"name":"deploy-via-pr","version":"1.0.0"}]`, "", "", 1},
		{"build metadata and whitespace", " \n[{\"name\":\"a\",\"version\":\"1.0.0+build.5\"}]\n", "", "", 1},
		{"unknown fields are ignored", `[{"name":"a","version":"1","digest":"x"}]`, "", "", 1},
		{"a hundred items", items(100), "", "", 100},
		{"a hundred and one", items(101), CodeTooManyItems, "101 items", 0},
		{"empty body", ``, CodeInvalidBody, "JSON array", 0},
		{"object", `{"name":"a","version":"1"}`, CodeInvalidBody, "JSON array", 0},
		{"null", `null`, CodeInvalidBody, "JSON array", 0},
		{"broken JSON", `[{"name":"a"`, CodeInvalidBody, "not valid JSON", 0},
		{"trailing garbage", `[] []`, CodeInvalidBody, "not valid JSON", 0},
		{"item not an object", `["a"]`, CodeInvalidBody, "item 0", 0},
		{"missing version", `[{"name":"a"}]`, CodeInvalidBody, "item 0", 0},
		{"numeric version", `[{"name":"a","version":1}]`, CodeInvalidBody, "item 0", 0},
		{"bad name", `[{"name":"a","version":"1"},{"name":"Bad_Name","version":"1"}]`, CodeInvalidName, "item 1", 0},
		{"empty name", `[{"name":"","version":"1"}]`, CodeInvalidName, "item 0", 0},
		{"bad label", `[{"name":"a","version":"1.0/2"}]`, CodeInvalidVersion, "item 0", 0},
		{"empty label", `[{"name":"a","version":""}]`, CodeInvalidVersion, "item 0", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseUpdateQueries([]byte(tc.body))
			if tc.code == "" {
				if err != nil || len(got) != tc.want {
					t.Fatalf("got %d items, err %v; want %d items", len(got), err, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Message, tc.mention) {
				t.Fatalf("err = %v, want code %s mentioning %q", err, tc.code, tc.mention)
			}
		})
	}
}

func TestCheckUpdates(t *testing.T) {
	fx := newFixture(t)
	S, A := catalog.KindSkill, catalog.KindSubagent
	tests := []struct {
		name      string
		kind      catalog.Kind
		auth      bool
		q         UpdateQuery
		found     bool
		latest    string
		hasUpdate bool
	}{
		{"older version has an update", S, false, UpdateQuery{"deploy-via-pr", "1.0.0"}, true, "1.2.0+build.5", true},
		{"latest has none", S, false, UpdateQuery{"deploy-via-pr", "1.2.0+build.5"}, true, "1.2.0+build.5", false},
		{"a label the server never had differs", S, false, UpdateQuery{"deploy-via-pr", "9.9.9"}, true, "1.2.0+build.5", true},
		{"hidden skill for an authenticated caller", S, true, UpdateQuery{"internal-runbook", "1.0.0"}, true, "1.1.0", true},
		{"hidden skill for an anonymous caller", S, false, UpdateQuery{"internal-runbook", "1.0.0"}, false, "", false},
		{"withdrawn", S, true, UpdateQuery{"old-skill", "1.0.0"}, false, "", false},
		{"sub-agents are not skills", S, true, UpdateQuery{"changelog-reviewer", "1.0.0"}, false, "", false},
		{"unknown", S, true, UpdateQuery{"never-published", "1.0.0"}, false, "", false},
		{"sub-agent with an update", A, false, UpdateQuery{"technical-support-diagnostician", "1.0.0"}, true, "1.1.0", true},
		{"sub-agent at its latest", A, false, UpdateQuery{"changelog-reviewer", "1.0.0"}, true, "1.0.0", false},
		{"hidden sub-agent for an authenticated caller", A, true, UpdateQuery{"security-reviewer", "0.1.0"}, true, "0.9.0", true},
		{"hidden sub-agent for an anonymous caller", A, false, UpdateQuery{"security-reviewer", "0.1.0"}, false, "", false},
		{"withdrawn sub-agent", A, true, UpdateQuery{"retired-agent", "1.0.0"}, false, "", false},
		{"skills are not sub-agents", A, true, UpdateQuery{"deploy-via-pr", "1.0.0"}, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := fx.feed(tc.auth).CheckUpdatesOf(tc.kind, []UpdateQuery{tc.q})[0]
			if tc.kind == S {
				if b := fx.feed(tc.auth).CheckUpdates([]UpdateQuery{tc.q})[0]; mustJSON(t, a) != mustJSON(t, b) {
					t.Errorf("CheckUpdates %+v differs from CheckUpdatesOf(skill) %+v", b, a)
				}
			}
			if a.Name != tc.q.Name || a.CurrentVersion != tc.q.Version || a.Found != tc.found ||
				a.LatestVersion != tc.latest || a.HasUpdate != tc.hasUpdate || (a.LatestPublishedAt != nil) != tc.found ||
				a.LatestDigest.IsZero() == tc.found {
				t.Errorf("answer = %+v", a)
			}
		})
	}
}
