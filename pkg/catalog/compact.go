package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A version's description is its frontmatter's, which the version keeps
// verbatim: the catalog object holds it once. At 1,000-character
// descriptions that is a third of the object. A description that is not
// the frontmatter's (or a version without frontmatter) is written out.

// storedVersion is a Version as the catalog object holds it.
type storedVersion struct {
	Version
	// Description shadows Version.Description: absent when it is the
	// frontmatter's.
	Description *string `json:"description,omitempty"`
}

// storedEntry is an entry line: the entry with its head as stored.
type storedEntry struct {
	Entry
	Head *storedVersion `json:"head,omitempty"`
}

// compact is v as stored.
func compact(v *Version) *storedVersion {
	s := &storedVersion{Version: *v}
	if d, ok := frontmatterDescription(v.Frontmatter); !ok || d != v.Description {
		d := v.Description
		s.Description = &d
	}
	return s
}

// expand is the version s stores.
func (s *storedVersion) expand() (Version, error) {
	v := s.Version
	switch {
	case s.Description != nil:
		v.Description = *s.Description
	default:
		d, ok := frontmatterDescription(v.Frontmatter)
		if !ok {
			return Version{}, fmt.Errorf("version %s: no description, and none in its frontmatter", v.Label)
		}
		v.Description = d
	}
	return v, nil
}

// frontmatterDescription is the description a frontmatter holds; ok is
// false when it holds none (no frontmatter, not an object, no description
// or one that is not a string).
func frontmatterDescription(fm json.RawMessage) (d string, ok bool) {
	if len(fm) == 0 {
		return "", false
	}
	var v struct {
		Description *string `json:"description"`
	}
	if decodeJSON(fm, &v) != nil || v.Description == nil {
		return "", false
	}
	return *v.Description, true
}

// marshalEntry is e's entry line.
func marshalEntry(e *Entry) ([]byte, error) {
	if err := e.headErr(); err != nil {
		return nil, err
	}
	line := storedEntry{Entry: *e}
	if h := e.head(); h != nil {
		line.Head = compact(h)
	}
	return json.Marshal(&line)
}

// lineEntry is an entry line with its head left undecoded.
type lineEntry struct {
	Entry
	Head json.RawMessage `json:"head,omitempty"`
}

// unmarshalEntry decodes an entry line into e, all but its head, which is
// decoded when first asked for (lazyhead.go). A head whose label is not
// the entry's latest is decoded at once, as the shortcut of Live would
// not hold for it.
func unmarshalEntry(b []byte, e *Entry) error {
	var line lineEntry
	if err := decodeJSON(b, &line); err != nil {
		return err
	}
	*e = line.Entry
	if len(line.Head) > 0 && !bytes.Equal(line.Head, []byte("null")) {
		e.lazy = &lazyHead{raw: line.Head}
		if !e.lazy.labelIs(e.Latest) {
			if err := e.headErr(); err != nil {
				return err
			}
		}
	}
	return nil
}

// marshalVersions is a history line.
func marshalVersions(vs []Version) ([]byte, error) {
	out := make([]*storedVersion, len(vs))
	for i := range vs {
		out[i] = compact(&vs[i])
	}
	return json.Marshal(out)
}

// unmarshalVersions decodes a history line.
func unmarshalVersions(b []byte) ([]Version, error) {
	var stored []storedVersion
	if err := decodeJSON(b, &stored); err != nil {
		return nil, err
	}
	out := make([]Version, len(stored))
	for i := range stored {
		v, err := stored[i].expand()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
