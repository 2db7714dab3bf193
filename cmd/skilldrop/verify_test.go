package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// TestVerifySaysWhatToType: an <origin> that is not one is refused with the
// origin it most likely meant.
func TestVerifySaysWhatToType(t *testing.T) {
	for raw, want := range map[string]string{
		"127.0.0.1:8080":                  "such as http://127.0.0.1:8080 ",
		"localhost:8081":                  "such as http://localhost:8081 ",
		"skills.example.com":              "such as https://skills.example.com ",
		"https://skills.example.com/x/":   "such as https://skills.example.com ",
		"http://127.0.0.1:8080/catalog/":  "such as http://127.0.0.1:8080 ",
		"ftp://skills.example.com":        "such as https://skills.example.com ",
		"https://user@skills.example.com": "such as https://skills.example.com ",
	} {
		code, _, errOut := runCLI("verify", raw)
		if code != exitUsage || !strings.Contains(errOut, raw+" is not an origin: give its scheme and host alone, "+want) ||
			!strings.Contains(errOut, "RUN_ADDR") {
			t.Errorf("verify %s: exit %d\n%s", raw, code, errOut)
		}
	}
}

// TestVerifyRefusesANegativeMinRevision: --min-revision below 0 is a
// usage error, not a check that accepts every revision.
func TestVerifyRefusesANegativeMinRevision(t *testing.T) {
	for _, args := range [][]string{{"--min-revision", "-5"}, {"--min-revision=-1"}} {
		code, out, errOut := runCLI(append([]string{"verify"}, append(args, "http://127.0.0.1:1")...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "want a revision of 0 or more") {
			t.Errorf("verify %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if code, _, errOut := runCLI("verify", "--min-revision", "0", "ftp://x"); code != exitUsage || strings.Contains(errOut, "0 or more") {
		t.Errorf("verify --min-revision 0: exit %d\n%s", code, errOut)
	}
}

// TestVerifyOfAnotherOrigin: an origin the AI Catalog was not signed for
// (localhost for 127.0.0.1) is told which to verify.
func TestVerifyOfAnotherOrigin(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/x.md": skillDoc("x")})
	k, _ := signing.Generate()
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, k.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	origin := startServeWith(t, dir, "--signing-key", keyFile)
	other := strings.Replace(origin, "127.0.0.1", "localhost", 1)
	code, out, _ := runCLI("verify", other)
	if code != exitFailure || !strings.Contains(out, other+" has no signed AI Catalog") || !strings.Contains(out, "verify that origin instead") {
		t.Errorf("verify %s: exit %d\n%s", other, code, out)
	}
}

// TestStatusCountsEarlierKeys: status names the keys that signed before,
// one key or several.
func TestStatusCountsEarlierKeys(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/x.md": skillDoc("x")})
	for i, want := range []string{"", " (1 earlier key still verifies older bundles)", " (2 earlier keys still verify older bundles)"} {
		k, _ := signing.Generate()
		keyFile := filepath.Join(t.TempDir(), "key.pem")
		if err := os.WriteFile(keyFile, k.PrivateKeyPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runCLI("reindex", "--dir", dir, "--signing-key", keyFile); code != exitOK {
			t.Fatalf("reindex with key %d: exit %d\n%s%s", i, code, out, errOut)
		}
		code, out, errOut := runCLI("status", "--dir", dir)
		line := ""
		for l := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(l, "signing key: ") {
				line = l
			}
		}
		if code != exitOK || !strings.HasPrefix(line, "signing key: "+signing.KeyID(k.Public())) || !strings.HasSuffix(line, want) ||
			(want == "" && strings.Contains(line, "earlier")) {
			t.Errorf("status after key %d: exit %d, %q, want it to end in %q\n%s", i, code, line, want, errOut)
		}
	}
}

// TestVerifyPrintsTheRevisionToPin: the summary and --json give the
// revision whose signature verified; --min-revision at it passes, beyond
// it fails saying why.
func TestVerifyPrintsTheRevisionToPin(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/x.md": skillDoc("x")})
	k, _ := signing.Generate()
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, k.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "pub.pem")
	if err := os.WriteFile(pub, signing.PublicKeyPEM(k.Public()), 0o600); err != nil {
		t.Fatal(err)
	}
	origin := startServeWith(t, dir, "--signing-key", keyFile)
	code, out, errOut := runCLI("verify", origin, "--key", pub)
	m := regexp.MustCompile(`(?m)^verified \S+: .*; AI Catalog ok, signed revision ([0-9]+)$`).FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("verify: exit %d, no 'signed revision' in the summary\n%s%s", code, out, errOut)
	}
	revision, _ := strconv.ParseInt(m[1], 10, 64)
	code, out, _ = runCLI("verify", origin, "--key", pub, "--json", "--min-revision", m[1])
	var rep struct {
		OK      bool `json:"ok"`
		Catalog struct {
			Revision int64 `json:"revision"`
		} `json:"catalog"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != exitOK || err != nil || !rep.OK || rep.Catalog.Revision != revision {
		t.Errorf("verify --json --min-revision %d: exit %d %v\n%s", revision, code, err, out)
	}
	next := strconv.FormatInt(revision+1, 10)
	code, out, _ = runCLI("verify", origin, "--key", pub, "--min-revision", next)
	if code != exitFailure || !strings.Contains(out, "catalog failed: ai-catalog: /.well-known/ai-catalog.json is signed at revision "+m[1]+", before the minimum revision "+next) ||
		!strings.Contains(out, "AI Catalog failed, signed revision "+m[1]) {
		t.Errorf("verify --min-revision %s: exit %d\n%s", next, code, out)
	}
}
