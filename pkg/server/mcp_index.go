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

// mcpIndex is every skill the MCP feed serves from one catalog revision,
// whoever asks: the skills in URI order with their entries encoded once,
// every file and directory by URI. It is built once per revision; what a
// caller is answered from it is its mcpView, which holds only the skills
// the caller's class may see, so every method answers a hidden skill
// exactly as an unknown one.
type mcpIndex struct {
	skills     []*mcpSkill // by URI
	skillByURI map[string]*mcpSkill
	byEntry    map[*catalog.Entry]*mcpSkill
	files      []*mcpFile // by URI
	fileByURI  map[string]*mcpFile
	dirs       map[string][]mcpChild // a directory's children, by URI
}

// mcpSkill is one skill served over MCP: its latest version.
type mcpSkill struct {
	pos   int    // in mcpIndex.skills
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

// mcpChild is an entry of a directory, and the skill it is part of.
type mcpChild struct {
	mcpItem
	skill *mcpSkill
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

// buildMCPIndex indexes every skill of view: the top-level skills, and
// each listing's own skills under the listing's root (a top-level skill a
// listing includes by name is listed once, at its own URI).
func buildMCPIndex(view *catalog.View) *mcpIndex {
	idx := &mcpIndex{skillByURI: map[string]*mcpSkill{}, byEntry: map[*catalog.Entry]*mcpSkill{},
		fileByURI: map[string]*mcpFile{}, dirs: map[string][]mcpChild{}}
	type owned struct {
		r     *mcp.Resource
		skill *mcpSkill
	}
	dirs := map[string]map[string]owned{}
	child := func(dir string, r *mcp.Resource, sk *mcpSkill) {
		if dirs[dir] == nil {
			dirs[dir] = map[string]owned{}
		}
		if _, ok := dirs[dir][r.URI]; !ok {
			dirs[dir][r.URI] = owned{r, sk}
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
			child(listingDir(listing), &mcp.Resource{URI: root, Name: e.Name, MIMEType: directoryType}, sk)
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
				child(dir, &mcp.Resource{URI: sub, Name: elem, MIMEType: directoryType}, sk)
				dir = sub
			}
			child(dir, r, sk)
		}
		sk.json = encodeJSON(entry)
		idx.skills = append(idx.skills, sk)
		idx.skillByURI[sk.uri] = sk
		idx.byEntry[e] = sk
	}
	servedBy(view, audience.Unrestricted, add)
	sort.Slice(idx.skills, func(i, j int) bool { return idx.skills[i].uri < idx.skills[j].uri })
	for i, sk := range idx.skills {
		sk.pos = i
	}
	sort.Slice(idx.files, func(i, j int) bool { return idx.files[i].resource.URI < idx.files[j].resource.URI })
	for dir, children := range dirs {
		items := make([]mcpChild, 0, len(children))
		for _, c := range children {
			items = append(items, mcpChild{mcpItem{resource: c.r, size: len(encodeJSON(c.r))}, c.skill})
		}
		sort.Slice(items, func(i, j int) bool { return items[i].resource.URI < items[j].resource.URI })
		idx.dirs[dir] = items
	}
	return idx
}

// servedBy calls add for each skill MCP serves c from view, with the
// listing it is served under ("" for the top level): the one enumeration
// both the index and every caller's view of it are made by.
func servedBy(view *catalog.View, c audience.Caller, add func(listing string, e *catalog.Entry)) {
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

// skillSet is a set of positions in mcpIndex.skills.
type skillSet []uint64

func (s skillSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

// mcpView is what one class of caller is answered from: the revision's
// index, and the skills of it the class sees. Lists, lookups and cursors
// skip the others, so an answer is the one an index of only the class's
// skills would give.
type mcpView struct {
	*mcpIndex
	sees skillSet
}

// viewFor is the view of idx (built from view) for class c.
func (idx *mcpIndex) viewFor(view *catalog.View, c audience.Caller) mcpView {
	sees := make(skillSet, (len(idx.skills)+63)/64)
	servedBy(view, c, func(_ string, e *catalog.Entry) {
		if sk := idx.byEntry[e]; sk != nil {
			sees[sk.pos/64] |= 1 << (sk.pos % 64)
		}
	})
	return mcpView{idx, sees}
}

// skill is the served skill whose SKILL.md is at uri, or nil.
func (v mcpView) skill(uri string) *mcpSkill {
	if sk := v.skillByURI[uri]; sk != nil && v.seen(sk) {
		return sk
	}
	return nil
}

// file is the served file at uri, or nil.
func (v mcpView) file(uri string) *mcpFile {
	if f := v.fileByURI[uri]; f != nil && v.seen(f.skill) {
		return f
	}
	return nil
}

// dir is the children of the directory at uri; false when it is not a
// directory of a skill the caller sees.
func (v mcpView) dir(uri string) ([]mcpChild, bool) {
	all := v.dirs[uri]
	var seen []mcpChild
	for i, c := range all {
		switch {
		case !v.seen(c.skill) && seen == nil:
			seen = append(make([]mcpChild, 0, len(all)), all[:i]...)
		case !v.seen(c.skill):
		case seen != nil:
			seen = append(seen, c)
		}
	}
	if seen == nil {
		seen = all
	}
	return seen, len(seen) > 0
}

// skillPage is the page of skills/list after cursor: the skills of
// v.skills[from:to] that v.seen holds, count of them.
func (v mcpView) skillPage(cursor string) (from, to, count int, next string, err error) {
	return pageOf(len(v.skills),
		func(i int) string { return v.skills[i].uri }, func(i int) int { return len(v.skills[i].json) }, v.sees.has, cursor)
}

// filePage is skillPage for resources/list, over v.files.
func (v mcpView) filePage(cursor string) (from, to, count int, next string, err error) {
	return pageOf(len(v.files),
		func(i int) string { return v.files[i].resource.URI }, func(i int) int { return v.files[i].size },
		func(i int) bool { return v.seen(v.files[i].skill) }, cursor)
}

// seen reports whether the view's class sees sk.
func (v mcpView) seen(sk *mcpSkill) bool { return v.sees.has(sk.pos) }

// mcpIndexes keeps the index of the newest catalog revision seen, built
// on its first use, and the views of it of at most maxClasses classes of
// caller (past that, a view is made per request).
type mcpIndexes struct {
	mu   sync.Mutex
	view *catalog.View
	kept *keptIndex
}

type keptIndex struct {
	once  sync.Once
	idx   *mcpIndex
	views *keptOnce[string, mcpView] // by audience.Class.Key
}

// get returns the view of view's index for the caller's class. A request
// still holding an older revision than the one kept gets an index of its
// own, so requests straddling a publish do not rebuild the kept one in
// turn.
func (c *mcpIndexes) get(view *catalog.View, caller audience.Caller) mcpView {
	class := view.Class(catalog.ScopeAll, caller)
	c.mu.Lock()
	switch {
	case c.view == view:
	case c.view != nil && view.Revision() < c.view.Revision():
		c.mu.Unlock()
		return buildMCPIndex(view).viewFor(view, class.Caller())
	default:
		c.view, c.kept = view, &keptIndex{views: newKeptOnce[string, mcpView](maxClasses)}
	}
	k := c.kept
	c.mu.Unlock()
	k.once.Do(func() { k.idx = buildMCPIndex(view) })
	return k.views.get(class.Key(), func() mcpView { return k.idx.viewFor(view, class.Caller()) })
}
