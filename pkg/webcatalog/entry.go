package webcatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/safetext"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Bounds of what an entry's page lists; the rest is named, not shown, so
// a page stays small whatever the entry holds.
const (
	maxFiles       = 50
	maxVersions    = 20
	maxFrontmatter = 40
	maxFieldKey    = 80
	maxFieldValue  = 400
	maxPath        = 160
)

// ReadFile returns the bytes of one file of a version, verified against
// the digest the catalog pins (the server's integrity check). An error
// means the page cannot be shown as it should.
type ReadFile func(ctx context.Context, e *catalog.Entry, ver *catalog.Version, f catalog.File) ([]byte, error)

// EntryPage is a skill's or sub-agent's page.
type EntryPage struct {
	L                                Layout
	Name, Kind, Listing, ListingHref string
	Description                      string
	Private                          bool
	Version, Published, PublishedISO string
	Type, Size, Digest, RoutesTo     string
	Listings                         []Link
	Install                          []Install
	DocName                          string
	Body                             template.HTML
	BodyCut                          bool
	BodyNote, RawURL                 string
	Frontmatter                      []Field
	Files                            []FileRow
	MoreFiles                        int
	Versions                         []VersionRow
	MoreVersions                     int
	// FetchCommand is how to download a version's address with the key
	// header, for an entry that needs an API key ("" otherwise).
	FetchCommand string
	// Scan is the latest version's content scan; nil when it was never
	// scanned (ScanNote says why).
	Scan     *ScanSection
	ScanNote string
	// Provenance is the latest version's signed provenance; nil without.
	Provenance *ProvenanceSection
}

// Link is a named link.
type Link struct{ Name, Href string }

// Field is one frontmatter key and its value as text.
type Field struct{ Key, Value string }

// FileRow is one file of the latest version.
type FileRow struct{ ID, Path, Size, Digest string }

// VersionRow is one version in the history.
type VersionRow struct {
	Label, Published, PublishedISO, Size, Digest string
	// URL links the version's bytes; for an entry that needs an API key
	// (which a link cannot send: the cookie is the pages' alone) it is ""
	// and Fetch is the address, shown as text for curl with the key header.
	URL, Fetch string
	// Verdict is the version's scan verdict, "" when it was never scanned.
	Verdict string
	Latest  bool
}

// Entry returns the page of the skill (kind catalog.KindSkill; listing ""
// for a top-level one) or sub-agent with the name. found is false when the
// caller cannot see it or it does not exist, which the caller answers
// alike. read supplies the document's verified bytes; bodies keeps their
// renderings (nil: none kept).
func (s *Site) Entry(ctx context.Context, kind catalog.Kind, listing, name string, read ReadFile, bodies *Bodies) (p EntryPage, found bool, err error) {
	e := s.lookup(kind, listing, name)
	if e == nil {
		return EntryPage{}, false, nil
	}
	ver := e.LatestVersion()
	if ver == nil {
		return EntryPage{}, false, nil
	}
	history, err := s.View.History(ctx, e)
	if err != nil {
		return EntryPage{}, false, fmt.Errorf("history of %s: %w", e.ID(), err)
	}
	p = EntryPage{
		L: NewLayout(e.Name, s.Base, s.KeyID), Name: e.Name, Kind: kindLabel(e.Kind), Listing: e.Listing,
		Description: e.EffectiveDescription(), Private: !e.VisibleTo(audience.Anonymous),
		Version: ver.Label, Published: ver.PublishedAt.UTC().Format(time.DateTime + " UTC"),
		PublishedISO: ver.PublishedAt.UTC().Format(time.RFC3339),
		Type:         string(ver.Type), Size: bytesize.Format(ver.Size), Digest: ver.Digest.String(),
		RoutesTo: ver.Subagent, DocName: artifact.SkillFile, RawURL: s.bytesURL(e, ver),
	}
	if e.Kind == catalog.KindSubagent {
		p.Type, p.DocName = string(artifact.TypeAgentMD), artifact.AgentFile
	}
	if e.Listing != "" {
		p.ListingHref = routes.CatalogListing(e.Listing)
	}
	visible := s.Index.visibleListings(s.Caller)
	for _, l := range e.Listings {
		if _, ok := slices.BinarySearch(visible, l); ok {
			p.Listings = append(p.Listings, Link{Name: l, Href: routes.CatalogListing(l)})
		}
	}
	p.Install = s.install(e, ver)
	p.Provenance = s.provenanceSection(e, ver)
	p.Frontmatter = frontmatter(ver.Frontmatter)
	if p.Scan = scanSection(ver); p.Scan == nil {
		p.ScanNote = "This version was not scanned: its bytes are hosted elsewhere, or it was published before scanning."
	}
	for i, f := range ver.Files {
		if i == maxFiles {
			p.MoreFiles = len(ver.Files) - maxFiles
			break
		}
		p.Files = append(p.Files, FileRow{ID: fileRowID(i), Path: clipRunes(safetext.Text(f.Path), maxPath), Size: bytesize.Format(f.Size), Digest: f.Digest.String()})
	}
	// history holds only the versions in service (View.History), as the
	// native feed's identity document lists them: a revoked or withdrawn
	// version is on no page.
	for i := len(history) - 1; i >= 0; i-- {
		if len(p.Versions) == maxVersions {
			p.MoreVersions = i + 1
			break
		}
		v := &history[i]
		row := VersionRow{
			Label: v.Label, Published: v.PublishedAt.UTC().Format(time.DateTime + " UTC"),
			PublishedISO: v.PublishedAt.UTC().Format(time.RFC3339), Size: bytesize.Format(v.Size),
			Digest: v.Digest.String(), URL: s.versionURL(e, v), Latest: v.Label == e.Latest,
		}
		if p.Private {
			row.URL, row.Fetch = "", row.URL
			p.FetchCommand = fmt.Sprintf(`curl -fsSL -H "Authorization: Bearer $%s" -O <address>`, KeyVariable)
		}
		if v.Scan != nil {
			row.Verdict = string(v.Scan.Verdict)
		}
		p.Versions = append(p.Versions, row)
	}
	if err := s.body(ctx, &p, e, ver, read, bodies); err != nil {
		return EntryPage{}, false, err
	}
	return p, true, nil
}

// lookup finds an entry the caller may see, through the view's accessors.
func (s *Site) lookup(kind catalog.Kind, listing, name string) *catalog.Entry {
	switch {
	case kind == catalog.KindSubagent:
		return s.View.Subagent(name, s.Caller)
	case listing == "":
		return s.View.Skill(name, s.Caller)
	}
	members, _ := s.View.Listing(listing, s.Caller)
	for _, e := range members {
		if e.Listing == listing && e.Name == name {
			return e
		}
	}
	return nil
}

// body renders the entry's document into p, or says why it is not shown.
func (s *Site) body(ctx context.Context, p *EntryPage, e *catalog.Entry, ver *catalog.Version, read ReadFile, bodies *Bodies) error {
	if e.ExternalURL != "" {
		p.BodyNote = "This entry's bytes are hosted elsewhere and were never read here: " + e.ExternalURL
		return nil
	}
	doc, ok := documentFile(ver)
	if !ok {
		p.BodyNote = "This version's files were not recorded when it was indexed; its bytes are still served."
		return nil
	}
	// The rendering resolves relative links against the files the page
	// shows, so it is kept by the document and those files.
	files := shownFiles(ver)
	key := bodyKey(doc.Digest, files)
	if r, ok := bodies.get(key); ok {
		p.Body, p.BodyCut = r.html, r.cut
		return nil
	}
	data, err := read(ctx, e, ver, doc)
	if err != nil {
		return err
	}
	var text []byte
	if e.Kind == catalog.KindSubagent {
		if a, err := skillmd.ParseAgent(data); err == nil {
			text = a.Body
		}
	} else if sk, err := skillmd.ParseSkill(data); err == nil {
		text = sk.Body
	}
	if text == nil { // validated when indexed; never guess at a document that no longer parses
		p.BodyNote = "The document could not be read as " + p.DocName + "."
		return nil
	}
	html, cut := RenderMarkdown(text, files)
	bodies.put(key, rendered{html: html, cut: cut})
	p.Body, p.BodyCut = html, cut
	return nil
}

// fileRowID is the id of the i-th row of a page's files table.
func fileRowID(i int) string { return "file-" + strconv.Itoa(i+1) }

// shownFiles maps the paths of the files a page lists (the first maxFiles)
// to their rows: where a document's relative link to one of them leads.
func shownFiles(ver *catalog.Version) map[string]string {
	out := make(map[string]string, min(len(ver.Files), maxFiles))
	for i, f := range ver.Files {
		if i == maxFiles {
			break
		}
		out[f.Path] = "#" + fileRowID(i)
	}
	return out
}

// bodyKey is what a rendering is kept by: the document's digest and the
// files its links resolve against.
func bodyKey(doc digest.Digest, files map[string]string) digest.Digest {
	paths := make([]string, 0, len(files))
	for p, href := range files {
		paths = append(paths, p+"\x00"+href)
	}
	slices.Sort(paths)
	return digest.Of([]byte(doc.String() + "\x00" + strings.Join(paths, "\x00")))
}

// documentFile is a version's SKILL.md or agent.md.
func documentFile(ver *catalog.Version) (catalog.File, bool) {
	for _, f := range ver.Files {
		if f.Path == artifact.SkillFile || f.Path == artifact.AgentFile {
			return f, true
		}
	}
	if len(ver.Files) == 1 && ver.Type != artifact.TypeArchive {
		return ver.Files[0], true
	}
	return catalog.File{}, false
}

// frontmatter lists a version's frontmatter keys in the author's order,
// strings as they are, other values as compact JSON.
func frontmatter(raw json.RawMessage) []Field {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []Field
	for dec.More() && len(out) < maxFrontmatter {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return out
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		var str string
		value := string(v)
		if json.Unmarshal(v, &str) == nil {
			value = str
		} else {
			var buf bytes.Buffer
			if json.Compact(&buf, v) == nil {
				value = buf.String()
			}
		}
		out = append(out, Field{Key: clipRunes(safetext.Text(key), maxFieldKey), Value: clipRunes(value, maxFieldValue)})
	}
	return out
}

// feed is the native feed over the same view and caller, for the URLs of
// versions' bytes.
func (s *Site) feed() *manifest.Feed {
	return &manifest.Feed{View: s.View, Caller: s.Caller, Base: s.Base}
}

// versionURL is where a version's bytes are served for good: the native
// API's versioned path for top-level skills and sub-agents; a listing's
// own skill has only its latest, at its path.
func (s *Site) versionURL(e *catalog.Entry, v *catalog.Version) string {
	if e.Listing != "" {
		if v.Label == e.Latest && e.Path != "" {
			return origin(s.Base) + e.Path
		}
		return ""
	}
	return s.feed().URL(e.Kind, e, v)
}

// bytesURL is where the latest version's bytes are downloaded from.
func (s *Site) bytesURL(e *catalog.Entry, ver *catalog.Version) string {
	if e.ExternalURL != "" {
		return e.ExternalURL
	}
	return s.versionURL(e, ver)
}

// RenderEntry writes an entry's page.
func RenderEntry(w io.Writer, p EntryPage) error { return render(w, "entry", p) }

// localName is the file a download of ver is saved as.
func localName(e *catalog.Entry, ver *catalog.Version) string {
	return e.Name + ver.Format.Ext()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
