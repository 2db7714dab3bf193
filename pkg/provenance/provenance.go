// Package provenance is what skilldrop signs for each published version: an
// in-toto Statement whose subject is the artifact's digest and whose
// predicate (a Publication) records what the operator's indexer published
// it as, in a DSSE envelope signed with the operator's key, packed as a
// Sigstore bundle (v0.3) that cosign verifies with the public key alone:
//
//	cosign verify-blob-attestation --key key.pem --type <PredicateType> \
//	    --bundle x.zip.sigstore.json --insecure-ignore-tlog x.zip
//
// The bundle carries no transparency-log entry and no certificate: the
// trust root is the operator's key, published beside the feeds.
package provenance

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// The identifiers of the formats.
const (
	// BundleMediaType is the Sigstore bundle version written, and the
	// media type its route is served with.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// PayloadType is the DSSE payload type of an in-toto Statement.
	PayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto Statement version written.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType names a Publication predicate (cosign's --type).
	PredicateType = "https://github.com/skilldrop/skilldrop/publication/v1"
)

// MaxBundleBytes bounds a bundle Verify reads: a Publication is a few
// hundred bytes, a bundle of one about twice that.
const MaxBundleBytes = 64 << 10

// Publication is the predicate: what the indexer published the subject as.
type Publication struct {
	// Name, Version and Kind ("skill" or "subagent") identify the entry;
	// Listing is set for a skill published only in that listing.
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Listing string `json:"listing,omitempty"`
	// Type is the artifact's form (skill-md, archive, agent-md).
	Type string `json:"type"`
	// SourceKey is the bucket key the bytes were read from.
	SourceKey string `json:"sourceKey"`
	// CatalogRevision is the public revision (the AI Catalog's) that lists
	// it: the one after the AI Catalog in force when it was signed.
	CatalogRevision int64     `json:"catalogRevision"`
	PublishedAt     time.Time `json:"publishedAt"`
	// Scan is the content scan's verdict on these bytes, when one was recorded.
	Scan *Scan `json:"scan,omitempty"`
}

// Scan is a recorded content-scan result, as the predicate carries it: the
// verdict (clean, warn) and the engine (rule pack) version that gave it.
type Scan struct {
	Verdict string `json:"verdict"`
	Engine  string `json:"engine,omitempty"`
}

// statement is an in-toto Statement v1 of one subject.
type statement struct {
	Type          string      `json:"_type"`
	Subject       []subject   `json:"subject"`
	PredicateType string      `json:"predicateType"`
	Predicate     Publication `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// bundle is the Sigstore bundle's JSON form (protobuf's JSON mapping).
type bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         *envelope            `json:"dsseEnvelope"`
}

type verificationMaterial struct {
	PublicKey *publicKeyHint `json:"publicKey"`
}

type publicKeyHint struct {
	Hint string `json:"hint"`
}

type envelope struct {
	Payload     string      `json:"payload"`
	PayloadType string      `json:"payloadType"`
	Signatures  []signature `json:"signatures"`
}

type signature struct {
	Sig   string `json:"sig"`
	KeyID string `json:"keyid,omitempty"`
}

// PAE is DSSE's pre-authentication encoding of a payload: what is signed.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// Sign makes the bundle of one publication of the artifact with digest
// subject: one Sign call of s.
func Sign(ctx context.Context, s signing.Signer, subj digest.Digest, p Publication) ([]byte, error) {
	if subj.IsZero() {
		return nil, errors.New("provenance: no subject digest")
	}
	p.PublishedAt = p.PublishedAt.UTC()
	payload, err := json.Marshal(statement{
		Type:          StatementType,
		Subject:       []subject{{Name: p.Name, Digest: map[string]string{digest.Algorithm: subj.Hex()}}},
		PredicateType: PredicateType,
		Predicate:     p,
	})
	if err != nil {
		return nil, fmt.Errorf("provenance: encode the statement: %w", err)
	}
	sig, err := s.Sign(ctx, PAE(PayloadType, payload))
	if err != nil {
		return nil, fmt.Errorf("provenance: sign %s %s: %w", p.Name, p.Version, err)
	}
	keyID := signing.KeyID(s.Public())
	b, err := json.Marshal(bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: verificationMaterial{PublicKey: &publicKeyHint{Hint: keyID}},
		DSSEEnvelope: &envelope{
			Payload:     base64.StdEncoding.EncodeToString(payload),
			PayloadType: PayloadType,
			// No keyid: DSSE verifiers compare it with their own name for
			// the key (go-securesystemslib's, which cosign uses, is an SSH
			// fingerprint) and skip a signature named otherwise.
			Signatures: []signature{{Sig: base64.StdEncoding.EncodeToString(sig)}},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("provenance: encode the bundle: %w", err)
	}
	return b, nil
}

// Errors of Verify, to tell with errors.Is.
var (
	// ErrFormat: not a bundle of this kind (media type, envelope, statement).
	ErrFormat = errors.New("provenance: not a skilldrop publication bundle")
	// ErrSignature: no key given verifies the envelope's signature.
	ErrSignature = errors.New("provenance: the signature does not verify")
)

// Verified is what a bundle that verified says.
type Verified struct {
	Subject     digest.Digest
	Publication Publication
	// KeyID is the fingerprint of the key that verified it.
	KeyID string
}

// Verify checks a bundle's signature with keys (any one may have signed
// it) and returns its statement. It does not compare the statement with
// anything: the caller checks the subject and the predicate against what
// it was served.
func Verify(b []byte, keys ...*ecdsa.PublicKey) (*Verified, error) {
	if len(b) > MaxBundleBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFormat, len(b), MaxBundleBytes)
	}
	var bu bundle
	if err := json.Unmarshal(b, &bu); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if bu.MediaType != BundleMediaType {
		return nil, fmt.Errorf("%w: media type %q, want %q", ErrFormat, clip(bu.MediaType), BundleMediaType)
	}
	env := bu.DSSEEnvelope
	if env == nil || env.PayloadType != PayloadType || len(env.Signatures) == 0 {
		return nil, fmt.Errorf("%w: no signed %s DSSE envelope", ErrFormat, PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: the payload is not base64: %w", ErrFormat, err)
	}
	pae := PAE(env.PayloadType, payload)
	var by string
	for _, s := range env.Signatures {
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			continue
		}
		for _, k := range keys {
			if signing.Verify(k, pae, sig) {
				by = signing.KeyID(k)
				break
			}
		}
		if by != "" {
			break
		}
	}
	if by == "" {
		return nil, ErrSignature
	}
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, fmt.Errorf("%w: the statement: %w", ErrFormat, err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateType || len(st.Subject) != 1 {
		return nil, fmt.Errorf("%w: a statement of type %q with predicate %q and %d subjects", ErrFormat,
			clip(st.Type), clip(st.PredicateType), len(st.Subject))
	}
	d, err := digest.ParseHex(st.Subject[0].Digest[digest.Algorithm])
	if err != nil {
		return nil, fmt.Errorf("%w: the subject's digest: %w", ErrFormat, err)
	}
	return &Verified{Subject: d, Publication: st.Predicate, KeyID: by}, nil
}

// clip bounds hostile text echoed into errors.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
