package webcatalog

import (
	"bytes"
	"html/template"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxBodyHTML bounds the rendered HTML of one SKILL.md or agent.md on a
// page; a longer document is cut (at a line) and the page links the file.
// With the most the other sections show (files, versions, the scan's
// findings, provenance) a page stays under its 60 KB budget.
const MaxBodyHTML = 24 << 10

// md renders CommonMark with GitHub's tables, strikethrough, task lists and
// autolinks. Raw HTML is never passed through, nor dropped: an agent reads
// it, so the person reviewing sees it too, escaped, as marked source
// (rawHTMLRenderer). Links and images are written by linkRenderer. No attribute syntax, no heading ids: nothing in the
// document may name an attribute of its own.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(
		renderer.WithNodeRenderers(util.Prioritized(linkRenderer{}, 100), util.Prioritized(rawHTMLRenderer{}, 100)),
	),
)

// RenderMarkdown renders a document's body (the text after its
// frontmatter) for a page: HTML no larger than MaxBodyHTML, and whether
// the body had to be cut to fit. files maps the paths of the version's
// files the page shows (relative to the skill's root, where its SKILL.md
// is) to where the page shows each: a relative link or image resolves
// against them (resolveRelative).
func RenderMarkdown(body []byte, files map[string]string) (out template.HTML, cut bool) {
	src := body
	for {
		var buf bytes.Buffer
		doc := md.Parser().Parse(text.NewReader(src))
		resolveRelative(doc, files)
		if err := md.Renderer().Render(&buf, src, doc); err != nil { // goldmark fails only on a failing writer
			return template.HTML(""), true
		}
		if buf.Len() <= MaxBodyHTML {
			return template.HTML(buf.String()), cut // #nosec G203 -- goldmark output: raw HTML escaped, links vetted
		}
		cut = true
		// Shrink the source in proportion, at a line break, and render again.
		keep := int(int64(len(src)) * MaxBodyHTML / int64(buf.Len()) * 9 / 10)
		if i := bytes.LastIndexByte(src[:keep], '\n'); i > 0 {
			keep = i
		}
		for keep > 0 && !utf8.Valid(src[:keep]) {
			keep--
		}
		src = src[:keep]
	}
}

// unlinked marks a link or image whose relative target names no file the
// page shows: it is written as text, not a link.
var unlinked = []byte("skilldrop-unlinked")

// resolveRelative rewrites the relative links and images of doc: a
// document's relative reference means a file of its skill, not a page of
// this catalog (reference.md beside /catalog/skills/x is
// /catalog/skills/reference.md, or another skill's page). A target that is
// one of files (its path cleaned, relative to the skill's root) becomes
// where the page shows that file; any other relative path (absolute, out of
// the skill, or no such file) is marked unlinked. A fragment alone, and
// anything with a scheme or host, are left to SafeHref.
func resolveRelative(doc ast.Node, files map[string]string) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest *[]byte
		switch l := n.(type) {
		case *ast.Link:
			dest = &l.Destination
		case *ast.Image:
			dest = &l.Destination
		default:
			return ast.WalkContinue, nil
		}
		raw, relative := relativePath(*dest)
		if !relative {
			return ast.WalkContinue, nil // SafeHref judges it
		}
		p := path.Clean(raw)
		href, ok := files[p]
		if !ok || strings.HasPrefix(raw, "/") || p == ".." || strings.HasPrefix(p, "../") {
			n.SetAttribute(unlinked, true)
			return ast.WalkContinue, nil
		}
		*dest = []byte(href)
		return ast.WalkContinue, nil
	})
}

// relativePath is the path of a link's target when the target is a
// relative reference with a path (no scheme, no host, not a fragment or a
// query alone), unescaped.
func relativePath(dest []byte) (string, bool) {
	d := util.ResolveEntityNames(util.ResolveNumericReferences(dest))
	u, err := url.Parse(string(util.URLEscape(d, false)))
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.Path == "" {
		return "", false
	}
	return u.Path, true
}

// RawHTMLLabel marks raw HTML shown as its source: a block's caption and
// an inline span's title.
const RawHTMLLabel = "raw HTML, shown as text"

// rawHTMLRenderer writes raw HTML (a block, or inline tags) as escaped
// source, never as elements: `<div hidden>…</div>` or a closed
// `<details>` would hide from the page what an agent reads in full. A block
// is a marked code block; inline HTML is code with the same label.
type rawHTMLRenderer struct{}

func (rawHTMLRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(extast.KindTaskCheckBox, renderTaskCheckBox)
}

// renderTaskCheckBox writes a task list item's box as a mark and its state
// in words, not as an <input> (a disabled checkbox without a label, which
// assistive technology announces as an unnamed control).
func renderTaskCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*extast.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<span class="task" aria-hidden="true">☑</span><span class="visually-hidden">done:</span> `)
	} else {
		_, _ = w.WriteString(`<span class="task" aria-hidden="true">☐</span><span class="visually-hidden">not done:</span> `)
	}
	return ast.WalkContinue, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	_, _ = w.WriteString(`<figure class="raw-html"><figcaption>` + RawHTMLLabel + `</figcaption><pre><code>`)
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	if n.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(n.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</code></pre></figure>\n")
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	_, _ = w.WriteString(`<code class="raw-html" title="` + RawHTMLLabel + `">`)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	_, _ = w.WriteString(`</code>`)
	return ast.WalkSkipChildren, nil
}

// linkRenderer writes links, autolinks and images. A link's target must be
// http, https, mailto, or relative (a fragment, a path); anything else
// (javascript:, data:, vbscript:, file:, an unparsable URL) loses its href
// and stays as text. Every link is rel="nofollow noopener noreferrer": the
// documents are written by whoever uploads a skill. An image is never
// loaded (it would come from another origin, or be a data: URL): it is
// shown as a link to its target labelled with its alt text.
type linkRenderer struct{}

func (linkRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImage)
}

func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	dest := n.Destination
	if _, ok := n.Attribute(unlinked); ok {
		dest = nil
	}
	if entering {
		openLink(w, dest, n.Title)
	} else {
		closeLink(w, dest)
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	dest := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(dest), []byte("mailto:")) {
		dest = append([]byte("mailto:"), dest...)
	}
	openLink(w, dest, nil)
	_, _ = w.Write(util.EscapeHTML(n.Label(source)))
	closeLink(w, dest)
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	if !entering {
		return ast.WalkContinue, nil
	}
	dest := n.Destination
	if _, ok := n.Attribute(unlinked); ok {
		dest = nil
	}
	openLink(w, dest, n.Title)
	_, _ = w.WriteString(`<span class="img-alt">image: `)
	_, _ = w.Write(util.EscapeHTML(altText(n, source)))
	_, _ = w.WriteString(`</span>`)
	closeLink(w, dest)
	return ast.WalkSkipChildren, nil
}

// altText is the plain text of an image's description.
func altText(n ast.Node, source []byte) []byte {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && c != n {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Segment.Value(source))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		return ast.WalkContinue, nil
	})
	return b.Bytes()
}

// openLink opens a link to dest, or, when dest is nil (unlinked) or not a
// safe target, a span of text.
func openLink(w util.BufWriter, dest, title []byte) {
	href, ok := SafeHref(string(dest))
	if !ok || dest == nil {
		_, _ = w.WriteString(`<span class="dead-link">`)
		return
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.WriteString(template.HTMLEscapeString(href))
	_, _ = w.WriteString(`" rel="nofollow noopener noreferrer"`)
	if len(title) > 0 {
		_, _ = w.WriteString(` title="`)
		_, _ = w.Write(util.EscapeHTML(title))
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
}

func closeLink(w util.BufWriter, dest []byte) {
	if _, ok := SafeHref(string(dest)); ok && dest != nil {
		_, _ = w.WriteString("</a>")
	} else {
		_, _ = w.WriteString("</span>")
	}
}

// SafeHref returns a document link's target as it may be written into an
// href: percent-encoded where it must be, and only for the schemes a page
// may link to (http, https, mailto) or none (a relative reference).
func SafeHref(dest string) (string, bool) {
	// Character references name what they spell: &#x61; is an "a".
	dest = string(util.ResolveEntityNames(util.ResolveNumericReferences([]byte(dest))))
	if strings.ContainsFunc(dest, func(r rune) bool { return r < 0x21 || r == 0x7f || r == '\\' }) {
		return "", false
	}
	escaped := string(util.URLEscape([]byte(dest), false))
	u, err := url.Parse(escaped)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto", "":
	default:
		return "", false
	}
	return escaped, true
}
