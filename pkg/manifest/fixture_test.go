package manifest

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

var (
	base = &url.URL{Scheme: "https", Host: "skills.example.com"}
	t0   = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
)

// at is a deterministic publish time, h hours after t0.
func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// fixture is a catalog whose digests are those of real bytes, kept in blobs
// so conformance tests can "download" and verify them.
type fixture struct {
	cat   *catalog.Catalog
	blobs map[string][]byte // by digest
}

// ver is one version to publish: label, bytes, format, hours after t0, and
// the sub-agent a skill routes to.
type ver struct {
	label    string
	body     []byte
	format   artifact.Format
	hour     int
	subagent string
}

func (fx *fixture) add(kind catalog.Kind, name string, vis catalog.Visibility, vers ...ver) *catalog.Entry {
	e := &catalog.Entry{Name: name, Kind: kind, Visibility: vis}
	for _, v := range vers {
		typ := artifact.TypeSkillMD
		switch {
		case kind == catalog.KindSubagent:
			typ = artifact.TypeAgentMD
		case v.format != artifact.FormatMarkdown:
			typ = artifact.TypeArchive
		}
		d := digest.Of(v.body)
		fx.blobs[d.String()] = v.body
		e.Versions = append(e.Versions, catalog.Version{
			Label: v.label, Digest: d, Type: typ, Format: v.format, Size: int64(len(v.body)),
			PublishedAt: at(v.hour), Description: descriptionOf(name, v.label), Subagent: v.subagent,
		})
		e.Latest = v.label
	}
	if kind == catalog.KindSubagent {
		e.Source = "subagents/" + name + ".md"
		fx.cat.Subagents[name] = e
	} else {
		e.Source = "skills/" + name + ".md"
		e.Path = "/skills/" + name + ".md"
		fx.cat.Skills[e.ID()] = e
	}
	return e
}

func descriptionOf(name, label string) string {
	return fmt.Sprintf("What %s does (as of %s).", name, label)
}

func skillMD(name, label, subagent string) []byte {
	meta := "metadata:\n  version: \"" + label + "\"\n"
	if subagent != "" {
		meta += "  subagent: " + subagent + "\n"
	}
	return []byte("---\nname: " + name + "\ndescription: " + descriptionOf(name, label) + "\n" + meta + "---\n# " + name + "\n")
}

func agentMD(name, label string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + descriptionOf(name, label) +
		"\nmetadata:\n  version: \"" + label + "\"\n---\nYou are " + name + ".\n")
}

// zipOf is a skill folder (SKILL.md and a script) as a zip; skilltest's
// archives are reproducible, so the golden documents' digests hold.
func zipOf(t testing.TB, skill []byte) []byte {
	return skilltest.Zip(t, map[string]string{"SKILL.md": string(skill), "scripts/run.sh": "#!/bin/sh\necho ok\n"})
}

// tarGzOf is SKILL.md alone as a .tar.gz.
func tarGzOf(t testing.TB, skill []byte) []byte {
	return skilltest.TarGz(t, map[string]string{"SKILL.md": string(skill)})
}

// Names in the fixture that an anonymous caller must never see, and that
// nobody may see.
var (
	hiddenNames    = []string{"internal-runbook", "security-reviewer"}
	withdrawnNames = []string{"old-skill", "retired-agent"}
)

// newFixture builds the realistic catalog the tests share.
func newFixture(t testing.TB) *fixture {
	fx := &fixture{cat: catalog.New(), blobs: map[string][]byte{}}
	md := func(name, label, sub string, hour int) ver {
		return ver{label: label, body: skillMD(name, label, sub), format: artifact.FormatMarkdown, hour: hour, subagent: sub}
	}
	S, A := catalog.KindSkill, catalog.KindSubagent
	pub, auth := catalog.Public, catalog.Authenticated

	// Three versions; the latest label has build metadata ('+').
	fx.add(S, "deploy-via-pr", pub, md("deploy-via-pr", "1.0.0", "", 1), md("deploy-via-pr", "1.1.0", "", 5), md("deploy-via-pr", "1.2.0+build.5", "", 9))
	// A zip archive whose latest (last published) is a hotfix of an older line:
	// versionRange.max is the latest, not the greatest label.
	fx.add(S, "pdf-tools", pub,
		ver{label: "2.0.0", body: zipOf(t, skillMD("pdf-tools", "2.0.0", "")), format: artifact.FormatZip, hour: 2},
		ver{label: "2.1.0", body: zipOf(t, skillMD("pdf-tools", "2.1.0", "")), format: artifact.FormatZip, hour: 6},
		ver{label: "2.0.1-hotfix", body: zipOf(t, skillMD("pdf-tools", "2.0.1-hotfix", "")), format: artifact.FormatZip, hour: 8})
	// The latest pdf-tools version records its files, as the indexer does.
	pdf := fx.cat.Skills["pdf-tools"].Version("2.1.0")
	for _, f := range []struct{ path, body, mediaType string }{
		{"SKILL.md", string(skillMD("pdf-tools", "2.1.0", "")), "text/markdown"},
		{"scripts/run.sh", "#!/bin/sh\necho ok\n", "text/x-shellscript"},
	} {
		pdf.Files = append(pdf.Files, catalog.File{Path: f.path, Digest: digest.Of([]byte(f.body)), Size: int64(len(f.body)), MediaType: f.mediaType})
	}
	fx.add(S, "log-digest", pub, ver{label: "0.3.0", body: tarGzOf(t, skillMD("log-digest", "0.3.0", "")), format: artifact.FormatTarGz, hour: 3})
	triage := fx.add(S, "support-triage", pub, md("support-triage", "1.0.0", "technical-support-diagnostician", 4))
	triage.Description = "Triage support tickets (the operator's wording)."
	fx.add(S, "security-audit", pub, md("security-audit", "1.0.0", "security-reviewer", 4))
	fx.add(S, "release-notes", pub, md("release-notes", "1.0.0", "ghost-agent", 4))
	fx.add(S, "internal-runbook", auth, md("internal-runbook", "1.0.0", "", 2), md("internal-runbook", "1.1.0", "", 7))
	old := fx.add(S, "old-skill", pub, md("old-skill", "1.0.0", "", 1))
	old.Withdrawn, old.WithdrawnAt = true, new(at(10))

	vendorBody := skillMD("vendor-skill", "", "")
	vendor := fx.add(S, "vendor-skill", pub, ver{label: "sha256-" + digest.Of(vendorBody).Short(), body: vendorBody, format: artifact.FormatMarkdown, hour: 2})
	vendor.Source, vendor.Path, vendor.ExternalURL = catalog.ConfigSource, "", "https://cdn.vendor.example/skills/vendor-skill/SKILL.md"

	partner := fx.add(S, "partner-only", pub, md("partner-only", "1.0.0", "", 1))
	delete(fx.cat.Skills, "partner-only")
	partner.Listing, partner.Path = "partner-a", "/.well-known/agent-skills/partner-a/skills/partner-only.md"
	fx.cat.Skills[partner.ID()] = partner
	fx.cat.Listings["partner-a"] = &catalog.Listing{Name: "partner-a", Skills: []string{"deploy-via-pr"}}

	agent := func(name, label string, hour int) ver {
		return ver{label: label, body: agentMD(name, label), format: artifact.FormatMarkdown, hour: hour}
	}
	fx.add(A, "technical-support-diagnostician", pub, agent("technical-support-diagnostician", "1.0.0", 1), agent("technical-support-diagnostician", "1.1.0", 6))
	fx.add(A, "security-reviewer", auth, agent("security-reviewer", "0.9.0", 3))
	fx.add(A, "changelog-reviewer", pub, agent("changelog-reviewer", "1.0.0", 2))
	retired := fx.add(A, "retired-agent", pub, agent("retired-agent", "1.0.0", 1))
	retired.Withdrawn = true
	return fx
}

func (fx *fixture) view() *catalog.View { return catalog.Compile(fx.cat, `"fixture"`) }

// feed is a Feed over the fixture with its search index, as the server
// keeps one per catalog revision.
func (fx *fixture) feed(auth bool) *Feed {
	v := fx.view()
	return &Feed{View: v, Caller: callerOf(auth), Base: base, SearchIndex: NewSearchIndex(v)}
}

// get resolves path (with an optional query) and fails the test on an error.
func get(t testing.TB, f *Feed, target string) Result {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parse %q: %v", target, err)
	}
	res, err := f.Resolve(t.Context(), u.Path, u.Query())
	if err != nil {
		t.Fatalf("Resolve(%q): %v", target, err)
	}
	return res
}

// callerOf is the caller the tests mean by auth: a key of every audience,
// or none.
func callerOf(auth bool) audience.Caller {
	if auth {
		return audience.Unrestricted
	}
	return audience.Anonymous
}
