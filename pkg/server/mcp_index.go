package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// directoryType is the media type of a directory resource (SEP-2640).
const directoryType = "inode/directory"

// mcpIndex is what the MCP feed serves one class of caller (anonymous, or
// a valid key of an audience set) from one catalog revision: the skills in URI order
// with their entries encoded once, every file and directory by URI. What
// the caller may not see is not in it, so every method answers a hidden
// skill exactly as an unknown one.
type mcpIndex struct {
	skills     []*mcpSkill // by URI
	skillByURI map[string]*mcpSkill
	files      []*mcpFile // by URI
	fileByURI  map[string]*mcpFile
	dirs       map[string][]mcpItem // a directory's children, by URI
}

// mcpSkill is one skill served over MCP: its latest version.
type mcpSkill struct {
	uri   string // of its SKILL.md
	entry *catalog.Entry
	ver   *catalog.Version
	json  json.RawMessage // its Skill entry, as skills/list and skills/get send it
}

// mcpFile is one file of a served skill.
type mcpFile struct {
	skill *mcpSkill
	file  catalog.File
	mcpItem
}

// mcpItem is a resource as resources/list and resources/directory/read
// send it, with the size of its encoding.
type mcpItem struct {
	resource *mcp.Resource
	size     int
}

// skillEntry is SEP-2640's Skill, and skillResource its SkillResource.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
	// Meta carries the version's content scan (MetaScan) and provenance.
	Meta *skillMeta `json:"_meta,omitempty"`
}

// skillMeta is skilldrop's part of an entry's _meta: the version's content
// scan (under MetaScan), and where its signed provenance is (its bundle,
// about the whole artifact, beside it; absent for a version signed by no
// key).
type skillMeta struct {
	Scan       *scan.Result   `json:"io.github.skilldrop/scan,omitempty"`
	Provenance *mcpProvenance `json:"io.github.skilldrop/provenance,omitempty"`
}

// mcpProvenance names, by origin-root-absolute path (an MCP entry is the
// same whatever origin it is asked at), the artifact the bundle is about
// and the bundle.
type mcpProvenance struct {
	Artifact provenanceRef `json:"artifact"`
	Bundle   provenanceRef `json:"bundle"`
}

type provenanceRef struct {
	Path      string        `json:"path"`
	Digest    digest.Digest `json:"digest"`
	MediaType string        `json:"mediaType"`
}

// MetaScan is the _meta key of a skill entry's content scan (verdict,
// engine, findings, allows used): namespaced, as MCP asks of keys it does
// not define.
const MetaScan = "io.github.skilldrop/scan"

type skillResource struct {
	URI    string        `json:"uri"`
	Digest digest.Digest `json:"digest"`
	Size   int64         `json:"size"`
}

// servedVersion is the version of e served over MCP, or nil: the latest,
// unless the indexer excluded it (MCPExcluded) or it predates per-file
// pinning (no files, no frontmatter).
func servedVersion(e *catalog.Entry) *catalog.Version {
	v := e.LatestVersion()
	if v == nil || v.MCPExcluded != "" || len(v.Frontmatter) == 0 {
		return nil
	}
	for _, f := range v.Files {
		if f.Path == artifact.SkillFile {
			return v
		}
	}
	return nil
}

// buildMCPIndex indexes what a caller sees in view: the top-level skills,
// and each listing's own skills under the listing's root (a top-level
// skill a listing includes by name is listed once, at its own URI).
func buildMCPIndex(view *catalog.View, c audience.Caller) *mcpIndex {
	idx := &mcpIndex{skillByURI: map[string]*mcpSkill{}, fileByURI: map[string]*mcpFile{}, dirs: map[string][]mcpItem{}}
	dirs := map[string]map[string]*mcp.Resource{}
	child := func(dir string, r *mcp.Resource) {
		if dirs[dir] == nil {
			dirs[dir] = map[string]*mcp.Resource{}
		}
		if _, ok := dirs[dir][r.URI]; !ok {
			dirs[dir][r.URI] = r
		}
	}
	add := func(listing string, e *catalog.Entry) {
		ver := servedVersion(e)
		if ver == nil {
			return
		}
		root := routes.SkillDir(listing, e.Name)
		sk := &mcpSkill{uri: routes.SkillURI(listing, e.Name, artifact.SkillFile), entry: e, ver: ver}
		entry := skillEntry{URI: sk.uri, Resources: make([]skillResource, 0, len(ver.Files))}
		meta := skillMeta{Scan: ver.Scan}
		var fm bytes.Buffer
		if json.Compact(&fm, ver.Frontmatter) != nil {
			return // the indexer writes valid JSON; a catalog that does not is not served
		}
		entry.Frontmatter = fm.Bytes()
		if ver.Bundle != nil && e.Path != "" {
			meta.Provenance = &mcpProvenance{
				Artifact: provenanceRef{Path: e.Path, Digest: ver.Digest, MediaType: ver.Format.ContentType()},
				Bundle:   provenanceRef{Path: routes.Bundle(e.Path), Digest: ver.Bundle.Digest, MediaType: provenance.BundleMediaType},
			}
		}
		if meta != (skillMeta{}) {
			entry.Meta = &meta
		}
		if listing != "" {
			child(listingDir(listing), &mcp.Resource{URI: root, Name: e.Name, MIMEType: directoryType})
		}
		for _, f := range ver.Files {
			uri := routes.SkillURI(listing, e.Name, f.Path)
			entry.Resources = append(entry.Resources, skillResource{URI: uri, Digest: f.Digest, Size: f.Size})
			r := &mcp.Resource{URI: uri, Name: path.Base(f.Path), MIMEType: f.MediaType, Size: f.Size}
			if f.Path == artifact.SkillFile {
				r.Name, r.Description = e.Name, ver.Description
			}
			mf := &mcpFile{skill: sk, file: f, mcpItem: mcpItem{resource: r, size: len(encodeJSON(r))}}
			idx.files = append(idx.files, mf)
			idx.fileByURI[uri] = mf
			// Every directory on the way is a directory resource of its parent.
			dir, elems := root, strings.Split(f.Path, "/")
			for i, elem := range elems[:len(elems)-1] {
				sub := routes.SkillURI(listing, e.Name, strings.Join(elems[:i+1], "/"))
				child(dir, &mcp.Resource{URI: sub, Name: elem, MIMEType: directoryType})
				dir = sub
			}
			child(dir, r)
		}
		sk.json = encodeJSON(entry)
		idx.skills = append(idx.skills, sk)
		idx.skillByURI[sk.uri] = sk
	}
	for _, e := range view.Skills(c) {
		add("", e)
	}
	for _, name := range view.ListingNames() {
		members, _ := view.Listing(name, c)
		for _, e := range members {
			if e.Listing == name {
				add(name, e)
			}
		}
	}
	sort.Slice(idx.skills, func(i, j int) bool { return idx.skills[i].uri < idx.skills[j].uri })
	sort.Slice(idx.files, func(i, j int) bool { return idx.files[i].resource.URI < idx.files[j].resource.URI })
	for dir, children := range dirs {
		items := make([]mcpItem, 0, len(children))
		for _, r := range children {
			items = append(items, mcpItem{resource: r, size: len(encodeJSON(r))})
		}
		sort.Slice(items, func(i, j int) bool { return items[i].resource.URI < items[j].resource.URI })
		idx.dirs[dir] = items
	}
	return idx
}

// encodeJSON encodes v as the MCP SDK encodes results: without HTML
// escaping.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("server: encode MCP item: %v", err)) // our own types only
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// mcpIndexes keeps the indexes of the newest catalog revision seen, built
// on first use per class of caller (at most maxClasses of them; past that
// one is built per request).
type mcpIndexes struct {
	mu    sync.Mutex
	view  *catalog.View
	built map[string]*builtIndex // by audience.Class.Key
}

type builtIndex struct {
	once sync.Once
	idx  *mcpIndex
}

// get returns the index of view for the caller's class. A request still
// holding an older revision than the one kept gets an index of its own,
// so requests straddling a publish do not rebuild the kept one in turn.
func (c *mcpIndexes) get(view *catalog.View, caller audience.Caller) *mcpIndex {
	class := view.Class(catalog.ScopeAll, caller)
	c.mu.Lock()
	switch {
	case c.view == view:
	case c.view != nil && view.Revision() < c.view.Revision():
		c.mu.Unlock()
		return buildMCPIndex(view, class.Caller())
	default:
		c.view, c.built = view, map[string]*builtIndex{}
	}
	b := c.built[class.Key()]
	if b == nil && len(c.built) < maxClasses {
		b = &builtIndex{}
		c.built[class.Key()] = b
	}
	c.mu.Unlock()
	if b == nil {
		return buildMCPIndex(view, class.Caller())
	}
	b.once.Do(func() { b.idx = buildMCPIndex(view, class.Caller()) })
	return b.idx
}
