// Package catalog is skilldrop's data model: the compiled catalog the
// indexer writes under catalog/ and the request path reads, the status
// document of recent rejections, and the optimistic-concurrency loop that
// keeps concurrent indexer runs from losing updates.
//
// The catalog is one object, so that one conditional write publishes a
// change atomically, laid out in sections (codec.go) so that each reader
// reads what it needs: the request path a small head first and the entries
// when a route needs them, never the version history of every skill; the
// indexer rewrites only the lines of what changed.
package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// SchemaVersion is the version of the catalog and status documents. A reader
// refuses a document with a newer schema rather than misreading it.
const SchemaVersion = 2

// Keys the indexer owns. Nothing else writes under catalog/ or blobs/.
const (
	Key        = artifact.CatalogPrefix + "catalog.json"
	StatusKey  = artifact.CatalogPrefix + "status.json"
	BlobPrefix = artifact.BlobsPrefix + "sha256/"
)

// BlobKey is where the validated bytes with digest d are stored.
func BlobKey(d digest.Digest) string { return BlobPrefix + d.Hex() }

// Visibility is access control, set only in agent-skills.yaml.
type Visibility string

// The visibilities.
const (
	Public        Visibility = "public"        // served to every caller
	Authenticated Visibility = "authenticated" // only with a valid API key (of Entry.Audiences, when set); hidden (404) otherwise
)

// Kind separates the two collections.
type Kind string

// The kinds.
const (
	KindSkill    Kind = "skill"
	KindSubagent Kind = "subagent"
)

// ConfigSource names entries defined in agent-skills.yaml rather than
// dropped: the config's key, which pkg/artifact owns.
const ConfigSource = artifact.ConfigKey

// Catalog is the whole published state, as the indexer reads and writes it.
type Catalog struct {
	Schema int
	// Revision increases by one with every write; the request path uses it
	// (with the ETag) to know when to rebuild its compiled view.
	Revision  int64
	UpdatedAt time.Time
	// Skills by ID (see Entry.ID); Subagents by name; Listings by name.
	Skills    map[string]*Entry
	Subagents map[string]*Entry
	Listings  map[string]*Listing
	// Config is the agent-skills.yaml in force: the last valid one.
	Config *ConfigState
	// DefaultVisibility is the deployment's default visibility, as its
	// indexer was configured (the template's DefaultVisibility): what an
	// entry gets when agent-skills.yaml sets neither its visibility nor a
	// default_visibility. "" is Public. Recorded so that every writer (a
	// workstation's re-index too) applies the deployment's.
	DefaultVisibility Visibility
	// Bucket is what the bucket held at agent-skills.yaml when the indexer
	// last looked and found something other than the config in force (nil:
	// the same). While it is set, publications are held (Source.Held).
	Bucket *BucketConfig
	// Sources are the keys under the source prefixes the indexer has
	// reconciled, with the state it read them in: a reconcile compares a
	// listing of the bucket with them and reads only what differs.
	Sources map[string]Source
	// Documents are the pre-rendered documents the request path serves
	// (or redirects to), rendered for DocumentOrigins.
	Documents       []Document
	DocumentOrigins []string
	// Gone lists every gone version (Version.Gone), oldest first.
	Gone []GoneVersion
	// ScanEngine is the scan engine (rule pack) version every version in
	// service was last scanned under; another one means a rescan is due.
	ScanEngine string
	// Signing pins the keys and signed AI Catalogs (nil: nothing is signed).
	Signing *Signing

	// stored holds the raw sections of the object c was decoded from, so an
	// update rewrites only what changed (codec.go).
	stored *stored
}

// Entry is one skill or sub-agent. Its latest version is always at hand
// (Head); its whole history only where it was loaded (Versions): the
// indexer loads it for the entries an update changes, the request path for
// the one a route asks about (View.History). A withdrawn entry keeps its
// history (versions stay immutable, blobs are kept for audit) but is
// served nowhere.
type Entry struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Listing is "" for a top-level skill, else the only listing it is published in.
	Listing string `json:"listing,omitempty"`
	// Source owns the name: the bucket key the entry was dropped as
	// (skills/x.md, listings/l/skills/x.zip, subagents/x/agent.md), or
	// ConfigSource for an entry defined in agent-skills.yaml.
	Source string `json:"source"`
	// Path is the origin-root-absolute URL path the latest bytes are served
	// at (/skills/x.md, /.well-known/agent-skills/l/skills/x.md). Empty for
	// external entries and sub-agents (served only under /api/v1/).
	Path string `json:"path,omitempty"`
	// ExternalURL is a fully-qualified URL emitted verbatim; the bytes are not re-hosted.
	ExternalURL string `json:"externalUrl,omitempty"`
	// Visibility from agent-skills.yaml; Public when unset.
	Visibility Visibility `json:"visibility"`
	// Audiences, when set, restrict an Authenticated entry to keys that
	// meet them: the entry's own in agent-skills.yaml, else (for a
	// listing's own skill) its listing's.
	Audiences audience.Set `json:"audiences,omitempty"`
	// Description overrides the frontmatter's when set (agent-skills.yaml).
	Description string `json:"description,omitempty"`
	// Listings are the listings that include this top-level skill by name.
	Listings []string `json:"listings,omitempty"`
	// Latest is the label of the last version published.
	Latest string `json:"latest"`
	// Head is the latest version, complete.
	Head *Version `json:"head,omitempty"`
	// First is the label of the oldest version and FirstPublished when it
	// was published; Count is how many versions there are.
	First          string    `json:"first,omitempty"`
	FirstPublished time.Time `json:"firstPublished,omitzero"`
	Count          int       `json:"count"`
	// Withdrawn is set when the source disappeared.
	Withdrawn   bool       `json:"withdrawn,omitempty"`
	WithdrawnAt *time.Time `json:"withdrawnAt,omitempty"`
	// Contenders are keys that claimed this name while it was taken
	// (rejected with name_conflict); when the entry is withdrawn the indexer
	// re-examines them so the next one takes over.
	Contenders []string `json:"contenders,omitempty"`

	// Versions is the whole history in publish order, oldest first, the
	// latest last; nil until loaded (HasHistory). Use SetVersions to change it.
	Versions []Version `json:"-"`
	// history is the entry's stored history, undecoded (codec.go).
	history []byte
	loaded  bool
	// read is the entry as decoded, for Encode (asread.go).
	read *asRead
	// lazy is the head as read, while Head is unset (lazyhead.go).
	lazy *lazyHead
}

// Version is one immutable published version.
type Version struct {
	Label       string          `json:"label"`
	Digest      digest.Digest   `json:"digest"`
	Type        artifact.Type   `json:"type"`
	Format      artifact.Format `json:"format"`
	Size        int64           `json:"size"`
	SourceKey   string          `json:"sourceKey,omitempty"` // the bucket key the bytes were read from
	PublishedAt time.Time       `json:"publishedAt"`
	// Description is the frontmatter's description of this version.
	Description string `json:"description"`
	// Subagent is metadata.subagent: the sub-agent this skill routes to.
	Subagent string `json:"subagent,omitempty"`
	// Frontmatter is the SKILL.md (or agent.md) frontmatter as JSON,
	// verbatim: every key the author wrote. Empty for external entries,
	// whose bytes were never read.
	Frontmatter json.RawMessage `json:"frontmatter,omitempty"`
	// Files are the version's files: a skill-md's one file, or every
	// regular file of an archive, in path order. Empty for external entries.
	Files []File `json:"files,omitempty"`
	// MCPExcluded says why this version is not served over MCP (beyond the
	// Skills extension's limits, a file too large for one response, an
	// external entry, …); "" when it is. Decided when the version is
	// indexed, so the request path never recomputes it.
	MCPExcluded string `json:"mcpExcluded,omitempty"`
	// Scan is the content scan of this version's bytes (pkg/scan), as the
	// indexer recorded it when it published the version or last rescanned
	// it: the verdict (clean or warn; block only on a version a rescan
	// took out of service, Gone) under the policy and allows of
	// agent-skills.yaml then in force, the engine (rule pack) version,
	// every finding and the allows used. nil for a version whose
	// bytes were never read (an external entry pinned by digest) or that
	// was published before scanning existed. The request path serves it
	// as recorded and never scans.
	Scan *scan.Result `json:"scan,omitempty"`
	// Gone is set when the version was taken out of service after it was
	// published (gone.go).
	Gone *Gone `json:"gone,omitempty"`
	// Bundle is the version's signed provenance (a Sigstore bundle), made
	// once when it was first published by an indexer with a signing key;
	// nil for external entries and versions published without one.
	Bundle *Bundle `json:"bundle,omitempty"`
}

// File is one file of a version: its path in the skill (SKILL.md for a
// skill-md), the SHA-256 digest and size of its bytes, and its media type.
// Its bytes are stored as a blob of their own, BlobKey(Digest), so one file
// can be re-hashed without reading an archive.
type File struct {
	Path      string        `json:"path"`
	Digest    digest.Digest `json:"digest"`
	Size      int64         `json:"size"`
	MediaType string        `json:"mediaType"`
}

// Listing is a named sub-index at /.well-known/agent-skills/<name>/.
type Listing struct {
	Name string `json:"name"`
	// Skills lists the top-level skills included by name; skills published
	// only in this listing are Entries with Listing == Name.
	Skills []string `json:"skills,omitempty"`
	// Audiences, when set, restrict the whole listing to keys that meet
	// them: for anyone else it does not exist, whatever it lists.
	Audiences audience.Set `json:"audiences,omitempty"`
}

// VisibleTo reports whether the caller may see the listing at all (its
// members are then judged one by one).
func (l *Listing) VisibleTo(c audience.Caller) bool {
	return len(l.Audiences) == 0 || c.Meets(l.Audiences)
}

// ConfigState records the agent-skills.yaml in force.
type ConfigState struct {
	Digest    digest.Digest `json:"digest"`
	ETag      string        `json:"etag,omitempty"`
	AppliedAt time.Time     `json:"appliedAt"`
	// YAML is the document itself, so the config in force survives an
	// invalid replacement and re-evaluation never needs the old object.
	YAML string `json:"yaml"`
}

// The states of agent-skills.yaml other than "the config in force" (BucketConfig.State).
const (
	ConfigMissing    = "missing"    // deleted while a config is in force
	ConfigUnreadable = "unreadable" // present, but reading it is refused (403)
	ConfigInvalid    = "invalid"    // present and read, but rejected
)

// BucketConfig is what the indexer found at agent-skills.yaml when it was
// not the config in force.
type BucketConfig struct {
	State string `json:"state"`
	// ETag of the object found ("" when missing), so a later round that
	// finds the same object knows it was judged already.
	ETag  string    `json:"etag,omitempty"`
	Since time.Time `json:"since"`
}

// Source is one source key as the indexer last read it.
type Source struct {
	ETag string `json:"etag"`
	// Held is set for a publication waiting for a valid config (Catalog.Bucket).
	Held bool `json:"held,omitempty"`
	// Gone, when set, is when a round found the key deleted (Unix
	// seconds): a tombstone, kept for GoneFor so that a round which read
	// the key before the deletion and lost its race to the round that
	// found it gone learns so from the catalog. ETag and Held are empty.
	Gone int64 `json:"gone,omitempty"`
}

// GoneFor is how long a tombstone stays in Sources.
const GoneFor = time.Hour

// Present reports whether the source was there when last read.
func (s Source) Present() bool { return s.Gone == 0 }

// New returns an empty catalog of the current schema.
func New() *Catalog {
	return &Catalog{
		Schema:    SchemaVersion,
		Skills:    map[string]*Entry{},
		Subagents: map[string]*Entry{},
		Listings:  map[string]*Listing{},
		Sources:   map[string]Source{},
	}
}

// ID is the key of a skill in Catalog.Skills: the name for top-level
// skills, "<listing>/<name>" for skills published only in a listing.
func ID(listing, name string) string {
	if listing == "" {
		return name
	}
	return listing + "/" + name
}

// ID returns the entry's key in its collection.
func (e *Entry) ID() string { return ID(e.Listing, e.Name) }

// LatestVersion returns the latest version, or nil when there is none.
func (e *Entry) LatestVersion() *Version {
	if !e.HasHistory() {
		if h := e.head(); h != nil && h.Label == e.Latest {
			return h
		}
		return nil
	}
	return e.Version(e.Latest)
}

// Version returns the version with the label, or nil. Before the history
// is loaded only the latest version is known.
func (e *Entry) Version(label string) *Version {
	if !e.HasHistory() {
		if h := e.head(); h != nil && h.Label == label {
			return h
		}
		return nil
	}
	for i := range e.Versions {
		if e.Versions[i].Label == label {
			return &e.Versions[i]
		}
	}
	return nil
}

// HasHistory reports whether Versions holds the whole history: it was
// loaded (LoadHistory), set, or built in memory.
func (e *Entry) HasHistory() bool { return e.loaded || e.Versions != nil }

// VersionCount is how many versions of the entry are in service (gone
// versions are in no list, so no count tells of them either).
func (e *Entry) VersionCount() int {
	if e.HasHistory() {
		n, _ := e.inService()
		return n
	}
	return e.Count
}

// FirstVersion is the label of the oldest version in service ("" when
// there is none).
func (e *Entry) FirstVersion() string {
	if e.HasHistory() {
		if _, first := e.inService(); first != nil {
			return first.Label
		}
		return ""
	}
	return e.First
}

// Created is when the oldest version in service was published.
func (e *Entry) Created() time.Time {
	if e.HasHistory() {
		if _, first := e.inService(); first != nil {
			return first.PublishedAt
		}
		return time.Time{}
	}
	return e.FirstPublished
}

// inService counts the history's versions that are not gone and returns
// the one published first (Settle moves the latest to the end, so the
// history's first is not always the oldest).
func (e *Entry) inService() (n int, first *Version) {
	for i := range e.Versions {
		v := &e.Versions[i]
		if v.Gone != nil {
			continue
		}
		n++
		if first == nil || v.PublishedAt.Before(first.PublishedAt) {
			first = v
		}
	}
	return n, first
}

// SetVersions replaces the history (oldest first, the latest last) and
// keeps Head, First and Count in step with it.
func (e *Entry) SetVersions(vs []Version) {
	e.Versions, e.loaded, e.history = vs, true, nil
	e.summarize()
}

// summarize derives Head, First and Count from the history.
func (e *Entry) summarize() {
	e.Count, e.First, e.FirstPublished, e.Head = e.VersionCount(), e.FirstVersion(), e.Created(), nil
	if v := e.Version(e.Latest); v != nil {
		h := *v
		e.Head = &h
	}
}

// Live reports whether the entry is served: not withdrawn and with a latest version.
func (e *Entry) Live() bool { return !e.Withdrawn && e.LatestVersion() != nil }

// LiveAsRead is Live without decoding a head read from the catalog, which
// is taken to be the latest version, as its label said when it was read:
// for looking over every entry of a large catalog, as a publish does.
func (e *Entry) LiveAsRead() bool {
	if !e.Withdrawn && e.Head == nil && e.lazy != nil && !e.HasHistory() {
		return true
	}
	return e.Live()
}

// EffectiveDescription is the config override, else the latest version's.
func (e *Entry) EffectiveDescription() string {
	if e.Description != "" {
		return e.Description
	}
	if v := e.LatestVersion(); v != nil {
		return v.Description
	}
	return ""
}

// OrPublic is v, or Public when v is unset.
func (v Visibility) OrPublic() Visibility {
	if v == "" {
		return Public
	}
	return v
}

// ParseVisibility reads a visibility as an operator writes it: public or
// authenticated ("" is unset).
func ParseVisibility(s string) (Visibility, error) {
	switch v := Visibility(s); v {
	case "", Public, Authenticated:
		return v, nil
	}
	return "", fmt.Errorf("visibility %q: want public or authenticated", s)
}

// VisibleTo reports whether the caller may see the entry: the one
// visibility decision every surface makes (the View's accessors, the
// stored documents, search, MCP, the web catalog). A public entry is
// everyone's; an authenticated one needs a valid key, which must meet the
// entry's audiences when it has any. A listing's own entries carry their
// listing's audiences (the indexer records them), and a listing that has
// audiences is judged by Listing.VisibleTo as well.
func (e *Entry) VisibleTo(c audience.Caller) bool {
	return e.Visibility != Authenticated || c.Meets(e.Audiences)
}

// SortedSkills returns the skills in ID order.
func (c *Catalog) SortedSkills() []*Entry { return sorted(c.Skills) }

// SortedSubagents returns the sub-agents in name order.
func (c *Catalog) SortedSubagents() []*Entry { return sorted(c.Subagents) }

func sorted(m map[string]*Entry) []*Entry {
	ids := slices.Sorted(maps.Keys(m)) // keys are IDs
	out := make([]*Entry, len(ids))
	for i, id := range ids {
		out[i] = m[id]
	}
	return out
}
