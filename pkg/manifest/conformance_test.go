package manifest

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// client behaves like netclaw's sub-agent pass: it decodes only the fields
// the reference client (Netclaw.SkillClient) declares, with the same types
// — "range" is a string there — and follows links, never building a URL.
type client struct {
	t     *testing.T
	feed  *Feed
	blobs map[string][]byte
}

// fetch resolves a link relative to the base URL and decodes the document.
func (c *client) fetch(ref string, into any) {
	c.t.Helper()
	u, err := base.Parse(ref)
	if err != nil {
		c.t.Fatalf("link %q: %v", ref, err)
	}
	res := get(c.t, c.feed, u.Path)
	if res.Outcome != Document {
		c.t.Fatalf("GET %s: outcome %v (%v)", ref, res.Outcome, res.Err)
	}
	body, err := json.Marshal(res.Document)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal(body, into); err != nil {
		c.t.Fatalf("GET %s: the client cannot decode %s: %v", ref, body, err)
	}
}

// download resolves an absolute artifact url to the bytes the server would
// serve (the blob of the version Resolve names).
func (c *client) download(raw string) []byte {
	c.t.Helper()
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		c.t.Fatalf("artifact url %q is not absolute", raw)
	}
	res := get(c.t, c.feed, u.Path)
	if res.Outcome != Bytes {
		c.t.Fatalf("GET %s: outcome %v", raw, res.Outcome)
	}
	return c.blobs[res.Version.Digest.String()]
}

type link struct {
	Href string `json:"href"`
}

type selfLinks struct {
	Self link `json:"self"`
}

func TestConformanceSubagentSync(t *testing.T) {
	fx := newFixture(t)
	for _, tc := range []struct {
		auth     bool
		pageSize int
		want     []string
	}{
		{false, 0, []string{"changelog-reviewer", "technical-support-diagnostician"}},
		{false, 1, []string{"changelog-reviewer", "technical-support-diagnostician"}},
		{true, 0, []string{"changelog-reviewer", "security-reviewer", "technical-support-diagnostician"}},
	} {
		f := fx.feed(tc.auth)
		f.PageSize = tc.pageSize
		c := &client{t: t, feed: f, blobs: fx.blobs}
		var index struct {
			Kind  string    `json:"kind"`
			Links selfLinks `json:"links"`
			Pages []struct {
				Range string `json:"range"`
				Href  string `json:"href"`
			} `json:"pages"`
		}
		c.fetch("/subagents/v1/index.json", &index)
		if index.Kind != "subagent-index" || index.Links.Self.Href != "/subagents/v1/index.json" {
			t.Fatalf("index = %+v", index)
		}
		var synced []string
		for _, p := range index.Pages {
			var page struct {
				Kind  string `json:"kind"`
				Range string `json:"range"`
				Items []struct {
					Name          string `json:"name"`
					LatestVersion string `json:"latestVersion"`
					VersionRange  struct {
						Min, Max string
						Count    int
					} `json:"versionRange"`
					Href string `json:"href"`
				} `json:"items"`
				Links selfLinks `json:"links"`
			}
			c.fetch(p.Href, &page)
			if page.Kind != "subagent-page" || page.Range != p.Range || page.Links.Self.Href != p.Href {
				t.Errorf("page %s = kind %q range %q self %q", p.Href, page.Kind, page.Range, page.Links.Self.Href)
			}
			for _, it := range page.Items {
				var identity struct {
					Kind          string `json:"kind"`
					Name          string `json:"name"`
					LatestVersion string `json:"latestVersion"`
					Versions      []struct {
						Version string `json:"version"`
						Digest  string `json:"digest"`
						Href    string `json:"href"`
					} `json:"versions"`
				}
				c.fetch(it.Href, &identity)
				if identity.Kind != "subagent" || identity.Name != it.Name || identity.LatestVersion != it.LatestVersion ||
					len(identity.Versions) != it.VersionRange.Count {
					t.Errorf("identity %s = %+v, page item %+v", it.Href, identity, it)
				}
				var latestHref string
				for _, v := range identity.Versions {
					if v.Version == identity.LatestVersion {
						latestHref = v.Href
					}
				}
				var detail struct {
					Kind, Name, Version, Type, Description, URL, Digest string
				}
				c.fetch(latestHref, &detail)
				if detail.Kind != "subagent-version" || detail.Type != "agent-md" || detail.Name != it.Name || detail.Version != it.LatestVersion {
					t.Errorf("%s: detail %+v", latestHref, detail)
					continue
				}
				want, err := digest.Parse(detail.Digest)
				if err != nil {
					t.Errorf("%s: digest %q: %v", latestHref, detail.Digest, err)
					continue
				}
				body := c.download(detail.URL)
				if !want.Verify(body) {
					t.Errorf("%s: downloaded bytes do not match %s", detail.URL, detail.Digest)
					continue
				}
				agent, err := skillmd.ParseAgent(body)
				if err != nil || agent.Name != it.Name {
					t.Errorf("%s: agent.md name %v (err %v), advertised %q", detail.URL, agent, err, it.Name)
					continue
				}
				synced = append(synced, agent.Name)
			}
		}
		if mustJSON(t, synced) != mustJSON(t, tc.want) {
			t.Errorf("auth=%v pageSize=%d synced %v, want %v", tc.auth, tc.pageSize, synced, tc.want)
		}
	}
}

// TestConformanceSkillVersionShapes reads each skill version both ways
// clients do: the reference server's nested "artifact" and the flat fields.
func TestConformanceSkillVersionShapes(t *testing.T) {
	fx := newFixture(t)
	f := fx.feed(true)
	c := &client{t: t, feed: f, blobs: fx.blobs}
	for _, e := range f.View.Skills(audience.Unrestricted) {
		for _, v := range e.Versions {
			var doc struct {
				Name, Version, Type, URL, Digest string
				Artifact                         struct{ Name, Version, Type, URL, Digest string }
				RoutesToSubagent                 *struct{ Name, Href string }
			}
			c.fetch(skills.versionHref(e.Name, v.Label), &doc)
			if doc.Artifact != (struct{ Name, Version, Type, URL, Digest string }{doc.Name, doc.Version, doc.Type, doc.URL, doc.Digest}) {
				t.Errorf("%s %s: nested artifact %+v differs from the flat fields", e.Name, v.Label, doc.Artifact)
			}
			if doc.Digest != v.Digest.String() || doc.Type != string(v.Type) {
				t.Errorf("%s %s: digest %s type %s, catalog has %s %s", e.Name, v.Label, doc.Digest, doc.Type, v.Digest, v.Type)
			}
			if e.ExternalURL == "" && !v.Digest.Verify(c.download(doc.URL)) {
				t.Errorf("%s %s: bytes at %s do not verify", e.Name, v.Label, doc.URL)
			}
			if r := doc.RoutesToSubagent; r != nil {
				var identity struct{ Kind, Name string }
				c.fetch(r.Href, &identity)
				if identity.Kind != "subagent" || identity.Name != r.Name || r.Name != v.Subagent {
					t.Errorf("%s %s routes to %+v, which resolves to %+v", e.Name, v.Label, r, identity)
				}
			}
		}
	}
}
