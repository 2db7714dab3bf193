package catalog

import (
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// Gone says why a published version was taken out of service. A gone
// version is in no feed, list or search; its bytes answer 410 Gone with
// the reason; it stays in the history (versions are immutable, and the
// same label can never be published again with other bytes).
type Gone struct {
	// Code is GoneRevoked or GoneScanBlocked.
	Code string `json:"code"`
	// Reason is the operator's (a revocation) or the scan's findings, for
	// the caller that asks for the bytes.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// The reasons a version is gone.
const (
	GoneRevoked     = "revoked"      // agent-skills.yaml's revoke: names it
	GoneScanBlocked = "scan_blocked" // the content scan blocks its bytes (a rescan under a newer rule pack, or a stricter policy)
)

// GoneVersion is one gone version, as the catalog's head lists them all
// (Catalog.Gone): what /.well-known/agent-skills/revocations.json serves
// without reading any history.
type GoneVersion struct {
	Kind    Kind          `json:"kind"`
	Listing string        `json:"listing,omitempty"`
	Name    string        `json:"name"`
	Version string        `json:"version"`
	Digest  digest.Digest `json:"digest"`
	Gone
}

// ID is the entry's key in its collection.
func (g GoneVersion) ID() string {
	if g.Kind == KindSubagent {
		return g.Name
	}
	return ID(g.Listing, g.Name)
}

// SetGone marks version v of e gone (g non-nil) or back in service (nil),
// keeps the catalog's list of gone versions in step, and makes e's latest
// the newest version still in service (Settle). It reports whether
// anything changed. e's history must be loaded and v one of its versions.
func (c *Catalog) SetGone(e *Entry, v *Version, g *Gone) bool {
	if (v.Gone == nil) == (g == nil) && (g == nil || v.Gone.Code == g.Code) {
		return false
	}
	i := slices.IndexFunc(c.Gone, func(x GoneVersion) bool {
		return x.Kind == e.Kind && x.Listing == e.Listing && x.Name == e.Name && x.Version == v.Label
	})
	if i >= 0 {
		c.Gone = slices.Delete(c.Gone, i, i+1)
	}
	v.Gone = nil
	if g != nil {
		gv := *g
		v.Gone = &gv
		c.Gone = append(c.Gone, GoneVersion{Kind: e.Kind, Listing: e.Listing, Name: e.Name, Version: v.Label, Digest: v.Digest, Gone: gv})
		slices.SortFunc(c.Gone, func(a, b GoneVersion) int { return a.At.Compare(b.At) })
	}
	e.Settle()
	return true
}

// Settle makes e's latest version the one in service published last, and
// moves it to the end of the history, where the catalog keeps the latest.
// With no version in service the latest stays (gone): e is then served
// nowhere (Served), though it still holds its name. The history must be
// loaded. It reports whether the latest changed.
func (e *Entry) Settle() bool {
	best := -1
	for i := range e.Versions {
		if e.Versions[i].Gone == nil && (best < 0 || !e.Versions[i].PublishedAt.Before(e.Versions[best].PublishedAt)) {
			best = i
		}
	}
	if best < 0 || (best == len(e.Versions)-1 && e.Versions[best].Label == e.Latest) {
		e.SetVersions(e.Versions)
		return false
	}
	v := e.Versions[best]
	vs := append(slices.Delete(slices.Clone(e.Versions), best, best+1), v)
	e.Latest = v.Label
	e.SetVersions(vs)
	return true
}

// Served reports whether the entry is served anywhere: live, with a latest
// version that is not gone.
func (e *Entry) Served() bool {
	if !e.Live() {
		return false
	}
	return e.LatestVersion().Gone == nil
}
