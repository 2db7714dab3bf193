package main

import (
	"context"
	"crypto/ecdsa"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/verifier"
)

func init() {
	register(&command{
		name:    "verify",
		summary: "check what an origin serves back to the operator's signing key: the AI Catalog, each feed, each artifact and its bundle",
		args:    "<origin> [--key FILE]... [--min-revision N] [--listing L] [--key-header 'Name: value'] [--json]",
		about: `Fetches <origin>/.well-known/ai-catalog.json and checks its signature (ES256 over its JCS form) with the
pinned key (--key, a PEM: what /.well-known/skilldrop/signing-key.pem serves; repeat it to accept any of
several, such as the keys before and after a rotation), else with the keys the origin publishes
(/.well-known/did.json; the report then says the key is only published, not pinned). Then, for
each feed the AI Catalog lists (or --listing's alone), that the feed document is the one signed, and for every
entry: the artifact's SHA-256 against the index's digest, and its Sigstore bundle (the artifact URL +
.sigstore.json) against the key, the artifact, and the index's name, version and type; and the revocation
list (/.well-known/agent-skills/revocations.json) against the digest the AI Catalog signs, failing any entry
a feed still lists that it names. --key-header sends a
header with every request to the origin (an API key: 'Authorization: Bearer KEY'), to check what it shows
beyond the public feeds; a listing the AI Catalog does not list is checked entry by entry. Redirects are
followed within the origin only (the same scheme, host and port), so the header is never sent elsewhere.

--min-revision N refuses a signed AI Catalog of a revision before N: whoever can write the origin's storage
can serve an older, validly signed catalog with its older feeds (a rollback, hiding what came after), which
nothing in the catalog itself can tell; give the revision the last verify reported.

Prints "catalog ok revision <n> key <id> (pinned|published)" or "catalog failed: <what>", one line per skill,
"ok|failed|external <feed> <name> <version> …" (failed names what: artifact, bundle, index, key, ai-catalog, revocations, revoked),
then a summary ending in the AI Catalog's verdict and "signed revision <n>"; --json prints one document
instead (catalog.revision). Entries hosted elsewhere (external URLs) are listed as
external: nothing here vouches for their bytes.

exit status: 0 when everything verified, 1 when anything failed, 2 on usage errors`,
		run: runSignatureVerify,
	})
}

// keyFlags collects repeated --key files, read as they are given.
type keyFlags struct{ keys []*ecdsa.PublicKey }

func (f *keyFlags) String() string { return "" }

func (f *keyFlags) Set(file string) error {
	b, err := os.ReadFile(file)
	if err == nil {
		var k *ecdsa.PublicKey
		if k, err = signing.ParsePublicKeyPEM(b); err == nil {
			f.keys = append(f.keys, k)
			return nil
		}
	}
	return err
}

// headerFlags collects repeated --key-header values.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t") || value == "" {
		return errBadHeader
	}
	f.h.Add(name, value)
	return nil
}

type usageError string

func (e usageError) Error() string { return string(e) }

const errBadHeader = usageError("want 'Name: value', such as 'Authorization: Bearer KEY'")

// runSignatureVerify is `skilldrop verify`: the check of an origin's
// signatures (reindex --verify is the check of a bucket's blobs).
func runSignatureVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["verify"].flagSet(stderr)
	keys := &keyFlags{}
	fs.Var(keys, "key", "a pinned public key (PEM), repeatable: any one given is accepted; without it the origin's published keys are trusted")
	listing := fs.String("listing", "", "check this listing's feed only")
	minRevision := fs.Int64("min-revision", 0, "refuse a signed AI Catalog of an earlier revision (the one a previous verify reported: an older catalog served again fails)")
	headers := &headerFlags{h: http.Header{}}
	fs.Var(headers, "key-header", "a header sent with every request to the origin, 'Name: value' (repeatable)")
	asJSON := fs.Bool("json", false, "print one JSON document instead of lines")
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if *minRevision < 0 {
		printf(stderr, "skilldrop verify: --min-revision %d: want a revision of 0 or more (the one a previous verify reported)\n", *minRevision)
		return exitUsage
	}
	if len(operands) != 1 {
		printf(stderr, "skilldrop verify: want one <origin>, got %d\n", len(operands))
		fs.Usage()
		return exitUsage
	}
	origin, err := parseOrigin(operands[0])
	if err != nil {
		printf(stderr, "skilldrop verify: %v\n", err)
		return exitUsage
	}
	rep, err := verifier.Verify(ctx, verifier.Options{Origin: origin, Keys: keys.keys, MinRevision: *minRevision, Listing: *listing, Header: headers.h})
	if err != nil {
		printf(stderr, "skilldrop verify: %v\n", err)
		return exitFailure
	}
	status := exitOK
	if !rep.OK {
		status = exitFailure
	}
	out := &resultWriter{w: stdout}
	if *asJSON {
		out.json(rep)
		return finish(out, stderr, status)
	}
	printReport(out, rep)
	return finish(out, stderr, status)
}

// parseOrigin reads verify's <origin>; its error says what to type
// instead: the scheme and host alone.
func parseOrigin(raw string) (*url.URL, error) {
	u, err := server.ParseBaseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not an origin: give its scheme and host alone, such as %s "+
			"(for make run, http://127.0.0.1:8080, or http://RUN_ADDR when it was given one)", printable(raw), suggestOrigin(raw))
	}
	return u, nil
}

// suggestOrigin is the origin raw most likely meant: its host, under its
// scheme when that is http or https, else http for a loopback host (serve
// listens on plain HTTP) and https for any other.
func suggestOrigin(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	host, _, _ := strings.Cut(rest, "/")
	switch s := strings.ToLower(scheme); {
	case s == "http" || s == "https":
		scheme = s
	case strings.HasPrefix(host, "127.") || strings.HasPrefix(strings.ToLower(host), "localhost"):
		scheme = "http"
	default:
		scheme = "https"
	}
	if u, err := server.ParseBaseURL(scheme + "://" + host); err == nil {
		return u.String()
	}
	return "https://skills.example.com"
}

// printReport writes a verifier report as lines.
func printReport(out *resultWriter, rep *verifier.Report) {
	cc := rep.Catalog
	if cc.OK {
		out.printf("catalog ok revision %d key %s (%s)\n", cc.Revision, cc.KeyID, cc.KeySource)
	}
	for _, p := range cc.Problems {
		out.printf("catalog failed: %s\n", oneLine(p))
	}
	counts := map[string]int{}
	for _, s := range rep.Skills {
		counts[s.State]++
		head := s.State + " " + printable(s.Feed) + " " + printable(s.Name) + " " + printable(s.Version)
		switch {
		case s.State == verifier.StateOK:
			out.printf("%s %s\n", head, s.Digest)
		case len(s.Problems) == 0:
			out.printf("%s\n", head)
		}
		for _, p := range s.Problems {
			out.printf("%s: %s\n", head, oneLine(p))
		}
	}
	verdict := "verified"
	if !rep.OK {
		verdict = "NOT verified"
	}
	out.printf("%s %s: %d ok, %d failed, %d external; AI Catalog %s\n", verdict, rep.Origin,
		counts[verifier.StateOK], counts[verifier.StateFailed], counts[verifier.StateExternal], catalogState(cc))
}

// catalogState is the AI Catalog's verdict with the revision whose
// signature verified, which a client pins with --min-revision next time.
func catalogState(cc verifier.CatalogCheck) string {
	state := "ok"
	if !cc.OK {
		state = "failed"
	}
	if cc.Revision > 0 {
		state += fmt.Sprintf(", signed revision %d", cc.Revision)
	}
	return state
}

var (
	_ flag.Value = (*headerFlags)(nil)
	_ flag.Value = (*keyFlags)(nil)
)
