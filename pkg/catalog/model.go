// Package catalog is skilldrop's data model: the compiled catalog the
// indexer writes under catalog/ and the request path reads, the status
// document of recent rejections, and the optimistic-concurrency loop that
// keeps concurrent indexer runs from losing updates.
package catalog

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// SchemaVersion is the version of the catalog and status documents. A reader
// refuses a document with a newer schema rather than misreading it.
const SchemaVersion = 1

// Keys the indexer owns. Nothing else writes under catalog/ or blobs/.
const (
	Key        = "catalog/catalog.json"
	StatusKey  = "catalog/status.json"
	BlobPrefix = "blobs/sha256/"
)

// BlobKey is where the validated bytes with digest d are stored.
func BlobKey(d digest.Digest) string { return BlobPrefix + d.Hex() }

// Visibility is access control, set only in agent-skills.yaml.
type Visibility string

// The visibilities.
const (
	Public        Visibility = "public"        // served to every caller
	Authenticated Visibility = "authenticated" // only with a valid API key; hidden (404) otherwise
)

// Kind separates the two collections.
type Kind string

// The kinds.
const (
	KindSkill    Kind = "skill"
	KindSubagent Kind = "subagent"
)

// ConfigSource names entries defined in agent-skills.yaml rather than dropped.
const ConfigSource = "agent-skills.yaml"

// Catalog is the whole published state. It is one JSON document so that one
// conditional write publishes a change atomically.
type Catalog struct {
	Schema int `json:"schema"`
	// Revision increases by one with every write; the request path uses it
	// (with the ETag) to know when to rebuild its compiled view.
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Skills by ID (see Entry.ID); Subagents by name; Listings by name.
	Skills    map[string]*Entry   `json:"skills"`
	Subagents map[string]*Entry   `json:"subagents"`
	Listings  map[string]*Listing `json:"listings"`
	// Config is the agent-skills.yaml in force: the last valid one.
	Config *ConfigState `json:"config,omitempty"`
}

// Entry is one skill or sub-agent with its whole version history. A
// withdrawn entry keeps its history (versions stay immutable, blobs are kept
// for audit) but is served nowhere.
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
	// Description overrides the frontmatter's when set (agent-skills.yaml).
	Description string `json:"description,omitempty"`
	// Listings are the listings that include this top-level skill by name.
	Listings []string `json:"listings,omitempty"`
	// Versions in publish order, oldest first.
	Versions []Version `json:"versions"`
	// Latest is the label of the last version published.
	Latest string `json:"latest"`
	// Withdrawn is set when the source disappeared.
	Withdrawn   bool       `json:"withdrawn,omitempty"`
	WithdrawnAt *time.Time `json:"withdrawnAt,omitempty"`
	// Contenders are keys that claimed this name while it was taken
	// (rejected with name_conflict); when the entry is withdrawn the indexer
	// re-examines them so the next one takes over.
	Contenders []string `json:"contenders,omitempty"`
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

// New returns an empty catalog of the current schema.
func New() *Catalog {
	return &Catalog{
		Schema:    SchemaVersion,
		Skills:    map[string]*Entry{},
		Subagents: map[string]*Entry{},
		Listings:  map[string]*Listing{},
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
func (e *Entry) LatestVersion() *Version { return e.Version(e.Latest) }

// Version returns the version with the label, or nil.
func (e *Entry) Version(label string) *Version {
	for i := range e.Versions {
		if e.Versions[i].Label == label {
			return &e.Versions[i]
		}
	}
	return nil
}

// Live reports whether the entry is served: not withdrawn and with a latest version.
func (e *Entry) Live() bool { return !e.Withdrawn && e.LatestVersion() != nil }

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

// VisibleTo reports whether a caller sees the entry.
func (e *Entry) VisibleTo(authenticated bool) bool {
	return authenticated || e.Visibility != Authenticated
}

// SortedSkills returns the skills in ID order.
func (c *Catalog) SortedSkills() []*Entry { return sorted(c.Skills) }

// SortedSubagents returns the sub-agents in name order.
func (c *Catalog) SortedSubagents() []*Entry { return sorted(c.Subagents) }

func sorted(m map[string]*Entry) []*Entry {
	out := make([]*Entry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}
