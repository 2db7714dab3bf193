package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// subagent publishes body as the next version of a sub-agent, the way the
// indexer records one dropped at subagents/<name>.md.
func (b *bucket) subagent(name string, vis catalog.Visibility, body []byte) *catalog.Entry {
	b.t.Helper()
	d := b.blob(body)
	e := b.cat.Subagents[name]
	if e == nil {
		e = &catalog.Entry{Name: name, Kind: catalog.KindSubagent, Source: "subagents/" + name + ".md"}
		b.cat.Subagents[name] = e
	}
	e.Visibility = vis
	b.at = b.at.Add(time.Minute)
	label := "2.0." + strconv.Itoa(len(e.Versions))
	e.Versions = append(e.Versions, catalog.Version{
		Label: label, Digest: d, Type: artifact.TypeAgentMD, Format: artifact.FormatMarkdown, Size: int64(len(body)),
		SourceKey: e.Source, PublishedAt: b.at, Description: name + " reviews things",
	})
	e.Latest = label
	return e
}

// agentMD is a valid agent definition; rev makes each version's bytes differ.
func agentMD(name string, rev int) []byte {
	return []byte(fmt.Sprintf("---\nname: %s\ndescription: %s reviews things\ntools: [read]\n---\nYou are %s (revision %d).\n", name, name, name, rev))
}

// client is an HTTP client of the feeds as a real one is: it talks to a
// listener, presents a key or not, accepts gzip and decodes it itself
// (so the test sees what was sent), and resolves every link against the
// URL of the document it came from.
type client struct {
	t   *testing.T
	hc  *http.Client
	key string
}

func newClient(t *testing.T, ts *httptest.Server, key string) *client {
	return &client{t: t, hc: ts.Client(), key: key}
}

// get fetches u and returns the status, the headers and the decoded body.
func (c *client) get(u string) (int, http.Header, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		c.t.Fatalf("GET %s: %v", u, err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("GET %s: %v", u, err)
	}
	body := readAll(c.t, resp.Body)
	_ = resp.Body.Close()
	if resp.Header.Get("Content-Encoding") == "gzip" {
		body = gunzip(c.t, body)
	}
	return resp.StatusCode, resp.Header, body
}

// follow resolves ref against from, fetches it as a JSON document into
// into, and returns its URL, against which its own links resolve.
func (c *client) follow(from *url.URL, ref string, into any) *url.URL {
	c.t.Helper()
	r, err := url.Parse(ref)
	if err != nil {
		c.t.Fatalf("link %q: %v", ref, err)
	}
	u := from.ResolveReference(r)
	status, h, body := c.get(u.String())
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" {
		c.t.Fatalf("GET %s: %d %s %.200s", u, status, h.Get("Content-Type"), body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		c.t.Fatalf("GET %s: the client cannot decode %.300s: %v", u, body, err)
	}
	return u
}

// download fetches an artifact URL and verifies it against want: 200, no
// Content-Encoding (a client would decode it and break the digest), the
// bytes hashing to the digest.
func (c *client) download(raw, want string) ([]byte, bool) {
	c.t.Helper()
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		c.t.Errorf("artifact url %q is not absolute", raw)
		return nil, false
	}
	d, err := digest.Parse(want)
	if err != nil || !lowerDigest.MatchString(want) {
		c.t.Errorf("%s: digest %q is not sha256:<64 lowercase hex> (%v)", raw, want, err)
		return nil, false
	}
	status, h, body := c.get(raw)
	switch {
	case status != http.StatusOK:
		c.t.Errorf("GET %s: %d %.200s", raw, status, body)
	case h.Get("Content-Encoding") != "":
		c.t.Errorf("GET %s: Content-Encoding %q on an artifact", raw, h.Get("Content-Encoding"))
	case !d.Verify(body):
		c.t.Errorf("GET %s: the bytes do not hash to %s", raw, want)
	default:
		return body, true
	}
	return nil, false
}

// The documents as the reference client (Netclaw.SkillClient) declares
// them: only the fields it reads, with its types ("range" is a string).
type (
	clientLink struct {
		Href string `json:"href"`
	}
	clientRoot struct {
		Schema     string `json:"$schema"`
		APIVersion string `json:"apiVersion"`
		Versions   map[string]struct {
			Self           clientLink `json:"self"`
			Skills         clientLink `json:"skills"`
			Subagents      clientLink `json:"subagents"`
			SkillSearch    clientLink `json:"skillSearch"`
			SubagentSearch clientLink `json:"subagentSearch"`
		} `json:"versions"`
	}
	clientIndex struct {
		Kind  string `json:"kind"`
		Links struct {
			Self clientLink `json:"self"`
		} `json:"links"`
		Pages []struct {
			Range string `json:"range"`
			Href  string `json:"href"`
		} `json:"pages"`
	}
	clientPage struct {
		Kind  string `json:"kind"`
		Range string `json:"range"`
		Items []struct {
			Name          string `json:"name"`
			LatestVersion string `json:"latestVersion"`
			VersionRange  struct {
				Min   string `json:"min"`
				Max   string `json:"max"`
				Count int    `json:"count"`
			} `json:"versionRange"`
			Href string `json:"href"`
		} `json:"items"`
		Links struct {
			Self clientLink `json:"self"`
		} `json:"links"`
	}
	clientIdentity struct {
		Kind          string `json:"kind"`
		Name          string `json:"name"`
		LatestVersion string `json:"latestVersion"`
		Versions      []struct {
			Version string `json:"version"`
			Digest  string `json:"digest"`
			Href    string `json:"href"`
		} `json:"versions"`
	}
	clientVersion struct {
		Kind        string `json:"kind"`
		Name        string `json:"name"`
		Version     string `json:"version"`
		Type        string `json:"type"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Digest      string `json:"digest"`
	}
)

// syncPass is one collection pass of netclaw's sync: from the collection
// index, every page it lists, each item's identity document, its latest
// version's document, then the bytes, verified. It returns the names that
// synced cleanly, in order, and the version document of each.
func (c *client) syncPass(indexURL *url.URL, indexHref string, kind catalog.Kind) ([]string, map[string]clientVersion) {
	c.t.Helper()
	prefix := "subagent"
	if kind == catalog.KindSkill {
		prefix = "skill"
	}
	var index clientIndex
	at := c.follow(indexURL, indexHref, &index)
	if index.Kind != prefix+"-index" || at.ResolveReference(mustURL(c.t, index.Links.Self.Href)).String() != at.String() {
		c.t.Fatalf("%s: kind %q self %q", at, index.Kind, index.Links.Self.Href)
	}
	if len(index.Pages) == 0 {
		c.t.Fatalf("%s lists no pages", at)
	}
	var synced []string
	docs := map[string]clientVersion{}
	for _, p := range index.Pages {
		var page clientPage
		pageURL := c.follow(at, p.Href, &page)
		if page.Kind != prefix+"-page" || page.Range != p.Range || page.Links.Self.Href != p.Href {
			c.t.Errorf("page %s: kind %q range %q self %q", pageURL, page.Kind, page.Range, page.Links.Self.Href)
		}
		for _, it := range page.Items {
			var identity clientIdentity
			idURL := c.follow(pageURL, it.Href, &identity)
			if identity.Kind != prefix || identity.Name != it.Name || identity.LatestVersion != it.LatestVersion ||
				len(identity.Versions) != it.VersionRange.Count || it.VersionRange.Max != it.LatestVersion {
				c.t.Errorf("%s: identity %+v for page item %+v", idURL, identity, it)
				continue
			}
			latest := ""
			for _, v := range identity.Versions {
				if v.Version == identity.LatestVersion {
					latest = v.Href
				}
			}
			if latest == "" {
				c.t.Errorf("%s: latestVersion %q is not among its versions", idURL, identity.LatestVersion)
				continue
			}
			var doc clientVersion
			verURL := c.follow(idURL, latest, &doc)
			if doc.Kind != prefix+"-version" || doc.Name != it.Name || doc.Version != it.LatestVersion {
				c.t.Errorf("%s: version document %+v", verURL, doc)
				continue
			}
			if kind == catalog.KindSubagent && doc.Type != string(artifact.TypeAgentMD) {
				c.t.Errorf("%s: type %q, a sub-agent must be agent-md", verURL, doc.Type)
				continue
			}
			body, ok := c.download(doc.URL, doc.Digest)
			if !ok {
				continue
			}
			name := ""
			switch {
			case kind == catalog.KindSubagent:
				a, err := skillmd.ParseAgent(body)
				if err != nil {
					c.t.Errorf("%s: not an agent definition: %v", doc.URL, err)
					continue
				}
				name = a.Name
			case doc.Type == string(artifact.TypeSkillMD):
				s, err := skillmd.ParseSkill(body)
				if err != nil {
					c.t.Errorf("%s: not a SKILL.md: %v", doc.URL, err)
					continue
				}
				name = s.Name
			default: // an archive: the digest is what a client checks before unpacking
				name = doc.Name
			}
			if name != it.Name {
				c.t.Errorf("%s: frontmatter name %q, advertised %q", doc.URL, name, it.Name)
				continue
			}
			synced = append(synced, name)
			docs[name] = doc
		}
	}
	return synced, docs
}

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return u
}

// syncBucket is a catalog with more than a page of sub-agents (so the
// pass crosses pages), a hidden one, a withdrawn one, one with history,
// and skills of every format.
func syncBucket(t testing.TB, st store.Store) *bucket {
	b := newBucket(t, st)
	for i := 0; i < 130; i++ {
		name := fmt.Sprintf("agent-%03d", i)
		b.subagent(name, catalog.Public, agentMD(name, 0))
	}
	b.subagent("changelog-reviewer", catalog.Public, agentMD("changelog-reviewer", 0))
	b.subagent("changelog-reviewer", catalog.Public, agentMD("changelog-reviewer", 1))
	b.subagent("security-reviewer", catalog.Authenticated, agentMD("security-reviewer", 0))
	b.subagent("retired-agent", catalog.Public, agentMD("retired-agent", 0)).Withdrawn = true
	b.skill("deploy-via-pr", "", catalog.Public, artifact.FormatMarkdown, skillMD("deploy-via-pr"))
	b.skill("deploy-via-pr", "", catalog.Public, artifact.FormatMarkdown, append(skillMD("deploy-via-pr"), "More steps.\n"...))
	b.entry("secret-rotation", "", "/skills/secret-rotation/SKILL.md", catalog.Authenticated, artifact.FormatMarkdown, skillMD("secret-rotation"))
	b.skill("bundle-zip", "", catalog.Public, artifact.FormatZip, zipBody)
	b.skill("bundle-tgz", "", catalog.Public, artifact.FormatTarGz, tgzBody)
	b.skill("gone", "", catalog.Public, artifact.FormatMarkdown, skillMD("gone")).Withdrawn = true
	b.publish()
	return b
}

// TestSubagentSyncConformance behaves exactly like netclaw's sub-agent
// pass over a real listener, for both auth classes: straight from
// /subagents/v1/index.json as the daemon does, and from /manifest.json
// following versions.v1 as a negotiating client does. Every sub-agent it
// may see syncs (across pages), none it may not.
func TestSubagentSyncConformance(t *testing.T) {
	st := store.NewMemory()
	syncBucket(t, st)
	h := newHarness(t, st, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
	ts := httptest.NewServer(h.srv)
	defer ts.Close()
	origin := mustURL(t, ts.URL+"/")

	public := []string{}
	for i := 0; i < 130; i++ {
		public = append(public, fmt.Sprintf("agent-%03d", i))
	}
	public = append(public, "changelog-reviewer")
	withHidden := append(slices.Clone(public), "security-reviewer")

	for _, tc := range []struct {
		name, key string
		want      []string
	}{
		{"anonymous", "", public},
		{"authenticated", goodKey, withHidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, ts, tc.key)
			t.Run("from the sub-agent index, as netclaw does", func(t *testing.T) {
				c.t = t
				var index clientIndex
				c.follow(origin, "/subagents/v1/index.json", &index)
				if len(index.Pages) < 2 {
					t.Fatalf("%d pages: the pass must cross pages", len(index.Pages))
				}
				synced, docs := c.syncPass(origin, "/subagents/v1/index.json", catalog.KindSubagent)
				slices.Sort(synced)
				if want := sorted(tc.want); !slices.Equal(synced, want) {
					t.Errorf("synced %d sub-agents %v\nwant %d %v", len(synced), synced, len(want), want)
				}
				if d := docs["changelog-reviewer"]; d.Version != "2.0.1" {
					t.Errorf("changelog-reviewer synced version %q, want the latest 2.0.1", d.Version)
				}
			})
			t.Run("from the manifest, following versions.v1", func(t *testing.T) {
				c.t = t
				var root clientRoot
				rootURL := c.follow(origin, routes.Manifest, &root)
				v1, ok := root.Versions[root.APIVersion]
				if root.Schema != manifest.Schema || root.APIVersion != "v1" || !ok {
					t.Fatalf("manifest %+v", root)
				}
				if rootURL.ResolveReference(mustURL(t, v1.Self.Href)).String() != rootURL.String() {
					t.Errorf("versions.v1.self %q is not the manifest", v1.Self.Href)
				}
				synced, _ := c.syncPass(rootURL, v1.Subagents.Href, catalog.KindSubagent)
				slices.Sort(synced)
				if want := sorted(tc.want); !slices.Equal(synced, want) {
					t.Errorf("synced %v\nwant %v", synced, want)
				}
				skills, _ := c.syncPass(rootURL, v1.Skills.Href, catalog.KindSkill)
				wantSkills := []string{"bundle-tgz", "bundle-zip", "deploy-via-pr"}
				if tc.key != "" {
					wantSkills = append(wantSkills, "secret-rotation")
				}
				if !slices.Equal(skills, wantSkills) {
					t.Errorf("skills synced %v, want %v", skills, wantSkills)
				}
				// The search links answer too, with what the caller may see.
				for _, s := range []struct{ href, hidden string }{{v1.SkillSearch.Href, "secret-rotation"}, {v1.SubagentSearch.Href, "security-reviewer"}} {
					var hits []struct{ Name string }
					c.follow(rootURL, s.href+"?q="+s.hidden, &hits)
					if found := len(hits) > 0 && hits[0].Name == s.hidden; found != (tc.key != "") {
						t.Errorf("%s?q=%s: %v", s.href, s.hidden, hits)
					}
				}
			})
		})
	}
	t.Run("a hidden sub-agent's bytes are not found anonymously", func(t *testing.T) {
		c := newClient(t, ts, goodKey)
		var doc clientVersion
		c.follow(origin, "/subagents/v1/security-reviewer/versions/2.0.0.json", &doc)
		if status, _, _ := newClient(t, ts, "").get(doc.URL); status != http.StatusNotFound {
			t.Errorf("anonymous GET %s: %d, want 404", doc.URL, status)
		}
		if !strings.HasPrefix(doc.URL, ts.URL+"/api/v1/subagents/") {
			t.Errorf("url %q is not on this origin", doc.URL)
		}
	})
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
