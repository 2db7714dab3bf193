package webcatalog

import (
	"fmt"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// ProvenanceSection is a version's signed provenance: its Sigstore bundle
// (served beside the bytes, as the native version document links it) and
// how to verify the bytes against the operator's key with cosign and with
// skilldrop verify, for this origin.
type ProvenanceSection struct {
	Bundle, Digest string
	// Private is set when the bundle needs an API key: the page shows its
	// address as text (a link would send no key), fetched as Verify does.
	Private bool
	Verify  []Install
}

// provenanceSection is ver's provenance, or nil when it has none (signed
// by no key, or hosted elsewhere: those bytes are not the operator's).
func (s *Site) provenanceSection(e *catalog.Entry, ver *catalog.Version) *ProvenanceSection {
	u := s.bytesURL(e, ver)
	if ver.Bundle == nil || e.ExternalURL != "" || u == "" {
		return nil
	}
	o := origin(s.Base)
	bundle := routes.Bundle(u)
	file := localName(e, ver)
	auth, header := "", ""
	private := !e.VisibleTo(audience.Anonymous)
	if private {
		auth = fmt.Sprintf(`-H "Authorization: Bearer $%s" `, KeyVariable)
		header = fmt.Sprintf(` --key-header "Authorization: Bearer $%s"`, KeyVariable)
	}
	p := &ProvenanceSection{Bundle: bundle, Digest: ver.Bundle.Digest.String(), Private: private}
	p.Verify = append(p.Verify, Install{
		ID: "verify-cosign", Title: "With cosign",
		Text: fmt.Sprintf("curl -fsS %s > key.pem  # once; then keep it\n", shellQuote(o+routes.SigningKey)) +
			fmt.Sprintf("curl -fsSL %s-o %s %s\n", auth, shellQuote(file), shellQuote(u)) +
			fmt.Sprintf("curl -fsSL %s-o %s %s\n", auth, shellQuote(file+routes.BundleSuffix), shellQuote(bundle)) +
			"cosign verify-blob-attestation --key key.pem --insecure-ignore-tlog=true \\\n" +
			"    --type " + provenance.PredicateType + " \\\n" +
			fmt.Sprintf("    --bundle %s %s", shellQuote(file+routes.BundleSuffix), shellQuote(file)),
		Note: "Pin the key: fetch it once over a channel you trust. The bundles carry no transparency-log entry; " +
			"the trust root is the operator's key.",
	})
	if e.Kind == catalog.KindSkill {
		cmd := "skilldrop verify " + shellQuote(o) + " --key key.pem"
		if e.Listing != "" {
			cmd += " --listing " + shellQuote(e.Listing)
		}
		p.Verify = append(p.Verify, Install{
			ID: "verify-skilldrop", Title: "With skilldrop verify", Text: cmd + header,
			Note: "It checks the signed AI Catalog, the feed, and every artifact and bundle in it, this skill's among them.",
		})
	}
	return p
}
