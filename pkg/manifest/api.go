package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/search"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Limits of the /api/v1 API.
const (
	DefaultTake = 50
	MaxTake     = 200
	// MaxSkip bounds skip so a hostile number is a clear 400, not a
	// silently empty page.
	MaxSkip = 100000
	// MaxCheckUpdates is how many items one check-updates request may ask about.
	MaxCheckUpdates = 100
)

// Summary is one item of /api/v1/skills and /api/v1/subagents. Its first
// fields are the reference server's summary; Type, Digest, URL (of the
// latest version) and Href (the identity document) are skilldrop's.
type Summary struct {
	Name          string        `json:"name"`
	Description   string        `json:"description"`
	LatestVersion string        `json:"latestVersion"`
	VersionCount  int           `json:"versionCount"`
	CreatedAt     time.Time     `json:"createdAt"` // when the first version was published
	UpdatedAt     time.Time     `json:"updatedAt"` // when the latest version was published
	Type          artifact.Type `json:"type"`
	Digest        digest.Digest `json:"digest"`
	URL           string        `json:"url"`
	Href          string        `json:"href"`
}

// VersionSummary is /api/v1/{skills,subagents}/{name}/{version} (and
// .../latest) and an item of /api/v1/{skills,subagents}/{name}: the
// version's Artifact, then what the API adds. SHA256 is the bare hex digest
// the reference server's clients read; Digest the same in the "sha256:"
// form the feeds use.
type VersionSummary struct {
	Artifact
	SHA256      string    `json:"sha256"`
	SizeBytes   int64     `json:"sizeBytes"`
	PublishedAt time.Time `json:"publishedAt"`
	IsLatest    bool      `json:"isLatest"`
	Href        string    `json:"href"` // the version document
	// Scan is the version's content scan, as the version document's.
	Scan *scan.Result `json:"scan,omitempty"`
}

// Search returns the entries of a collection the caller can see that match
// q, ranked by package search (every entry in name order when q is empty),
// then skips skip and keeps at most take (Resolve validates both; negative
// values count as 0 here). It searches f.SearchIndex, or without one an
// index built for this call alone.
func (f *Feed) Search(kind catalog.Kind, q string, skip, take int) []Summary {
	skip, take = max(skip, 0), max(take, 0)
	c := collectionOf(kind)
	idx := f.SearchIndex
	if idx == nil {
		idx = NewSearchIndex(f.View)
	}
	ranked := idx.search(c, search.Parse(q), f.Caller, skip, take)
	out := make([]Summary, len(ranked))
	for i, e := range ranked {
		latest := e.LatestVersion()
		a := f.artifact(c, e, latest)
		out[i] = Summary{
			Name: e.Name, Description: e.EffectiveDescription(), LatestVersion: latest.Label,
			VersionCount: e.VersionCount(), CreatedAt: e.Created().UTC(),
			UpdatedAt: latest.PublishedAt.UTC(), Type: a.Type, Digest: a.Digest, URL: a.URL,
			Href: c.identityHref(e.Name),
		}
	}
	return out
}

// Versions returns every version of an entry the caller can see, newest
// first; ok is false when there is no such entry.
func (f *Feed) Versions(ctx context.Context, kind catalog.Kind, name string) (out []VersionSummary, ok bool, err error) {
	c := collectionOf(kind)
	e := c.get(f.View, name, f.Caller)
	if e == nil {
		return nil, false, nil
	}
	history, err := f.View.History(ctx, e)
	if err != nil {
		return nil, false, err
	}
	vers := newestFirst(history)
	out = make([]VersionSummary, len(vers))
	for i, v := range vers {
		out[i] = f.versionSummary(c, e, v)
	}
	return out, true, nil
}

// VersionSummary returns one version of an entry the caller can see; the
// label "latest" names the latest version. ok is false when there is no
// such entry or version.
func (f *Feed) VersionSummary(ctx context.Context, kind catalog.Kind, name, label string) (VersionSummary, bool, error) {
	c := collectionOf(kind)
	e := c.lookup(f.View, name, f.Caller)
	if e == nil {
		return VersionSummary{}, false, nil
	}
	if label == routes.Latest {
		label = e.Latest
	}
	v, err := f.View.Version(ctx, e, label)
	if err != nil || v == nil {
		return VersionSummary{}, false, err
	}
	if v.Gone != nil {
		return VersionSummary{}, false, &goneError{v.Gone}
	}
	return f.versionSummary(c, e, v), true, nil
}

func (f *Feed) versionSummary(c *collection, e *catalog.Entry, v *catalog.Version) VersionSummary {
	return VersionSummary{
		Artifact: f.artifact(c, e, v),
		SHA256:   v.Digest.Hex(), SizeBytes: v.Size, PublishedAt: v.PublishedAt.UTC(),
		IsLatest: v.Label == e.Latest, Href: c.versionHref(e.Name, v.Label), Scan: v.Scan,
	}
}

// UpdateQuery is one item of a check-updates request: a skill and the
// version the client has.
type UpdateQuery struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// UpdateAnswer answers one UpdateQuery, in the reference server's shape
// plus Found. For a skill the caller cannot see — unknown, hidden or
// withdrawn alike — Found is false, LatestVersion and LatestDigest are empty,
// LatestPublishedAt is absent and HasUpdate is false.
type UpdateAnswer struct {
	Name              string        `json:"name"`
	CurrentVersion    string        `json:"currentVersion"`
	Found             bool          `json:"found"`
	LatestVersion     string        `json:"latestVersion"`
	LatestDigest      digest.Digest `json:"latestDigest"`
	LatestPublishedAt *time.Time    `json:"latestPublishedAt,omitempty"`
	// HasUpdate is true when the latest version's label differs from CurrentVersion.
	HasUpdate bool `json:"hasUpdate"`
}

// ParseUpdateQueries decodes a check-updates body: a JSON array of at most
// MaxCheckUpdates {"name", "version"} objects, each with a valid skill name
// and version label. Unknown fields are ignored. The error is an *Error
// (CodeInvalidBody, CodeTooManyItems, CodeInvalidName or CodeInvalidVersion)
// naming the offending item. Bounding the body's size is the caller's job.
func ParseUpdateQueries(body []byte) ([]UpdateQuery, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, &Error{Code: CodeInvalidBody, Message: `the body must be a JSON array of {"name", "version"} objects`}
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, &Error{Code: CodeInvalidBody, Message: "the body is not valid JSON: " + err.Error()}
	}
	if len(raw) > MaxCheckUpdates {
		return nil, &Error{Code: CodeTooManyItems, Message: fmt.Sprintf("%d items given, at most %d allowed per request", len(raw), MaxCheckUpdates)}
	}
	out := make([]UpdateQuery, len(raw))
	for i, r := range raw {
		var fields struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		if err := json.Unmarshal(r, &fields); err != nil || fields.Name == nil || fields.Version == nil {
			return nil, &Error{Code: CodeInvalidBody, Message: fmt.Sprintf(`item %d: want an object with string fields "name" and "version"`, i)}
		}
		if err := skillmd.ValidateName(*fields.Name); err != nil {
			return nil, &Error{Code: CodeInvalidName, Message: fmt.Sprintf("item %d: %s", i, detail(err))}
		}
		if err := skillmd.ValidateVersion(*fields.Version); err != nil {
			return nil, &Error{Code: CodeInvalidVersion, Message: fmt.Sprintf("item %d: %s", i, detail(err))}
		}
		out[i] = UpdateQuery{Name: *fields.Name, Version: *fields.Version}
	}
	return out, nil
}

// detail is a validation error's message without its code prefix.
func detail(err error) string {
	if e, ok := skillmd.AsError(err); ok {
		return e.Field + " " + e.Msg
	}
	return err.Error()
}

// CheckUpdates answers each query, in order, with the latest version of
// the top-level skill of that name the caller can see.
func (f *Feed) CheckUpdates(queries []UpdateQuery) []UpdateAnswer {
	return f.CheckUpdatesOf(catalog.KindSkill, queries)
}

// CheckUpdatesOf is CheckUpdates for either collection: with
// catalog.KindSubagent it answers from the sub-agents the caller can see
// (POST /api/v1/subagents/check-updates).
func (f *Feed) CheckUpdatesOf(kind catalog.Kind, queries []UpdateQuery) []UpdateAnswer {
	c := collectionOf(kind)
	out := make([]UpdateAnswer, len(queries))
	for i, q := range queries {
		a := UpdateAnswer{Name: q.Name, CurrentVersion: q.Version}
		if e := c.get(f.View, q.Name, f.Caller); e != nil {
			latest := e.LatestVersion()
			at := latest.PublishedAt.UTC()
			a.Found, a.LatestVersion, a.LatestDigest, a.LatestPublishedAt = true, latest.Label, latest.Digest, &at
			a.HasUpdate = latest.Label != q.Version
		}
		out[i] = a
	}
	return out
}
