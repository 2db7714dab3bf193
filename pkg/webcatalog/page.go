// Package webcatalog renders the web catalog: server-rendered HTML pages
// for the people who choose, review and approve skills, beside the JSON
// feeds agents read. A list of every skill and sub-agent the caller may
// see (paginated, searched and filtered with a plain GET form), a page per
// skill, sub-agent and listing (the rendered SKILL.md or agent.md, its
// frontmatter, files, version history and install instructions for this
// origin), and the sign-in form.
//
// It is a pure renderer, like the feeds' packages: fed a catalog.View, the
// caller's authentication (which decides visibility through the view's
// accessors, exactly as for the feeds) and the origin, it writes HTML. The
// HTTP side (routes, sessions, headers, integrity of the bytes read) is
// package server's. Pages need no script and load nothing from elsewhere:
// the one stylesheet and the one script (copy buttons) are embedded here
// and served from the catalog's own origin under a strict CSP (Headers).
package webcatalog

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the page templates, each with the layout.
var pages = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"list", "entry", "signin", "error"} {
		t := template.New(name).Funcs(template.FuncMap{"installs": installsHTML})
		out[name] = template.Must(t.ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

// Layout is what every page shows around its content.
type Layout struct {
	// Title is the page's title (the site's name is appended).
	Title string
	// Origin is the public origin the page is served at, "https://host".
	Origin string
	// KeyID names the key the browser signed in with; "" when anonymous.
	KeyID string
	// Notice is a one-line message shown above the content.
	Notice string
	// Home, SignIn, SignOut, CSS and JS are the pages' own paths.
	Home, SignIn, SignOut, CSS, JS string
}

// NewLayout returns the layout of a page for a caller at origin base,
// signed in with keyID ("" for none).
func NewLayout(title string, base *url.URL, keyID string) Layout {
	return Layout{
		Title: title, Origin: origin(base), KeyID: keyID,
		Home: routes.Catalog, SignIn: routes.CatalogSignIn, SignOut: routes.CatalogSignOut,
		CSS: stylesheet.path, JS: script.path,
	}
}

func origin(base *url.URL) string {
	if base == nil {
		return ""
	}
	return (&url.URL{Scheme: base.Scheme, Host: base.Host}).String()
}

// render executes the named template with data (a page's struct, whose
// field L is the layout) into a buffer, so a failure is an error rather
// than half a page.
func render(w io.Writer, name string, data any) error {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("render %s page: %w", name, err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// Install is one way to install an entry: a titled, copyable text (a
// command, a configuration) and a note, or a note alone when that way
// cannot install it.
type Install struct {
	ID, Title, Text, Note string
}

// installsHTML writes copyable blocks (a page's install and verify
// instructions), every value escaped (template.HTMLEscapeString), as
// rowsHTML writes a list's: through html/template's reflection the few
// blocks of a skill page would cost as much as the rest of it. The copy
// script finds each block's text by the code element's id.
func installsHTML(ins []Install) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	for _, in := range ins {
		id, title := esc(in.ID), esc(in.Title)
		b.WriteString(`<section class="install" aria-labelledby="` + id + `-title">` + "\n")
		b.WriteString(`<div class="head"><h3 id="` + id + `-title">` + title + `</h3>`)
		if in.Text != "" {
			b.WriteString(`<button type="button" data-copy="` + id + `" data-label="` + title + `" hidden>Copy</button>`)
		}
		b.WriteString("</div>\n")
		if in.Text != "" {
			b.WriteString(`<pre><code id="` + id + `">` + esc(in.Text) + "</code></pre>\n")
		}
		if in.Note != "" {
			b.WriteString(`<p class="muted">` + esc(in.Note) + "</p>\n")
		}
		b.WriteString("</section>")
	}
	return template.HTML(b.String()) // #nosec G203 -- every value above is escaped
}

// SignInPage is the sign-in form.
type SignInPage struct {
	L Layout
	// Enabled is false when the deployment has no session secret.
	Enabled bool
	// Unavailable says why signing in cannot work on this origin (plain
	// HTTP off loopback): the page says so instead of the form.
	Unavailable string
	// Error says why the last attempt failed.
	Error  string
	Action string
}

// RenderSignIn writes the sign-in page.
func RenderSignIn(w io.Writer, p SignInPage) error {
	p.Action = routes.CatalogSignIn
	return render(w, "signin", p)
}

// ErrorPage is a page that says what went wrong, in a sentence.
type ErrorPage struct {
	L       Layout
	Message string
}

// RenderError writes an error page; its layout's Title is its heading.
func RenderError(w io.Writer, p ErrorPage) error { return render(w, "error", p) }
