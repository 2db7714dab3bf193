package catalog

import (
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// Document is a feed document the indexer rendered into the bucket for one
// origin and class of caller (the large ones: a document too large for a
// Lambda response must be fetched from the bucket itself). The request
// path answers the document's route from it, or redirects to it, instead
// of rendering the document from the entries.
type Document struct {
	// Origin ("https://host"), Path (the route it answers), and
	// Authenticated and Audiences (the audience.Class it was rendered for)
	// say what it is; Groups are the audiences that decide the classes of
	// its path (the same for every class), which tell a caller's class.
	Origin        string          `json:"origin"`
	Path          string          `json:"path"`
	Authenticated bool            `json:"authenticated,omitempty"`
	Audiences     audience.Set    `json:"audiences,omitempty"`
	Groups        audience.Groups `json:"groups,omitempty"`
	// Identity is the document as JSON; Gzip, when set, its gzip encoding.
	Identity Rendition  `json:"identity"`
	Gzip     *Rendition `json:"gzip,omitempty"`
	// Layout, when set, is where the chunks of items lie in both (a
	// feeddoc.Layout as JSON): what the next publish copies instead of
	// rendering and compressing again. The request path does not read it.
	Layout *Rendition `json:"layout,omitempty"`
}

// Renditions are the objects d pins: its identity, and its gzip encoding
// and layout when it has them.
func (d *Document) Renditions() []*Rendition {
	out := []*Rendition{&d.Identity}
	for _, r := range []*Rendition{d.Gzip, d.Layout} {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// Rendition is one stored encoding of a Document: an object of the bucket,
// pinned to the version the indexer wrote, with the digest and size of its
// bytes.
type Rendition struct {
	Key       string `json:"key"`
	VersionID string `json:"versionId,omitempty"`
	// ETag is the object's as written: a key written since has another.
	ETag   string        `json:"etag,omitempty"`
	Digest digest.Digest `json:"digest"`
	Size   int64         `json:"size"`
}

// Class is the class of caller d was rendered for.
func (d *Document) Class() audience.Class {
	return audience.Class{Authenticated: d.Authenticated, Audiences: d.Audiences}
}

// Document returns the document rendered for origin and path in the
// caller's class, or nil.
func (c *Catalog) Document(origin, path string, caller audience.Caller) *Document {
	return findDocument(c.Documents, origin, path, caller)
}

// findDocument finds the document of origin and path rendered for the
// caller's class, which the groups recorded with the path's documents
// tell.
func findDocument(docs []Document, origin, path string, caller audience.Caller) *Document {
	var class *audience.Class
	for i := range docs {
		d := &docs[i]
		if d.Origin != origin || d.Path != path {
			continue
		}
		if class == nil {
			cl := d.Groups.Class(caller)
			class = &cl
		}
		if d.Authenticated == class.Authenticated && d.Audiences.Equal(class.Audiences) {
			return d
		}
	}
	return nil
}

// FindClass returns the document of origin and path rendered for class,
// or nil.
func FindClass(docs []Document, origin, path string, class audience.Class) *Document {
	for i := range docs {
		if d := &docs[i]; d.Origin == origin && d.Path == path && d.Authenticated == class.Authenticated && d.Audiences.Equal(class.Audiences) {
			return d
		}
	}
	return nil
}
