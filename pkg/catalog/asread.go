package catalog

import (
	"bytes"
	"slices"
	"time"
)

// asRead is an entry as Decode read it: its line, and a copy of what the
// line decoded to. Encode writes the line back when the entry still equals
// the copy, so a write costs what changed plus copying the rest, not
// re-encoding every entry. The copy is deep (slices and pointers are
// copied), so a change made through any of the entry's fields shows.
type asRead struct {
	line []byte
	was  Entry
}

// remember records line as e's encoding.
func (e *Entry) remember(line []byte) {
	e.read = &asRead{line: line, was: e.clone()}
}

// unchanged reports whether e still encodes as the line it was read from.
func (e *Entry) unchanged() bool {
	return e.read != nil && sameEntry(e, &e.read.was)
}

// Changed reports whether e is not as Decode read it: new, or changed
// since (what a write of the catalog encodes anew).
func (e *Entry) Changed() bool { return !e.unchanged() }

// clone is a deep copy of the encoded fields of e.
func (e *Entry) clone() Entry {
	c := Entry{
		Name: e.Name, Kind: e.Kind, Listing: e.Listing, Source: e.Source, Path: e.Path,
		ExternalURL: e.ExternalURL, Visibility: e.Visibility, Audiences: slices.Clone(e.Audiences), Description: e.Description,
		Listings: slices.Clone(e.Listings), Latest: e.Latest,
		First: e.First, FirstPublished: e.FirstPublished, Count: e.Count,
		Withdrawn: e.Withdrawn, Contenders: slices.Clone(e.Contenders),
	}
	if e.Head != nil {
		h := cloneVersion(*e.Head)
		c.Head = &h
	}
	c.lazy = e.lazy // a head read stays as read until asked for; lazyHead keeps its own copy
	if e.WithdrawnAt != nil {
		t := *e.WithdrawnAt
		c.WithdrawnAt = &t
	}
	return c
}

func cloneVersion(v Version) Version {
	v.Frontmatter = bytes.Clone(v.Frontmatter)
	v.Files = slices.Clone(v.Files)
	v.Scan = v.Scan.Clone()
	if v.Gone != nil {
		g := *v.Gone
		v.Gone = &g
	}
	if v.Bundle != nil {
		b := *v.Bundle
		v.Bundle = &b
	}
	return v
}

// sameEntry compares the encoded fields of two entries.
func sameEntry(a, b *Entry) bool {
	return a.Name == b.Name && a.Kind == b.Kind && a.Listing == b.Listing && a.Source == b.Source &&
		a.Path == b.Path && a.ExternalURL == b.ExternalURL && a.Visibility == b.Visibility && a.Audiences.Equal(b.Audiences) &&
		a.Description == b.Description && slices.Equal(a.Listings, b.Listings) && a.Latest == b.Latest &&
		a.First == b.First && a.FirstPublished.Equal(b.FirstPublished) && sameLocation(a.FirstPublished, b.FirstPublished) &&
		a.Count == b.Count && a.Withdrawn == b.Withdrawn && slices.Equal(a.Contenders, b.Contenders) &&
		sameTimePtr(a.WithdrawnAt, b.WithdrawnAt) && sameHeadAsRead(a, b)
}

// sameHeadAsRead reports whether e's head is still the one was (the copy
// remember made of e) was read with: a head read and never asked for is;
// one decoded is unless changed in place; one set anew is compared with
// the head as read.
func sameHeadAsRead(e, was *Entry) bool {
	if e.Head == nil && was.Head == nil && e.lazy == was.lazy {
		if e.lazy == nil || !e.lazy.decoded() {
			return true
		}
		return sameVersionPtr(e.lazy.v, e.lazy.pristine)
	}
	return sameVersionPtr(e.head(), was.asReadHead())
}

// asReadHead is the head of was as it was read.
func (e *Entry) asReadHead() *Version {
	if e.Head != nil || e.lazy == nil {
		return e.Head
	}
	if _, err := e.lazy.get(); err != nil {
		return nil
	}
	return e.lazy.pristine
}

func sameVersionPtr(a, b *Version) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Label == b.Label && a.Digest == b.Digest && a.Type == b.Type && a.Format == b.Format &&
		a.Size == b.Size && a.SourceKey == b.SourceKey &&
		a.PublishedAt.Equal(b.PublishedAt) && sameLocation(a.PublishedAt, b.PublishedAt) &&
		a.Description == b.Description && a.Subagent == b.Subagent &&
		bytes.Equal(a.Frontmatter, b.Frontmatter) && slices.Equal(a.Files, b.Files) && a.MCPExcluded == b.MCPExcluded &&
		a.Scan.Equal(b.Scan) && sameGone(a.Gone, b.Gone) && sameBundle(a.Bundle, b.Bundle)
}

func sameGone(a, b *Gone) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Code == b.Code && a.Reason == b.Reason && a.At.Equal(b.At) && sameLocation(a.At, b.At)
}

func sameBundle(a, b *Bundle) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameTimePtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b) && sameLocation(*a, *b)
}

// sameLocation: two equal instants in different zones encode differently.
func sameLocation(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return ao == bo
}
