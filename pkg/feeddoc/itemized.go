package feeddoc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/klauspost/compress/flate"
)

// An itemized document is a JSON object holding one array of items sorted
// by name, each an object whose first member is its "name": the RFC index
// and the native pages of everything. The indexer stores the large ones in
// the bucket with a gzip encoding made of chunks of items, each compressed
// on its own, and a Layout saying where each chunk lies in both; a publish
// then encodes and compresses again only the items it changed and the
// chunks holding them, and copies the rest (Splice). The bytes are those of
// Render of the same document; the gzip encoding is one standard member.

// Item is one item of an itemized document: its name and its JSON as the
// document holds it.
type Item struct {
	Name string
	JSON []byte
}

// EncodeItem is v's JSON as Render writes it inside a document (no HTML
// escaping, no newline). v must be a value of skilldrop's own item types.
func EncodeItem(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("feeddoc: encode item: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// Frame is what an itemized document holds around its items: empty is the
// document with no items, as Render writes it; its one "[]" is where the
// items go. ok is false when empty is not of that shape.
func Frame(empty []byte) (prefix, suffix []byte, ok bool) {
	if bytes.Count(empty, []byte("[]")) != 1 {
		return nil, nil, false
	}
	i := bytes.Index(empty, []byte("[]"))
	return empty[:i+1], empty[i+1:], true
}

// chunkEvery is the mean number of items in a chunk: a chunk ends after an
// item whose name hashes to a multiple of it, so where chunks end depends
// on the names alone, and a change moves no boundary but its own chunk's.
// At 300 bytes an item, a chunk is about 150 KB of a document.
const chunkEvery = 512

func endsChunk(name string) bool {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64()%chunkEvery == 0
}

// Layout is where the parts of a stored itemized document lie: the prefix,
// then each chunk (its items, with the comma before all but the first
// chunk's), then the suffix; in the gzip encoding, the header with the
// prefix's unit, each chunk's unit, then the suffix's final unit with the
// trailer.
type Layout struct {
	Prefix   int64   `json:"prefix"`
	Suffix   int64   `json:"suffix"`
	PrefixGz int64   `json:"prefixGz"`
	TailGz   int64   `json:"tailGz"`
	Chunks   []Chunk `json:"chunks"`
}

// Chunk is one chunk of a stored itemized document.
type Chunk struct {
	// First is the name of its first item.
	First string `json:"first"`
	Raw   int64  `json:"raw"`
	Gz    int64  `json:"gz"`
}

// Stored is an itemized document as stored: its bytes, its gzip encoding
// and their layout.
type Stored struct {
	Body, Gz []byte
	Layout   Layout
}

// chunk is a chunk being assembled: its items, or, when it is copied
// from a previous document, where its bytes are there.
type chunk struct {
	items        []Item
	raw, gz      []byte
	copied       bool
	leadingComma bool
}

// Build encodes an itemized document from its frame and its items (sorted
// by name, names unique), chunk by chunk.
func Build(prefix, suffix []byte, items []Item) (*Stored, error) {
	if err := sortedUnique(items); err != nil {
		return nil, err
	}
	return assemble(prefix, suffix, nil, split(items))
}

func sortedUnique(items []Item) error {
	for i := 1; i < len(items); i++ {
		if items[i-1].Name >= items[i].Name {
			return fmt.Errorf("feeddoc: items out of order at %q", items[i].Name)
		}
	}
	return nil
}

// split cuts items into chunks where the names say.
func split(items []Item) []*chunk {
	var out []*chunk
	start := 0
	for i, it := range items {
		if endsChunk(it.Name) || i == len(items)-1 {
			out = append(out, &chunk{items: items[start : i+1]})
			start = i + 1
		}
	}
	return out
}

// ErrLayout is a previous document whose layout does not describe it.
var ErrLayout = errors.New("feeddoc: the layout does not describe the document")

// Splice is prev (a document Build or Splice made, whose bytes the caller
// has checked) with the items of changes put in: an item named in changes
// replaces the one of that name or is added; a nil JSON removes it (and is
// nothing when there is none). Chunks holding no change are copied, bytes
// and gzip units alike; the result is byte for byte what Build makes of
// the same items.
func Splice(prev *Stored, prefix, suffix []byte, changes map[string][]byte) (*Stored, error) {
	old, err := prev.chunks()
	if err != nil {
		return nil, err
	}
	if len(old) == 0 {
		return assemble(prefix, suffix, nil, split(apply(nil, changes, mapKeys(changes))))
	}
	// Each change falls into the last chunk whose first item is not after
	// it (the first chunk for a name before every other).
	at := map[int][]string{}
	for n := range changes {
		i := max(sort.Search(len(old), func(i int) bool { return old[i].first() > n })-1, 0)
		at[i] = append(at[i], n)
	}
	var out []*chunk
	for i := 0; i < len(old); {
		if at[i] == nil {
			out = append(out, old[i])
			i++
			continue
		}
		// The chunks from i on, as many as the changes fall into, and then
		// until the items end on a boundary again: only there can the
		// copying resume.
		j := i + 1
		var items []Item
		for {
			items, err = merged(old[i:j], changes, at, i)
			if err != nil {
				return nil, err
			}
			if j == len(old) || (at[j] == nil && (len(items) == 0 || endsChunk(items[len(items)-1].Name))) {
				break
			}
			j++
		}
		out = append(out, split(items)...)
		i = j
	}
	var keepPrefix []byte
	if bytes.Equal(prefix, prev.Body[:prev.Layout.Prefix]) {
		keepPrefix = prev.Gz[:prev.Layout.PrefixGz]
	}
	return assemble(prefix, suffix, keepPrefix, out)
}

// merged are the items of chunks (the first of which is chunk first of
// the document) with the changes that fall into them.
func merged(chunks []*chunk, changes map[string][]byte, at map[int][]string, first int) ([]Item, error) {
	var items []Item
	var names []string
	for k, c := range chunks {
		its, err := c.parse()
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
		names = append(names, at[first+k]...)
	}
	return apply(items, changes, slices.Values(names)), nil
}

// apply puts the changes named in names into items (sorted by name).
func apply(items []Item, changes map[string][]byte, names func(func(string) bool)) []Item {
	out := slices.Clone(items)
	byName := map[string]int{}
	for i, it := range out {
		byName[it.Name] = i
	}
	gone := map[string]bool{}
	for n := range names {
		j := changes[n]
		if i, ok := byName[n]; ok {
			if j == nil {
				gone[n] = true
			} else {
				out[i] = Item{Name: n, JSON: j}
			}
		} else if j != nil {
			out = append(out, Item{Name: n, JSON: j})
		}
	}
	out = slices.DeleteFunc(out, func(it Item) bool { return gone[it.Name] })
	slices.SortFunc(out, func(a, b Item) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func mapKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// first is the name of the chunk's first item.
func (c *chunk) first() string {
	if len(c.items) > 0 {
		return c.items[0].Name
	}
	return ""
}

// chunks cuts the previous document into its chunks, as its layout says,
// checking that the layout adds up and each chunk starts with its first
// item.
func (s *Stored) chunks() ([]*chunk, error) {
	l := s.Layout
	raw, gz := l.Prefix, l.PrefixGz
	var out []*chunk
	for i, c := range l.Chunks {
		if c.Raw <= 0 || c.Gz <= 0 || raw+c.Raw > int64(len(s.Body)) || gz+c.Gz > int64(len(s.Gz)) {
			return nil, ErrLayout
		}
		b := s.Body[raw : raw+c.Raw]
		ch := &chunk{raw: b, gz: s.Gz[gz : gz+c.Gz], copied: true, leadingComma: i > 0}
		if i > 0 {
			if b[0] != ',' {
				return nil, ErrLayout
			}
			b = b[1:]
		}
		if !bytes.HasPrefix(b, nameMember(c.First)) {
			return nil, ErrLayout
		}
		ch.items = []Item{{Name: c.First}} // the first only, until parsed
		out = append(out, ch)
		raw, gz = raw+c.Raw, gz+c.Gz
	}
	if raw+l.Suffix != int64(len(s.Body)) || gz+l.TailGz != int64(len(s.Gz)) {
		return nil, ErrLayout
	}
	return out, nil
}

// nameMember is how an item named name starts.
func nameMember(name string) []byte {
	return append([]byte(`{"name":`), EncodeItem(name)...)
}

// parse splits a copied chunk into its items.
func (c *chunk) parse() ([]Item, error) {
	if !c.copied {
		return c.items, nil
	}
	b := c.raw
	if c.leadingComma {
		b = b[1:]
	}
	var out []Item
	for len(b) > 0 {
		n, err := itemLen(b)
		if err != nil {
			return nil, err
		}
		name, err := itemName(b[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, Item{Name: name, JSON: b[:n]})
		b = b[n:]
		if len(b) > 0 {
			if b[0] != ',' {
				return nil, ErrLayout
			}
			b = b[1:]
		}
	}
	return out, nil
}

// itemLen is the length of the JSON object b starts with.
func itemLen(b []byte) (int, error) {
	if len(b) == 0 || b[0] != '{' {
		return 0, ErrLayout
	}
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, ErrLayout
}

// itemName decodes the "name" member an item starts with.
func itemName(item []byte) (string, error) {
	var v struct {
		Name *string `json:"name"`
	}
	rest, ok := bytes.CutPrefix(item, []byte(`{"name":`))
	if !ok {
		return "", ErrLayout
	}
	end, err := stringLen(rest)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(append(append([]byte(`{"name":`), rest[:end]...), '}'), &v); err != nil || v.Name == nil {
		return "", ErrLayout
	}
	return *v.Name, nil
}

// stringLen is the length of the JSON string b starts with.
func stringLen(b []byte) (int, error) {
	if len(b) == 0 || b[0] != '"' {
		return 0, ErrLayout
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, ErrLayout
}

// gzipHeader is the member header of every stored encoding: no name, no
// time, the fastest compression (XFL 4), an unknown system.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff}

// assemble lays the document out: the prefix (its unit copied when
// keepPrefix holds it), the chunks (copied ones as they were, the others
// encoded and compressed now), the suffix in the final unit, and the
// trailer.
func assemble(prefix, suffix, keepPrefix []byte, chunks []*chunk) (*Stored, error) {
	var fw *flate.Writer
	var unit bytes.Buffer
	compress := func(b []byte, final bool) ([]byte, error) {
		unit.Reset()
		if fw == nil {
			var err error
			if fw, err = flate.NewWriter(&unit, StoredLevel); err != nil {
				return nil, err
			}
		} else {
			fw.Reset(&unit)
		}
		if _, err := fw.Write(b); err != nil {
			return nil, err
		}
		var err error
		if final {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		return bytes.Clone(unit.Bytes()), err
	}
	s := &Stored{Layout: Layout{Prefix: int64(len(prefix)), Suffix: int64(len(suffix))}}
	size := len(prefix) + len(suffix)
	for _, c := range chunks {
		size += len(c.raw) + 1
		for _, it := range c.items {
			size += len(it.JSON) + 1
		}
	}
	body := make([]byte, 0, size)
	body = append(body, prefix...)
	gz := append([]byte(nil), gzipHeader...)
	if keepPrefix != nil {
		gz = append(gz, keepPrefix[len(gzipHeader):]...)
	} else {
		u, err := compress(prefix, false)
		if err != nil {
			return nil, err
		}
		gz = append(gz, u...)
	}
	s.Layout.PrefixGz = int64(len(gz))
	for i, c := range chunks {
		comma := i > 0
		if !c.copied || c.leadingComma != comma {
			var raw []byte
			items, err := c.parse()
			if err != nil {
				return nil, err
			}
			if comma {
				raw = append(raw, ',')
			}
			for k, it := range items {
				if k > 0 {
					raw = append(raw, ',')
				}
				raw = append(raw, it.JSON...)
			}
			u, err := compress(raw, false)
			if err != nil {
				return nil, err
			}
			c = &chunk{items: items, raw: raw, gz: u}
		}
		body = append(body, c.raw...)
		gz = append(gz, c.gz...)
		s.Layout.Chunks = append(s.Layout.Chunks, Chunk{First: c.first(), Raw: int64(len(c.raw)), Gz: int64(len(c.gz))})
	}
	body = append(body, suffix...)
	tail, err := compress(suffix, true)
	if err != nil {
		return nil, err
	}
	tail = binary.LittleEndian.AppendUint32(tail, crc32.ChecksumIEEE(body))
	tail = binary.LittleEndian.AppendUint32(tail, uint32(len(body)))
	gz = append(gz, tail...)
	s.Layout.TailGz = int64(len(tail))
	s.Body, s.Gz = body, gz
	return s, nil
}
