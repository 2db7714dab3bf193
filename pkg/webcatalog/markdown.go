package webcatalog

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
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
// the body had to be cut to fit.
func RenderMarkdown(body []byte) (out template.HTML, cut bool) {
	src := body
	for {
		var buf bytes.Buffer
		if err := md.Convert(src, &buf); err != nil { // goldmark fails only on a failing writer
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
	if entering {
		openLink(w, n.Destination, n.Title)
	} else {
		closeLink(w, n.Destination)
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
	openLink(w, n.Destination, n.Title)
	_, _ = w.WriteString(`<span class="img-alt">image: `)
	_, _ = w.Write(util.EscapeHTML(altText(n, source)))
	_, _ = w.WriteString(`</span>`)
	closeLink(w, n.Destination)
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

func openLink(w util.BufWriter, dest, title []byte) {
	href, ok := SafeHref(string(dest))
	if !ok {
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
	if _, ok := SafeHref(string(dest)); ok {
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
