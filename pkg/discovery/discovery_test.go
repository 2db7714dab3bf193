package discovery

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

func skill(name, listing, path string, vis catalog.Visibility, format artifact.Format) *catalog.Entry {
	typ := artifact.TypeSkillMD
	if format != artifact.FormatMarkdown {
		typ = artifact.TypeArchive
	}
	return &catalog.Entry{
		Name: name, Kind: catalog.KindSkill, Listing: listing, Path: path, Visibility: vis, Latest: "1.0.0",
		Versions: []catalog.Version{
			{Label: "0.9.0", Digest: digest.Of([]byte(name + " old")), Type: typ, Format: format, PublishedAt: time.Unix(1, 0), Description: "old"},
			{Label: "1.0.0", Digest: digest.Of([]byte(name)), Type: typ, Format: format, PublishedAt: time.Unix(2, 0), Description: name + " does things"},
		},
	}
}

func testView() *catalog.View {
	c := catalog.New()
	ext := skill("external", "", "", catalog.Public, artifact.FormatMarkdown)
	ext.ExternalURL = "https://cdn.example.org/x/SKILL.md?v=1"
	withdrawn := skill("gone", "", "/skills/gone.md", catalog.Public, artifact.FormatMarkdown)
	withdrawn.Withdrawn = true
	override := skill("zipped", "", "/skills/zipped.zip", catalog.Public, artifact.FormatZip)
	override.Description = "from agent-skills.yaml"
	for _, e := range []*catalog.Entry{
		skill("deploy-via-pr", "", "/skills/deploy-via-pr.md", catalog.Public, artifact.FormatMarkdown),
		skill("secret-rotation", "", "/skills/secret-rotation/SKILL.md", catalog.Authenticated, artifact.FormatMarkdown),
		skill("bundle", "", "/skills/bundle.tar.gz", catalog.Public, artifact.FormatTarGz),
		override, ext, withdrawn,
		skill("partner-only", "partner-a", "/.well-known/agent-skills/partner-a/skills/partner-only.md", catalog.Public, artifact.FormatMarkdown),
		skill("hidden-only", "hidden", "/.well-known/agent-skills/hidden/skills/hidden-only.md", catalog.Authenticated, artifact.FormatMarkdown),
	} {
		c.Skills[e.ID()] = e
	}
	c.Listings["partner-a"] = &catalog.Listing{Name: "partner-a", Skills: []string{"secret-rotation", "deploy-via-pr", "gone"}}
	c.Listings["hidden"] = &catalog.Listing{Name: "hidden"}
	return catalog.Compile(c, `"e1"`)
}

var base = &url.URL{Scheme: "https", Host: "skills.example.com"}

func urls(idx Index) map[string]string {
	out := map[string]string{}
	for _, s := range idx.Skills {
		out[s.Name] = s.URL
	}
	return out
}

func names(idx Index) []string {
	out := []string{}
	for _, s := range idx.Skills {
		out = append(out, s.Name)
	}
	return out
}

func TestTopLevelFiltersAndSorts(t *testing.T) {
	v := testView()
	for _, tc := range []struct {
		name          string
		authenticated bool
		want          []string
	}{
		{"anonymous sees public live skills only", false, []string{"bundle", "deploy-via-pr", "external", "zipped"}},
		{"authenticated also sees authenticated skills", true, []string{"bundle", "deploy-via-pr", "external", "secret-rotation", "zipped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := TopLevel(v, callerOf(tc.authenticated), base)
			if idx.Schema != SchemaURL {
				t.Errorf("schema = %q", idx.Schema)
			}
			if got := names(idx); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("names = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEntryFields(t *testing.T) {
	idx := TopLevel(testView(), audience.Unrestricted, base)
	want := map[string]Skill{
		"deploy-via-pr": {Name: "deploy-via-pr", Type: "skill-md", Description: "deploy-via-pr does things",
			URL: "https://skills.example.com/skills/deploy-via-pr.md", Digest: digest.Of([]byte("deploy-via-pr")).String(), Version: "1.0.0"},
		"zipped": {Name: "zipped", Type: "archive", Description: "from agent-skills.yaml",
			URL: "https://skills.example.com/skills/zipped.zip", Digest: digest.Of([]byte("zipped")).String(), Version: "1.0.0"},
		"external": {Name: "external", Type: "skill-md", Description: "external does things",
			URL: "https://cdn.example.org/x/SKILL.md?v=1", Digest: digest.Of([]byte("external")).String(), Version: "1.0.0"},
		"secret-rotation": {Name: "secret-rotation", Type: "skill-md", Description: "secret-rotation does things",
			URL: "https://skills.example.com/skills/secret-rotation/SKILL.md", Digest: digest.Of([]byte("secret-rotation")).String(), Version: "1.0.0"},
	}
	got := map[string]Skill{}
	for _, s := range idx.Skills {
		got[s.Name] = s
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v\nwant %+v", name, got[name], w)
		}
	}
}

func TestListing(t *testing.T) {
	v := testView()
	for _, tc := range []struct {
		name          string
		listing       string
		authenticated bool
		wantOK        bool
		wantURLs      map[string]string
	}{
		{"anonymous sees public members, included and own", "partner-a", false, true, map[string]string{
			"deploy-via-pr": "https://skills.example.com/skills/deploy-via-pr.md",
			"partner-only":  "https://skills.example.com/.well-known/agent-skills/partner-a/skills/partner-only.md",
		}},
		{"authenticated sees included authenticated skill", "partner-a", true, true, map[string]string{
			"deploy-via-pr":   "https://skills.example.com/skills/deploy-via-pr.md",
			"partner-only":    "https://skills.example.com/.well-known/agent-skills/partner-a/skills/partner-only.md",
			"secret-rotation": "https://skills.example.com/skills/secret-rotation/SKILL.md",
		}},
		{"listing of hidden skills is missing for anonymous", "hidden", false, false, nil},
		{"listing of hidden skills is served when authenticated", "hidden", true, true, map[string]string{
			"hidden-only": "https://skills.example.com/.well-known/agent-skills/hidden/skills/hidden-only.md",
		}},
		{"unknown listing", "nope", true, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, ok := Listing(v, tc.listing, callerOf(tc.authenticated), base)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if got := urls(idx); !reflect.DeepEqual(got, tc.wantURLs) {
				t.Errorf("urls = %v, want %v", got, tc.wantURLs)
			}
			if got := names(idx); !sortedStrings(got) {
				t.Errorf("not sorted by name: %v", got)
			}
		})
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

func TestJSONShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		idx  Index
		want string
	}{
		{"empty index has an empty skills array", Build(nil, base), `{"$schema":"` + SchemaURL + `","skills":[]}`},
		{"entry keys", Build([]*catalog.Entry{skill("a", "", "/skills/a.md", catalog.Public, artifact.FormatMarkdown)}, base),
			`{"$schema":"` + SchemaURL + `","skills":[{"name":"a","type":"skill-md","description":"a does things",` +
				`"url":"https://skills.example.com/skills/a.md","digest":"` + digest.Of([]byte("a")).String() + `","version":"1.0.0"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.idx)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestBaseURLHandling(t *testing.T) {
	e := skill("a b", "", "/skills/a b.md", catalog.Public, artifact.FormatMarkdown)
	for _, tc := range []struct {
		name string
		base *url.URL
		want string
	}{
		{"path of base ignored", &url.URL{Scheme: "https", Host: "x.example", Path: "/prod/"}, "https://x.example/skills/a%20b.md"},
		{"port kept", &url.URL{Scheme: "http", Host: "127.0.0.1:8080"}, "http://127.0.0.1:8080/skills/a%20b.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := Build([]*catalog.Entry{e}, tc.base)
			if len(idx.Skills) != 1 || idx.Skills[0].URL != tc.want {
				t.Errorf("got %+v, want url %s", idx.Skills, tc.want)
			}
		})
	}
}

// callerOf is the caller the tests mean by authenticated: a key of every
// audience, or none.
func callerOf(authenticated bool) audience.Caller {
	if authenticated {
		return audience.Unrestricted
	}
	return audience.Anonymous
}
