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
}

// SigningKey is one public key: its fingerprint (signing.KeyID) and the
// blob of its PEM.
type SigningKey struct {
	ID    string    `json:"id"`
	PEM   BlobRef   `json:"pem"`
	Since time.Time `json:"since"`
}

// SignedCatalog is the signed AI Catalog of one origin ("https://host") at
// Revision: a rendered object, like the stored documents, superseded by
// the next revision's.
type SignedCatalog struct {
	Origin    string    `json:"origin"`
	Revision  int64     `json:"revision"`
	Rendition Rendition `json:"rendition"`
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
