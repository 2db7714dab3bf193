package leakmatrix

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

// Request is one request of the matrix, as a client sends it.
type Request struct {
	Method, Target string // Target: path and query
	Header         map[string]string
	Body           string
}

// Response is what came back, as the matrix compares it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// compared are the headers a response is compared on (X-Request-Id and
// the like differ by design).
var compared = []string{"Cache-Control", "Content-Type", "Content-Length", "Content-Encoding", "ETag", "Vary",
	"WWW-Authenticate", "Allow", "Referrer-Policy", "Location"}

// Do answers a request for a caller (who presents key as it presents its
// key, in a header or a path).
type Do func(r Request) Response

// Requests are every route and method of every surface, for every name of
// the fixture and the ghost, as the caller asks them.
func (c Caller) Requests(key string) []Request {
	var out []Request
	get := func(target string, hdr ...string) {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			h := map[string]string{}
			for i := 0; i+1 < len(hdr); i += 2 {
				h[hdr[i]] = hdr[i+1]
			}
			out = append(out, Request{Method: m, Target: target, Header: h})
		}
	}
	get(routes.RFCIndex)
	get(routes.RFCIndex, "Accept-Encoding", "gzip")
	for _, l := range Listings() {
		get(routes.ListingIndex(l))
		get(routes.ListingScopedIndex(l))
	}
	for _, e := range append(entries, entry{name: Ghost, key: "skills/" + Ghost + ".md"}) {
		switch {
		case e.agent:
		case e.listing != "":
			get(routes.ListingPrefix(e.listing) + strings.TrimPrefix(e.key, "listings/"+e.listing+"/"))
		default:
			get("/" + e.key)
			out = append(out, Request{Method: http.MethodDelete, Target: "/" + e.key})
		}
	}
	for _, l := range Listings()[:2] {
		get(routes.ListingPrefix(l) + "skills/" + Ghost + ".md")
	}
	get(routes.Manifest)
	for _, feed := range []string{routes.SkillFeed, routes.SubagentFeed} {
		get(feed + "/index.json")
		get(routes.AllPage(feed))
		get(feed + "/pages/a~n.json")
	}
	for _, n := range names() {
		for _, feed := range []string{routes.SkillFeed, routes.SubagentFeed} {
			get(feed + "/" + n + "/index.json")
			get(feed + "/" + n + "/versions/" + Version + ".json")
			out = append(out, Request{Method: http.MethodPost, Target: feed + "/" + n + "/index.json"})
		}
		for _, api := range []string{routes.SkillAPI, routes.SubagentAPI} {
			get(api + "/" + n)
			get(api + "/" + n + "/latest")
			get(api + "/" + n + "/" + Version)
		}
		get(routes.SkillAPI + "/" + n + "/" + Version + "/SKILL.md")
		get(routes.SubagentAPI + "/" + n + "/" + Version + "/agent.md")
	}
	for _, q := range []string{"", "?q=skill", "?q=alpha", "?q=partners-c-guide", "?q=leak+matrix&take=3", "?skip=2&take=2"} {
		get(routes.SkillAPI + q)
		get(routes.SubagentAPI + q)
	}
	var items []string
	for _, n := range names() {
		items = append(items, fmt.Sprintf(`{"name":%q,"version":"0.1"}`, n))
	}
	body := "[" + strings.Join(items, ",") + "]"
	for _, p := range []string{routes.SkillCheckUpdates, routes.SubagentCheckUpdates} {
		out = append(out, Request{Method: http.MethodPost, Target: p, Header: map[string]string{"Content-Type": "application/json"}, Body: body})
	}
	// Provenance: the revocations, the AI Catalog and every artifact's
	// Sigstore bundle (404 for each when the bucket is not signed).
	get(routes.Revocations)
	get(routes.AICatalog)
	for _, e := range append(entries, entry{name: Ghost, key: "skills/" + Ghost + ".md"}) {
		switch {
		case e.agent:
		case e.listing != "":
			get(routes.Bundle(routes.ListingPrefix(e.listing) + strings.TrimPrefix(e.key, "listings/"+e.listing+"/")))
		default:
			get(routes.Bundle("/" + e.key))
		}
	}
	// The web catalog: its list (with search and filters), every skill,
	// sub-agent and listing page, and the ghost's.
	for _, q := range []string{"", "?kind=skill", "?kind=subagent", "?q=alpha", "?q=leak+matrix", "?q=partners-c-guide",
		"?listing=alpha", "?listing=partners", "?listing=no-such-listing", "?q=skill&kind=skill&page=2"} {
		get(routes.Catalog + q)
	}
	for _, e := range append(entries, entry{name: Ghost}) {
		switch {
		case e.agent:
			get(routes.CatalogSubagent(e.name))
		default:
			get(routes.CatalogSkill(e.listing, e.name))
		}
	}
	get(routes.CatalogSubagent(Ghost))
	for _, l := range Listings() {
		get(routes.CatalogListing(l))
		get(routes.CatalogSkill(l, Ghost))
	}
	out = append(out, c.mcpRequests()...)
	if c.InPath {
		for i := range out {
			out[i].Target = routes.Capability(key, out[i].Target)
		}
	} else if key != "" {
		for i := range out {
			if out[i].Header == nil {
				out[i].Header = map[string]string{}
			}
			out[i].Header["Authorization"] = "Bearer " + key
		}
	}
	return out
}

// mcpRequests are every MCP method over every URI the fixture could have.
func (c Caller) mcpRequests() []Request {
	var out []Request
	id := 0
	rpc := func(method string, params string) {
		id++
		out = append(out, Request{Method: http.MethodPost, Target: routes.MCP,
			Header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
			Body:   fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)})
	}
	rpc("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"leak-matrix","version":"1"}}`)
	rpc("skills/list", `{}`)
	rpc("resources/list", `{}`)
	var uris []string
	for _, e := range append(entries, entry{name: Ghost}) {
		if e.agent {
			continue
		}
		root := "skill://" + e.name
		if e.listing != "" {
			root = "skill://" + e.listing + ".listing/" + e.name
		}
		uris = append(uris, root)
		if e.name == Ghost {
			for _, l := range Listings()[:2] {
				uris = append(uris, "skill://"+l+".listing/"+Ghost)
			}
		}
	}
	for _, u := range uris {
		rpc("skills/get", fmt.Sprintf(`{"uri":%q}`, u+"/SKILL.md"))
		rpc("resources/read", fmt.Sprintf(`{"uri":%q}`, u+"/SKILL.md"))
		rpc("resources/directory/read", fmt.Sprintf(`{"uri":%q}`, u))
	}
	for _, l := range Listings() {
		rpc("resources/directory/read", fmt.Sprintf(`{"uri":%q}`, "skill://"+l+".listing"))
	}
	// A cursor naming a hidden skill: the page after its place in the names.
	for _, n := range []string{"alpha-deploy", Ghost} {
		rpc("skills/list", fmt.Sprintf(`{"cursor":%q}`, cursor("skill://"+n+"/SKILL.md")))
	}
	return out
}

// cursor is a skills/list cursor after uri, as the server issues them.
func cursor(uri string) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b strings.Builder
	src := []byte(uri)
	for i := 0; i < len(src); i += 3 {
		var n uint32
		k := min(3, len(src)-i)
		for j := range 3 {
			n <<= 8
			if j < k {
				n |= uint32(src[i+j])
			}
		}
		for j := 0; j < k+1; j++ {
			b.WriteByte(enc[(n>>(18-6*j))&63])
		}
	}
	return b.String()
}

// Run asks every caller every request of the matrix through do (one
// server that answers them all, in turn, so its caches hold every class
// at once) and holds each answer, byte for byte, to what fresh(caller)
// answers (a server that has answered nothing else, asked with the
// caller's twin: another key of the same audiences) and to what
// filtered(caller) answers (a fresh server over a catalog holding only
// what the caller may see), and to the caller's expectations: exactly its
// skills in the indexes and listings, 401 for a refused one, and every
// hidden entry answered as the ghost, which does not exist.
func Run(t *testing.T, do, fresh, filtered func(c Caller) Do) {
	for _, c := range Callers() {
		t.Run(c.String(), func(t *testing.T) {
			warm, cold := do(c), fresh(c)
			var only Do
			if !c.Refused {
				only = filtered(c)
			}
			reqs, twins := c.Requests(c.Key), c.Requests(c.Twin)
			got := make([]Response, len(reqs))
			for i, r := range reqs {
				got[i] = warm(r)
				want := cold(twins[i])
				if !same(got[i], want, c.Key, c.Twin, c.id, c.twinID) {
					t.Errorf("%s %s: %s\nthe fresh render for the caller's set: %s", r.Method, redact(r.Target, c.Key), describe(got[i]), describe(want))
				}
				if only != nil {
					if w := only(r); !same(got[i], w, c.Key, c.Key, c.id, c.id) {
						t.Errorf("%s %s: %s\nover a catalog of only what the caller may see: %s", r.Method, redact(r.Target, c.Key), describe(got[i]), describe(w))
					}
				}
				if c.Refused && got[i].Status != http.StatusUnauthorized {
					t.Errorf("%s %s: status %d, want 401 for a refused key", r.Method, redact(r.Target, c.Key), got[i].Status)
				}
				if c.Key != "" && (bytes.Contains(got[i].Body, []byte(c.Key)) && !c.InPath || strings.Contains(fmt.Sprint(got[i].Header), c.Key)) {
					t.Errorf("%s %s: the answer carries the key", r.Method, redact(r.Target, c.Key))
				}
			}
			if c.Refused {
				return
			}
			c.checkViews(t, warm)
			c.checkHidden(t, reqs, got)
		})
	}
}

// checkViews holds the indexes and listings to the caller's expectations.
func (c Caller) checkViews(t *testing.T, do Do) {
	index := func(path string) ([]string, int) {
		r := Request{Method: http.MethodGet, Target: path, Header: map[string]string{}}
		if c.InPath {
			r.Target = routes.Capability(c.Key, path)
		} else if c.Key != "" {
			r.Header["Authorization"] = "Bearer " + c.Key
		}
		resp := do(r)
		var idx struct {
			Skills []struct {
				Name, URL string
			}
		}
		if resp.Status == http.StatusOK {
			if err := json.Unmarshal(resp.Body, &idx); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		var out []string
		for _, s := range idx.Skills {
			out = append(out, s.Name)
			if c.InPath && !strings.Contains(s.URL, routes.Capability(c.Key, "/")) {
				t.Errorf("%s: %s is not under the capability URL: %s", path, s.Name, redact(s.URL, c.Key))
			}
		}
		return out, resp.Status
	}
	if got, _ := index(routes.RFCIndex); !slices.Equal(got, c.TopLevel()) {
		t.Errorf("the RFC index lists %v, want %v", got, c.TopLevel())
	}
	for _, l := range Listings() {
		want, ok := c.Listing(l)
		for _, p := range []string{routes.ListingIndex(l), routes.ListingScopedIndex(l)} {
			got, status := index(p)
			if ok != (status == http.StatusOK) || !slices.Equal(got, want) {
				t.Errorf("%s: status %d, %v; want %v (found %v)", p, status, got, want, ok)
			}
		}
	}
}

// checkHidden holds every answer about a hidden entry to the answer about
// the ghost: the same request with the ghost's name answers the same.
func (c Caller) checkHidden(t *testing.T, reqs []Request, got []Response) {
	byTarget := map[string]Response{}
	for i, r := range reqs {
		byTarget[r.Method+" "+r.Target+" "+rpcID.ReplaceAllString(r.Body, `"id":0`)] = got[i]
	}
	for _, hidden := range c.Hidden() {
		for i, r := range reqs {
			if !strings.Contains(r.Target+r.Body, hidden) {
				continue
			}
			g := r
			g.Target = strings.ReplaceAll(r.Target, hidden, Ghost)
			g.Body = rpcID.ReplaceAllString(strings.ReplaceAll(r.Body, hidden, Ghost), `"id":0`)
			ghost, ok := byTarget[g.Method+" "+g.Target+" "+g.Body]
			if !ok {
				continue // a request naming every entry at once (check-updates) is checked below
			}
			mine := got[i]
			mine.Body, ghost.Body = rpcID.ReplaceAll(mine.Body, []byte(`"id":0`)), rpcID.ReplaceAll(ghost.Body, []byte(`"id":0`))
			if !same(mine, ghost, hidden, Ghost, "", "") {
				t.Errorf("%s %s names the hidden %s: %s\nthe same about %s: %s", r.Method, redact(r.Target, c.Key), hidden, describe(got[i]), Ghost, describe(ghost))
			}
		}
	}
	for i, r := range reqs {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Target, routes.CheckUpdates) {
			for _, hidden := range c.Hidden() {
				if bytes.Contains(got[i].Body, []byte(`"name":"`+hidden+`","currentVersion":"0.1","found":true`)) {
					t.Errorf("check-updates finds the hidden %s", hidden)
				}
			}
		}
	}
}

// rpcID is a JSON-RPC id, which differs between otherwise equal requests.
var rpcID = regexp.MustCompile(`"id":[0-9]+`)

// same compares two answers, the one about key as the other about twin
// (and, where a page names the key by its id, about id as the other about
// twinID).
func same(a, b Response, key, twin, id, twinID string) bool {
	if a.Status != b.Status {
		return false
	}
	norm := func(r Response, from, fromID string) []byte {
		body := r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
				if plain, err := io.ReadAll(zr); err == nil {
					body = plain
				}
			}
		}
		if from != "" {
			body = bytes.ReplaceAll(body, []byte(from), []byte("«key»"))
		}
		if fromID != "" {
			body = bytes.ReplaceAll(body, []byte(fromID), []byte("«key id»"))
		}
		return body
	}
	if !bytes.Equal(norm(a, key, id), norm(b, twin, twinID)) {
		return false
	}
	for _, h := range compared {
		if h == "Content-Length" && (a.Header.Get(h) == "" || b.Header.Get(h) == "") {
			continue // whether a transport adds it to a body it was not told the length of; the bodies are equal
		}
		if a.Header.Get(h) != b.Header.Get(h) {
			// Content-Length and ETag follow the body, which a key in a
			// path changes by its length only.
			if (h == "Content-Length" || h == "ETag") && len(key) != len(twin) {
				continue
			}
			if h == "ETag" && key != twin && bytes.Contains(norm(a, "", ""), []byte(key)) {
				continue
			}
			return false
		}
	}
	return true
}

func describe(r Response) string {
	b := r.Body
	if len(b) > 400 {
		b = append(b[:400:400], "…"...)
	}
	var hs []string
	for _, h := range compared {
		if v := r.Header.Get(h); v != "" {
			hs = append(hs, h+": "+v)
		}
	}
	return fmt.Sprintf("%d [%s] %s", r.Status, strings.Join(hs, "; "), b)
}

// redact keeps a key out of test output.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "«key»")
}
