package indexer

import (
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// The fates of an upload (Fate.Result).
const (
	// FatePublished: the upload's bytes are the latest version of the
	// entry its key owns, served.
	FatePublished = "published"
	// FateHeld: the indexer read the upload and holds it until a valid
	// agent-skills.yaml is in force.
	FateHeld = "held"
	// FateRejected: the indexer refused the upload (Code, Message).
	FateRejected = "rejected"
	// FatePending: the catalog and the status document say nothing of the
	// upload yet.
	FatePending = "pending"
)

// Fate is what the catalog and its status document hold of one upload.
type Fate struct {
	Result        string
	Code, Message string // a rejection's
	// Version is the label of the entry's latest version, when published,
	// and Scan its content scan as the catalog records it.
	Version string
	Scan    *scan.Result
}

// Upload names the object an operator uploaded: its key, the ETag the
// store gave it and the digest of its bytes, and the time of the newest
// rejection the status document held for the key before (a rejection is
// the upload's only when newer).
type Upload struct {
	Key        string
	ETag       string
	Digest     digest.Digest
	RejectedAt time.Time
}

// FateOf reads what c and st hold of u, as `skilldrop publish` reports it
// after the upload rather than what it foresaw: held when the catalog
// records the key as waiting for a valid config (the object, or the key
// while the hold lasts), rejected when the
// status document refused these bytes at the key since, published when
// they are the latest version of the entry the key owns, else pending.
func FateOf(c *catalog.Catalog, st *catalog.Status, u Upload) Fate {
	// Bytes the key's entry serves already are published, held key or not:
	// uploading them again changes nothing, and nothing waits for a config.
	if v := servedFrom(c, u.Key); v != nil && v.Digest.Equal(u.Digest) {
		return Fate{Result: FatePublished, Version: v.Label, Scan: v.Scan}
	}
	// A key held while the hold lasts holds whatever is uploaded to it: a
	// new ETag of a held key rides along with the next catalog write.
	if src, ok := c.Sources[u.Key]; ok && src.Held && (sameETag(src.ETag, u.ETag) || c.Bucket != nil) {
		msg := "the indexer holds it until a valid agent-skills.yaml is in force"
		if b := c.Bucket; b != nil {
			msg = "the bucket's agent-skills.yaml is " + b.State + " (since " + b.Since.UTC().Format(time.RFC3339) +
				"), so the indexer holds it until a valid one is in force; `skilldrop status` says why the config was refused"
		}
		return Fate{Result: FateHeld, Message: msg}
	}
	if st != nil {
		for _, r := range st.Rejections { // newest first
			if r.Key != u.Key || !r.Time.After(u.RejectedAt) {
				continue
			}
			if (!r.Digest.IsZero() && r.Digest.Equal(u.Digest)) || (r.Digest.IsZero() && sameETag(r.ETag, u.ETag)) {
				return Fate{Result: FateRejected, Code: r.Code, Message: r.Message}
			}
		}
	}
	return Fate{Result: FatePending}
}

// servedFrom is the latest version of the live entry key publishes in c,
// when it is in service (not revoked, not withdrawn by the scan), or nil.
func servedFrom(c *catalog.Catalog, key string) *catalog.Version {
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if e.Source == key && !e.Withdrawn {
				if v := e.LatestVersion(); v != nil && v.Gone == nil {
					return v
				}
			}
		}
	}
	return nil
}

// HoldNote says why c's indexer holds new publications: the bucket's
// agent-skills.yaml is invalid, missing or unreadable ("": it holds none).
func HoldNote(c *catalog.Catalog) string {
	b := c.Bucket
	if b == nil {
		return ""
	}
	return "the bucket's agent-skills.yaml is " + b.State + " (since " + b.Since.UTC().Format(time.RFC3339) + "): the indexer holds " +
		"every new publication until a valid one is in force; `skilldrop status` says why the config was refused"
}

// NewestRejection is the time of the newest rejection st holds for key
// (zero: none), for Upload.RejectedAt.
func NewestRejection(st *catalog.Status, key string) time.Time {
	if st != nil {
		for _, r := range st.Rejections {
			if r.Key == key {
				return r.Time
			}
		}
	}
	return time.Time{}
}
