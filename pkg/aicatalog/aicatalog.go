// Package aicatalog is the AI Catalog (application/ai-catalog+json) skilldrop
// serves at /.well-known/ai-catalog.json: one application/agent-skills+json
// entry per RFC feed anyone may read (the top-level index and each listing
// with a public skill), the operator as host (its did:web DID), and a
// catalog-level signature: a detached ES256 JWS over the JCS (RFC 8785) form
// of the document without its "signature" member, which any JWS library
// and JCS implementation check with the published key.
//
// Each feed entry records, in skilldrop's extension, the digest of the feed
// document as an anonymous caller is served it at that catalog revision, so
// the signature covers what the feed lists, not only where it is; the
// catalog's extension records the digest of the revocation list
// (revocations.json) the same way, so a revocation dropped from storage
// shows as a document the catalog did not sign.
package aicatalog

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/skilldrop/skilldrop/pkg/didweb"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/jcs"
	"github.com/skilldrop/skilldrop/pkg/jws"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// The identifiers of the format.
const (
	MediaType   = "application/ai-catalog+json"
	SpecVersion = "1.0"
	// FeedType is the type of an Agent Skills discovery index entry.
	FeedType = "application/agent-skills+json"
	// Extension is the key of skilldrop's own members, on the catalog and
	// on each entry (a reverse-DNS name, as the format asks).
	Extension = "io.github.skilldrop"
)

// MaxBytes bounds a catalog Verify reads.
const MaxBytes = 4 << 20

// Catalog is the document.
type Catalog struct {
	SpecVersion string            `json:"specVersion"`
	Host        Host              `json:"host"`
	Entries     []Entry           `json:"entries"`
	Extensions  map[string]Origin `json:"extensions,omitempty"`
	Signature   string            `json:"signature,omitempty"`
}

// Host names the operator.
type Host struct {
	DisplayName string `json:"displayName"`
	Identifier  string `json:"identifier"`
}

// Origin is skilldrop's extension of the catalog: the catalog revision it
// was signed at, the key that signed it, and the revocation list.
type Origin struct {
	Revision  int64  `json:"revision"`
	KeyID     string `json:"keyId"`
	PublicKey string `json:"publicKey"`
	// Revocations is nil only in a catalog signed before it was recorded.
	Revocations *Revocations `json:"revocations,omitempty"`
}

// Revocations records the revocation list an anonymous caller is served
// at Revision: its URL, the SHA-256 of the document, and how many versions
// it lists.
type Revocations struct {
	URL      string        `json:"url"`
	Digest   digest.Digest `json:"digest"`
	Versions int           `json:"versions"`
}

// Entry is one feed.
type Entry struct {
	Identifier  string          `json:"identifier"`
	DisplayName string          `json:"displayName"`
	Type        string          `json:"type"`
	URL         string          `json:"url"`
	UpdatedAt   time.Time       `json:"updatedAt"`
	Extensions  map[string]Feed `json:"extensions"`
}

// Feed is skilldrop's extension of an entry, and what Build is given of
// each feed.
type Feed struct {
	// Path is the feed's route (origin-root-absolute), Listing its
	// listing ("" for the top-level index).
	Path    string `json:"path"`
	Listing string `json:"listing,omitempty"`
	// Digest is the SHA-256 of the feed document an anonymous caller is
	// served at Revision; Skills how many entries it lists.
	Digest digest.Digest `json:"digest"`
	Skills int           `json:"skills"`
}

// Params is what one catalog is built from.
type Params struct {
	Origin    *url.URL
	Revision  int64
	UpdatedAt time.Time
	// KeyPath is the route of the published public key (a PEM).
	KeyPath string
	Feeds   []Feed
	// RevocationsPath is the route of the revocation list, Revocations
	// its digest and count (Revocations.URL is ignored: it is built here).
	RevocationsPath string
	Revocations     Revocations
}

// Build returns the unsigned catalog of one origin.
func Build(p Params, pub *ecdsa.PublicKey) Catalog {
	origin := (&url.URL{Scheme: p.Origin.Scheme, Host: p.Origin.Host}).String()
	c := Catalog{
		SpecVersion: SpecVersion,
		Host:        Host{DisplayName: p.Origin.Host, Identifier: didweb.ID(p.Origin)},
		Entries:     make([]Entry, 0, len(p.Feeds)),
		Extensions:  map[string]Origin{Extension: {Revision: p.Revision, KeyID: signing.KeyID(pub), PublicKey: origin + p.KeyPath}},
	}
	if p.RevocationsPath != "" {
		r := p.Revocations
		r.URL = origin + (&url.URL{Path: p.RevocationsPath}).EscapedPath()
		ext := c.Extensions[Extension]
		ext.Revocations = &r
		c.Extensions[Extension] = ext
	}
	for _, f := range p.Feeds {
		u := origin + (&url.URL{Path: f.Path}).EscapedPath()
		name := "Agent Skills of " + p.Origin.Host
		if f.Listing != "" {
			name = "Agent Skills of " + p.Origin.Host + ", listing " + f.Listing
		}
		c.Entries = append(c.Entries, Entry{
			Identifier: u, DisplayName: name, Type: FeedType, URL: u, UpdatedAt: p.UpdatedAt.UTC(),
			Extensions: map[string]Feed{Extension: f},
		})
	}
	return c
}

// Sign signs c with s (one Sign call) and returns the document as served:
// c with its "signature" member. The JWS names the key by its DID URL.
func Sign(ctx context.Context, s signing.Signer, origin *url.URL, c Catalog) ([]byte, error) {
	c.Signature = ""
	payload, err := jcs.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("aicatalog: canonicalize: %w", err)
	}
	sig, err := jws.SignDetached(ctx, s, jws.Header{Kid: didweb.KeyURL(origin, s.Public())}, payload)
	if err != nil {
		return nil, fmt.Errorf("aicatalog: %w", err)
	}
	c.Signature = sig
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("aicatalog: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// Errors of Verify.
var (
	ErrFormat   = errors.New("aicatalog: not a signed AI Catalog")
	ErrUnsigned = errors.New("aicatalog: the catalog has no signature")
)

// Verify checks a served catalog's signature with keys (any one may have
// signed it) over exactly what was served: the document's own members,
// whatever this package knows of them, without "signature", in JCS form.
// A document without one (duplicate member names, lone surrogates) is
// ErrFormat.
// It returns the catalog and the key that verified it.
func Verify(b []byte, keys ...*ecdsa.PublicKey) (*Catalog, *ecdsa.PublicKey, error) {
	if len(b) > MaxBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrFormat, len(b))
	}
	// One reading of the bytes served: a duplicate member (at any level)
	// or a lone surrogate, which a decoder would merge or replace, has no
	// canonical form and is refused, never signed over a different text.
	payload, raw, err := jcs.Without(b, "signature")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if raw == nil {
		return nil, nil, ErrUnsigned
	}
	var sig string
	if err := json.Unmarshal(raw, &sig); err != nil {
		return nil, nil, fmt.Errorf("%w: the signature is not a string", ErrFormat)
	}
	_, k, err := jws.VerifyDetached(sig, payload, keys...)
	if err != nil {
		return nil, nil, err
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if c.SpecVersion != SpecVersion {
		return nil, nil, fmt.Errorf("%w: specVersion %q, want %q", ErrFormat, c.SpecVersion, SpecVersion)
	}
	return &c, k, nil
}

// Revision is the catalog revision c was signed at (0 without skilldrop's extension).
func (c *Catalog) Revision() int64 { return c.Extensions[Extension].Revision }

// SignedRevocations is what c records of the revocation list (nil when
// it records nothing).
func (c *Catalog) SignedRevocations() *Revocations { return c.Extensions[Extension].Revocations }
