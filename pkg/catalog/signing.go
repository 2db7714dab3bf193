package catalog

import (
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// Signing is what the catalog pins of its signatures: the keys that made
// them (blobs, BlobKey) and the signed AI Catalogs of this revision
// (rendered objects). Their bytes are written once and re-hashed wherever
// they are served, like every blob; a catalog without Signing was written
// by an indexer without a signing key.
type Signing struct {
	// Keys are the public keys that signed what the catalog pins, in the
	// order they were first used; the last is the current one.
	Keys []SigningKey `json:"keys"`
	// Catalogs are the AI Catalogs signed for this revision, one per origin.
	Catalogs []SignedCatalog `json:"catalogs,omitempty"`
	// Public is the revision the AI Catalogs name: one more each time what
	// one lists changes, so that it counts only what an anonymous caller
	// sees change (the catalog's Revision counts every write, hidden ones
	// too). See PublicRevision.
	Public int64 `json:"public,omitempty"`
}

// PublicRevision is the public revision now: Public, or for a catalog
// signed before it was counted apart the catalog revision its AI Catalogs
// name, so that the number an AI Catalog names never goes down.
func (s *Signing) PublicRevision() int64 {
	if s == nil {
		return 0
	}
	p := s.Public
	for i := range s.Catalogs {
		p = max(p, s.Catalogs[i].Named())
	}
	return p
}

// SigningKey is one public key: its fingerprint (signing.KeyID) and the
// blob of its PEM.
type SigningKey struct {
	ID    string    `json:"id"`
	PEM   BlobRef   `json:"pem"`
	Since time.Time `json:"since"`
}

// SignedCatalog is the signed AI Catalog of one origin ("https://host"),
// signed at Revision: a rendered object, like the stored documents. A
// later revision that changes nothing it lists (a hidden skill's change)
// keeps it as it is, so that it tells an anonymous caller nothing of what
// it cannot see; it is superseded when what it lists changes.
type SignedCatalog struct {
	Origin string `json:"origin"`
	// Revision is the catalog revision it was signed at.
	Revision int64 `json:"revision"`
	// PublicRevision is the public revision it names (Signing.Public; 0:
	// Revision, for one signed before that was counted apart).
	PublicRevision int64 `json:"publicRevision,omitempty"`
	// Current is the latest catalog revision it was kept for (0: Revision).
	Current int64 `json:"current,omitempty"`
	// Content is the digest of what it was signed from besides its
	// revision and time (the key, the feeds and their digests): the same
	// Content at a later revision keeps it.
	Content   digest.Digest `json:"content,omitzero"`
	Rendition Rendition     `json:"rendition"`
}

// Named is the revision the AI Catalog names.
func (sc *SignedCatalog) Named() int64 {
	if sc.PublicRevision != 0 {
		return sc.PublicRevision
	}
	return sc.Revision
}

// CurrentAt is the latest catalog revision sc stands for.
func (sc *SignedCatalog) CurrentAt() int64 {
	return max(sc.Current, sc.Revision)
}

// BlobRef pins a blob: its digest (hence its key, BlobKey) and size.
type BlobRef struct {
	Digest digest.Digest `json:"digest"`
	Size   int64         `json:"size"`
}

// Bundle is a version's Sigstore bundle: the blob, and the ID of the key
// that signed it (a SigningKey's).
type Bundle struct {
	BlobRef
	Key string `json:"key"`
}

// CurrentKey is the key the catalog is signed with now, or nil.
func (s *Signing) CurrentKey() *SigningKey {
	if s == nil || len(s.Keys) == 0 {
		return nil
	}
	return &s.Keys[len(s.Keys)-1]
}

// Key returns the key with the ID, or nil.
func (s *Signing) Key(id string) *SigningKey {
	if s == nil {
		return nil
	}
	for i := range s.Keys {
		if s.Keys[i].ID == id {
			return &s.Keys[i]
		}
	}
	return nil
}

// Catalog returns the signed AI Catalog of origin, or nil.
func (s *Signing) Catalog(origin string) *SignedCatalog {
	if s == nil {
		return nil
	}
	for i := range s.Catalogs {
		if s.Catalogs[i].Origin == origin {
			return &s.Catalogs[i]
		}
	}
	return nil
}
