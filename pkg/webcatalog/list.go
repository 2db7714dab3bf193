package webcatalog

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/search"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// PageSize is how many entries a list page shows.
const PageSize = 25

// MaxPage is the last page number a list accepts: as deep as the search
// API lets a client skip.
const MaxPage = manifest.MaxSkip/PageSize + 1

// maxListDescription bounds the description a list row shows, in runes;
// the entry's page has all of it.
const maxListDescription = 280

// Site is the web catalog of one catalog view for one caller.
type Site struct {
	View *catalog.View
	// Index is View's (NewIndex(View)), kept for as long as View is served.
	Index *Index
	// Caller decides what is shown, through View's accessors
	// and Index's searches: the feeds' decision, made once by the server.
	Caller audience.Caller
	// Base is the public origin.
	Base *url.URL
	// KeyID names the key the caller signed in with, "" when anonymous.
	KeyID string
}

// ListQuery is what a list page's URL asks for (/catalog/?q=&kind=&listing=&page=).
type ListQuery struct {
	Q       string
	Kind    catalog.Kind // "" for both kinds
	Listing string       // "" for any
	Page    int          // from 1
}

// ErrBadQuery is wrapped by ParseListQuery's errors, whose text may be shown.
var ErrBadQuery = errors.New("bad query")

// ParseListQuery reads a list page's query string: each parameter at most
// once, q at most search.MaxQueryLen bytes of UTF-8, kind "", "skill" or
// "subagent", listing a valid name, page a number from 1 to MaxPage.
// Unknown parameters are ignored.
func ParseListQuery(raw string) (ListQuery, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return ListQuery{}, fmt.Errorf("%w: the query string is malformed", ErrBadQuery)
	}
	one := func(name string) (string, error) {
		if v := vals[name]; len(v) > 1 {
			return "", fmt.Errorf("%w: %s is given more than once", ErrBadQuery, name)
		} else if len(v) == 1 {
			return v[0], nil
		}
		return "", nil
	}
	q := ListQuery{Page: 1}
	var kind, page string
	for _, p := range []struct {
		name string
		to   *string
	}{{"q", &q.Q}, {"kind", &kind}, {"listing", &q.Listing}, {"page", &page}} {
		if *p.to, err = one(p.name); err != nil {
			return ListQuery{}, err
		}
	}
	switch {
	case len(q.Q) > search.MaxQueryLen || !utf8.ValidString(q.Q):
		return ListQuery{}, fmt.Errorf("%w: the search text must be at most %d bytes of UTF-8", ErrBadQuery, search.MaxQueryLen)
	case kind != "" && kind != string(catalog.KindSkill) && kind != string(catalog.KindSubagent):
		return ListQuery{}, fmt.Errorf("%w: kind must be skill or subagent", ErrBadQuery)
	case q.Listing != "" && skillmd.ValidateName(q.Listing) != nil:
		return ListQuery{}, fmt.Errorf("%w: no such listing", ErrBadQuery)
	}
	// Control characters are no part of a search (search.Words splits at
	// them) and no part of what the page echoes: each is a space. Text
	// with no word to search for is the plain list, as the API answers it
	// (search.Parse's zero Query), not every entry "best first".
	q.Q = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, q.Q))
	if search.Parse(q.Q).IsZero() {
		q.Q = ""
	}
	q.Kind = catalog.Kind(kind)
	if page != "" {
		n, err := strconv.Atoi(page)
		if err != nil || n < 1 || n > MaxPage || strconv.Itoa(n) != page {
			return ListQuery{}, fmt.Errorf("%w: page must be a number from 1 to %d", ErrBadQuery, MaxPage)
		}
		q.Page = n
	}
	return q, nil
}

// ListPage is a page of the catalog's list, or of a listing's.
type ListPage struct {
	L       Layout
	Heading string
	Intro   string
	// Install holds a listing's install instructions (its page only).
	Install []Install
	// Action is where the search form submits to: the page itself.
	Action               string
	Query, Kind, Listing string
	Listings             []string // the listings the caller can see, for the filter
	Summary              string
	Rows                 []Row
	// RowsHTML is Rows as the page shows them (rowsHTML).
	RowsHTML   template.HTML
	Page       int
	Prev, Next string
}

// Row is one entry of a list.
type Row struct {
	Name, Href, Kind, Listing, Version, Description string
	Private                                         bool
}

// List returns a page of the catalog's list. found is false when the query
// names a listing the caller cannot see (or that does not exist): the
// caller answers it as a page that does not exist.
func (s *Site) List(q ListQuery) (p ListPage, found bool) {
	return s.list(q, routes.Catalog, q.Listing)
}

// Listing returns a page of a listing's own page: its members and how to
// install them. found is false as for List.
func (s *Site) Listing(name string, q ListQuery) (p ListPage, found bool) {
	q.Listing = name
	p, found = s.list(q, routes.CatalogListing(name), "")
	if !found {
		return p, false
	}
	p.Heading = "Listing " + name
	p.Intro = "The skills published in listing " + name + ", served at their own index."
	p.Install = s.listingInstall(name)
	p.L.Title = p.Heading
	return p, true
}

// list builds a list page at path over q; a listing-scoped path takes its
// listing from the path (filterListing "" keeps the filter off the form).
func (s *Site) list(q ListQuery, path, filterListing string) (ListPage, bool) {
	if q.Listing != "" {
		if _, ok := s.View.Listing(q.Listing, s.Caller); !ok {
			return ListPage{}, false
		}
	}
	sc := Scope{Kind: q.Kind, Listing: q.Listing}
	skip := (q.Page - 1) * PageSize
	found := s.Index.search(sc, search.Parse(q.Q), s.Caller, skip, PageSize+1)
	if len(found) == 0 && q.Page > 1 { // past the end: no such page
		return ListPage{}, false
	}
	more := len(found) > PageSize
	found = found[:min(len(found), PageSize)]

	p := ListPage{
		L: NewLayout("Catalog", s.Base, s.KeyID), Heading: "Skills and sub-agents", Action: path,
		Query: q.Q, Kind: string(q.Kind), Listing: filterListing, Page: q.Page,
	}
	switch q.Kind {
	case catalog.KindSkill:
		p.Heading = "Skills"
	case catalog.KindSubagent:
		p.Heading = "Sub-agents"
	}
	if path == routes.Catalog {
		p.Listings = s.Index.visibleListings(s.Caller)
	}
	for _, e := range found {
		p.Rows = append(p.Rows, s.row(e))
	}
	p.RowsHTML = rowsHTML(p.Rows)
	switch {
	case q.Q != "" && len(p.Rows) == 0:
		p.Summary = "Nothing matches “" + q.Q + "”."
	case q.Q != "":
		p.Summary = fmt.Sprintf("Results %d to %d for “%s”, best first.", skip+1, skip+len(p.Rows), q.Q)
	default:
		n := s.Index.count(sc, s.Caller)
		p.Summary = fmt.Sprintf("%d in all, by name.", n)
		if len(p.Rows) > 0 {
			p.Summary = fmt.Sprintf("%d in all, by name; showing %d to %d.", n, skip+1, skip+len(p.Rows))
		}
	}
	link := func(page int) string {
		v := url.Values{}
		if q.Q != "" {
			v.Set("q", q.Q)
		}
		if q.Kind != "" {
			v.Set("kind", string(q.Kind))
		}
		if filterListing != "" {
			v.Set("listing", filterListing)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if q.Page > 1 {
		p.Prev = link(q.Page - 1)
	}
	if more && q.Page < MaxPage {
		p.Next = link(q.Page + 1)
	}
	return p, true
}

func (s *Site) row(e *catalog.Entry) Row {
	r := Row{Name: e.Name, Href: entryHref(e), Kind: kindLabel(e.Kind), Listing: e.Listing,
		Description: clipRunes(e.EffectiveDescription(), maxListDescription), Private: !e.VisibleTo(audience.Anonymous)}
	if v := e.LatestVersion(); v != nil {
		r.Version = v.Label
	}
	return r
}

// rowsHTML writes the list's items. A list is most of a page and the same
// few elements over and over, so they are written here, every value
// escaped (template.HTMLEscapeString), rather than by html/template, whose
// reflection would cost a list page twice what the rest of it does; the
// browser tier's corpus checks what this writes like the rest.
func rowsHTML(rows []Row) template.HTML {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	esc := template.HTMLEscapeString
	b.WriteString("<ul class=\"entries\">\n")
	for _, r := range rows {
		b.WriteString(`<li><a class="name" href="`)
		b.WriteString(esc(r.Href))
		b.WriteString(`">`)
		b.WriteString(esc(r.Name))
		b.WriteString(`</a> <span class="badge">`)
		b.WriteString(esc(r.Kind))
		b.WriteString(`</span>`)
		if r.Listing != "" {
			b.WriteString(` <span class="badge">listing `)
			b.WriteString(esc(r.Listing))
			b.WriteString(`</span>`)
		}
		if r.Private {
			b.WriteString(` <span class="badge private">authenticated</span>`)
		}
		b.WriteString(` <span class="muted">`)
		b.WriteString(esc(r.Version))
		b.WriteString(`</span><p class="desc" dir="auto">`)
		b.WriteString(esc(r.Description))
		b.WriteString("</p></li>\n")
	}
	b.WriteString("</ul>")
	return template.HTML(b.String()) // #nosec G203 -- every value above is escaped
}

// entryHref is the page of an entry.
func entryHref(e *catalog.Entry) string {
	if e.Kind == catalog.KindSubagent {
		return routes.CatalogSubagent(url.PathEscape(e.Name))
	}
	return routes.CatalogSkill(url.PathEscape(e.Listing), url.PathEscape(e.Name))
}

func kindLabel(k catalog.Kind) string {
	if k == catalog.KindSubagent {
		return "sub-agent"
	}
	return "skill"
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// RenderList writes a list page.
func RenderList(w io.Writer, p ListPage) error { return render(w, "list", p) }
