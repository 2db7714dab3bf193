package discovery

import (
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// Revocations is the document at routes.Revocations: every version taken
// out of service that the caller may see, revoked by the operator or
// withdrawn by the content scan, oldest first. Revocations is never nil.
type Revocations struct {
	Revocations []Revocation `json:"revocations"`
}

// Revocation is one version taken out of service: a client holding these
// bytes (by name, version and digest) should remove them.
type Revocation struct {
	Name    string        `json:"name"`
	Version string        `json:"version"`
	Digest  digest.Digest `json:"digest"`
	Reason  string        `json:"reason"`
	// RevokedAt is when it was taken out of service.
	RevokedAt time.Time `json:"revokedAt"`
	// Code is revoked (agent-skills.yaml) or scan_blocked (the scan).
	Code string `json:"code"`
	// Kind is skill or subagent; Listing names the listing of a skill
	// published only there.
	Kind    catalog.Kind `json:"kind"`
	Listing string       `json:"listing,omitempty"`
}

// RevocationList renders the revocations the caller may see.
func RevocationList(v *catalog.View, c audience.Caller) Revocations {
	out := Revocations{Revocations: []Revocation{}}
	for _, g := range v.Revoked(c) {
		out.Revocations = append(out.Revocations, Revocation{
			Name: g.Name, Version: g.Version, Digest: g.Digest, Reason: g.Reason, RevokedAt: g.At.UTC(),
			Code: g.Code, Kind: g.Kind, Listing: g.Listing,
		})
	}
	return out
}
