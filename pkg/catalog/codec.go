package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	segjson "github.com/segmentio/encoding/json"
)

// The catalog object is JSON lines, in sections, so that a reader can read
// a byte range and the indexer can copy what did not change:
//
//	line 1      the head: revision, config state, listings, documents, and
//	            the byte length of each section that follows
//	entries     one line per entry: skills in ID order, then sub-agents in
//	            name order, each with its latest version (Entry.Head)
//	lengths     one line: the byte length of each history line, in entry order
//	history     one line per entry, in entry order: its older versions
//	sources     one line: Catalog.Sources
//	config      one line: the YAML of the config in force, as a JSON string
//
// The request path reads the head (a small range), then the entries when a
// route needs them, and one history line when a route asks for a version
// (View.History). The indexer reads the whole object but decodes a history
// line only for an entry it changes, and writes the others back as read.

// MaxHeadBytes bounds the head line: readers read at most this much before
// they know where the sections are.
const MaxHeadBytes = 1 << 20

// MaxBytes bounds the whole catalog object. The indexer never writes one
// larger (ErrFull): it refuses the uploads that would grow it instead.
const MaxBytes = 256 << 20

// ErrFull is wrapped by Encode for a catalog that would be larger than its
// limit.
var ErrFull = errors.New("catalog: full")

// FullError says how large a catalog would have been.
type FullError struct {
	Size, Limit int64
}

func (e *FullError) Error() string {
	return fmt.Sprintf("catalog: the catalog would be %d bytes, more than its limit of %d", e.Size, e.Limit)
}

// Unwrap makes a FullError match ErrFull.
func (e *FullError) Unwrap() error { return ErrFull }

// head is the first line of the object.
type head struct {
	Schema    int           `json:"schema"`
	Revision  int64         `json:"revision"`
	UpdatedAt time.Time     `json:"updatedAt"`
	Config    *configHead   `json:"config,omitempty"`
	Bucket    *BucketConfig `json:"bucket,omitempty"`
	// DefaultVisibility is Catalog.DefaultVisibility.
	DefaultVisibility Visibility          `json:"defaultVisibility,omitempty"`
	Listings          map[string]*Listing `json:"listings"`
	Documents         []Document          `json:"documents,omitempty"`
	// DocumentOrigins are the origins the documents were rendered for.
	DocumentOrigins []string      `json:"documentOrigins,omitempty"`
	Gone            []GoneVersion `json:"gone,omitempty"`
	ScanEngine      string        `json:"scanEngine,omitempty"`
	Signing         *Signing      `json:"signing,omitempty"`
	Skills          int           `json:"skills"`
	Subagents       int           `json:"subagents"`
	Sections        sections      `json:"sections"`
}

// configHead is ConfigState without the YAML, which has a section of its own.
type configHead struct {
	Digest    json.RawMessage `json:"digest"`
	ETag      string          `json:"etag,omitempty"`
	AppliedAt time.Time       `json:"appliedAt"`
}

// sections are the byte lengths of the sections after the head line, in order.
type sections struct {
	Entries int64 `json:"entries"`
	Lengths int64 `json:"lengths"`
	History int64 `json:"history"`
	Sources int64 `json:"sources"`
	Config  int64 `json:"config"`
}

// stored is what Decode keeps of the object for Encode: its size, and the
// sources line with a copy of what it decoded to, written back as read
// while Sources still equals the copy.
type stored struct {
	size        int64
	entries     int64
	sourcesLine []byte
	sourcesWas  map[string]Source
}

// Encode writes c in the sectioned format, copying the history lines of
// entries whose history was not loaded as they were read. It refuses a
// catalog larger than limit (MaxBytes when limit <= 0) with a *FullError.
func Encode(c *Catalog, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxBytes
	}
	skills, agents := c.SortedSkills(), c.SortedSubagents()
	all := append(skills, agents...)
	var entries, history bytes.Buffer
	if c.stored != nil {
		entries.Grow(int(c.stored.entries) + 4096)
	}
	lengths := make([]int, len(all))
	for i, e := range all {
		if e.HasHistory() {
			e.summarize()
		}
		line, err := e.encode()
		if err != nil {
			return nil, err
		}
		entries.Write(line)
		entries.WriteByte('\n')
		h, err := e.storedHistory()
		if err != nil {
			return nil, err
		}
		n, _ := history.Write(h)
		history.WriteByte('\n')
		lengths[i] = n + 1
	}
	lengthsLine, err := json.Marshal(lengths)
	if err != nil {
		return nil, fmt.Errorf("encode history lengths: %w", err)
	}
	lengthsLine = append(lengthsLine, '\n')
	sourcesLine, err := c.encodeSources()
	if err != nil {
		return nil, err
	}
	yaml := ""
	if c.Config != nil {
		yaml = c.Config.YAML
	}
	configLine, err := json.Marshal(yaml)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	configLine = append(configLine, '\n')

	h := head{
		Schema: SchemaVersion, Revision: c.Revision, UpdatedAt: c.UpdatedAt,
		Bucket: c.Bucket, DefaultVisibility: c.DefaultVisibility, Listings: c.Listings, Documents: c.Documents, DocumentOrigins: c.DocumentOrigins,
		Gone: c.Gone, ScanEngine: c.ScanEngine, Signing: c.Signing,
		Skills: len(skills), Subagents: len(agents),
		Sections: sections{
			Entries: int64(entries.Len()), Lengths: int64(len(lengthsLine)), History: int64(history.Len()),
			Sources: int64(len(sourcesLine)), Config: int64(len(configLine)),
		},
	}
	if h.Listings == nil {
		h.Listings = map[string]*Listing{}
	}
	if c.Config != nil {
		d, err := json.Marshal(c.Config.Digest)
		if err != nil {
			return nil, fmt.Errorf("encode config digest: %w", err)
		}
		h.Config = &configHead{Digest: d, ETag: c.Config.ETag, AppliedAt: c.Config.AppliedAt}
	}
	headLine, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode catalog head: %w", err)
	}
	if len(headLine) >= MaxHeadBytes {
		return nil, &FullError{Size: int64(len(headLine)), Limit: MaxHeadBytes}
	}
	size := int64(len(headLine)+1) + h.Sections.total()
	if size > limit {
		return nil, &FullError{Size: size, Limit: limit}
	}
	out := make([]byte, 0, size)
	out = append(out, headLine...)
	out = append(out, '\n')
	out = append(out, entries.Bytes()...)
	out = append(out, lengthsLine...)
	out = append(out, history.Bytes()...)
	out = append(out, sourcesLine...)
	out = append(out, configLine...)
	return out, nil
}

func (s sections) total() int64 { return s.Entries + s.Lengths + s.History + s.Sources + s.Config }

// encodeSources is the sources line, with its newline: as it was read
// when Sources did not change.
func (c *Catalog) encodeSources() ([]byte, error) {
	if c.stored != nil && c.stored.sourcesLine != nil && maps.Equal(c.Sources, c.stored.sourcesWas) {
		return c.stored.sourcesLine, nil
	}
	sources := c.Sources
	if sources == nil {
		sources = map[string]Source{}
	}
	line, err := json.Marshal(sources)
	if err != nil {
		return nil, fmt.Errorf("encode sources: %w", err)
	}
	return append(line, '\n'), nil
}

// encode is the entry line of e: as it was read when e is unchanged.
func (e *Entry) encode() ([]byte, error) {
	if e.unchanged() {
		return e.read.line, nil
	}
	line, err := marshalEntry(e)
	if err != nil {
		return nil, fmt.Errorf("encode entry %s: %w", e.ID(), err)
	}
	return line, nil
}

// storedHistory is the history line of e: its versions but the latest.
func (e *Entry) storedHistory() ([]byte, error) {
	if !e.HasHistory() {
		if e.history == nil {
			return []byte("[]"), nil
		}
		return e.history, nil
	}
	older := e.Versions
	if n := len(older); n > 0 {
		older = older[:n-1]
	}
	if len(older) == 0 {
		return []byte("[]"), nil
	}
	b, err := marshalVersions(older)
	if err != nil {
		return nil, fmt.Errorf("encode history of %s: %w", e.ID(), err)
	}
	return b, nil
}

// Decode reads a catalog object of either schema. The history of each
// entry stays undecoded until LoadHistory.
func Decode(b []byte) (*Catalog, error) {
	line, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok || !bytes.HasPrefix(line, []byte(`{"schema":`)) {
		return decodeLegacy(b)
	}
	h, err := decodeHead(line)
	if err != nil {
		return nil, err
	}
	if h.Schema < SchemaVersion {
		return decodeLegacy(b)
	}
	secs, err := h.Sections.split(rest)
	if err != nil {
		return nil, err
	}
	c := New()
	c.Schema, c.Revision, c.UpdatedAt = h.Schema, h.Revision, h.UpdatedAt
	c.Bucket, c.Documents, c.DocumentOrigins = h.Bucket, h.Documents, h.DocumentOrigins
	c.Gone, c.ScanEngine, c.Signing = h.Gone, h.ScanEngine, h.Signing
	c.DefaultVisibility = h.DefaultVisibility
	if h.Listings != nil {
		c.Listings = h.Listings
	}
	all, err := decodeEntries(secs.entries, h.Skills+h.Subagents, true)
	if err != nil {
		return nil, err
	}
	histories, err := splitHistory(secs.lengths, secs.history, len(all))
	if err != nil {
		return nil, err
	}
	for i, e := range all {
		e.history = histories[i]
		switch e.Kind {
		case KindSkill:
			c.Skills[e.ID()] = e
		case KindSubagent:
			c.Subagents[e.Name] = e
		default:
			return nil, fmt.Errorf("decode %s: entry %q has kind %q", Key, e.Name, e.Kind)
		}
	}
	if err := decodeJSON(bytes.TrimSuffix(secs.sources, []byte{'\n'}), &c.Sources); err != nil {
		return nil, fmt.Errorf("decode %s sources: %w", Key, err)
	}
	if c.Sources == nil {
		c.Sources = map[string]Source{}
	}
	if h.Config != nil {
		cs := &ConfigState{ETag: h.Config.ETag, AppliedAt: h.Config.AppliedAt}
		if err := json.Unmarshal(h.Config.Digest, &cs.Digest); err != nil {
			return nil, fmt.Errorf("decode %s config digest: %w", Key, err)
		}
		if err := json.Unmarshal(bytes.TrimSuffix(secs.config, []byte{'\n'}), &cs.YAML); err != nil {
			return nil, fmt.Errorf("decode %s config: %w", Key, err)
		}
		c.Config = cs
	}
	c.stored = &stored{size: int64(len(b)), entries: h.Sections.Entries,
		sourcesLine: secs.sources, sourcesWas: maps.Clone(c.Sources)}
	return c, nil
}

// decodeJSON decodes the bulk of the object: entries, histories and
// sources, which are most of what a publish and a cold start spend. It is
// segmentio's encoding/json, which accepts and produces what encoding/json
// does (TestFastDecoderAgrees) at a fraction of its cost; Encode stays on
// encoding/json.
var decodeJSON = segjson.Unmarshal

// decodeHead decodes a head line of a schema this build reads.
func decodeHead(line []byte) (*head, error) {
	var h head
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("decode %s head: %w", Key, err)
	}
	if err := checkSchema(h.Schema); err != nil {
		return nil, err
	}
	return &h, nil
}

func checkSchema(schema int) error {
	if schema > SchemaVersion {
		return fmt.Errorf("%w: %s has schema %d, this build reads up to %d", ErrSchema, Key, schema, SchemaVersion)
	}
	return nil
}

// rawSections are the sections of one object, each with its final newline.
type rawSections struct {
	entries, lengths, history, sources, config []byte
}

// split cuts the bytes after the head line into the sections h describes.
func (s sections) split(b []byte) (rawSections, error) {
	if s.total() != int64(len(b)) {
		return rawSections{}, fmt.Errorf("decode %s: the head describes %d bytes of sections, the object holds %d", Key, s.total(), len(b))
	}
	var out rawSections
	for _, p := range []struct {
		dst *[]byte
		n   int64
	}{{&out.entries, s.Entries}, {&out.lengths, s.Lengths}, {&out.history, s.History}, {&out.sources, s.Sources}, {&out.config, s.Config}} {
		if p.n < 0 {
			return rawSections{}, fmt.Errorf("decode %s: a section of %d bytes", Key, p.n)
		}
		*p.dst, b = b[:p.n], b[p.n:]
	}
	return out, nil
}

// decodeEntries decodes the entries section: want lines. With remember,
// each entry keeps its line for Encode.
func decodeEntries(b []byte, want int, remember bool) ([]*Entry, error) {
	out := make([]*Entry, 0, want)
	for len(b) > 0 {
		line, rest, ok := bytes.Cut(b, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("decode %s: the entries section does not end with a newline", Key)
		}
		e := &Entry{}
		if err := unmarshalEntry(line, e); err != nil {
			return nil, fmt.Errorf("decode %s entry %d: %w", Key, len(out)+1, err)
		}
		if remember {
			e.remember(line)
		}
		out = append(out, e)
		b = rest
	}
	if len(out) != want {
		return nil, fmt.Errorf("decode %s: %d entries, the head counts %d", Key, len(out), want)
	}
	return out, nil
}

// splitHistory cuts the history section into n lines (without their
// newlines) by the lengths line.
func splitHistory(lengthsLine, history []byte, n int) ([][]byte, error) {
	lengths, err := parseLengths(lengthsLine)
	if err != nil {
		return nil, err
	}
	if len(lengths) != n {
		return nil, fmt.Errorf("decode %s: %d history lines for %d entries", Key, len(lengths), n)
	}
	out := make([][]byte, n)
	for i, l := range lengths {
		if l < 1 || l > int64(len(history)) || history[l-1] != '\n' {
			return nil, fmt.Errorf("decode %s: history line %d does not fit the section", Key, i+1)
		}
		out[i], history = history[:l-1:l-1], history[l:]
	}
	if len(history) != 0 {
		return nil, fmt.Errorf("decode %s: %d bytes after the last history line", Key, len(history))
	}
	return out, nil
}

// parseLengths reads the lengths line: a JSON array of positive integers,
// parsed by hand because it is the one line every history read needs.
func parseLengths(b []byte) ([]int64, error) {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, fmt.Errorf("decode %s: the lengths line is not an array", Key)
	}
	b = b[1 : len(b)-1]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]int64, 0, bytes.Count(b, []byte{','})+1)
	for f := range bytes.SplitSeq(b, []byte{','}) {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("decode %s: history length %q", Key, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// LoadHistory decodes e's whole history, once; afterwards Versions holds
// it and may be changed (then SetVersions, or Encode, keeps Head in step).
func (e *Entry) LoadHistory() error {
	if e.HasHistory() {
		return nil
	}
	vs, err := decodeHistory(e.history, e.head())
	if err != nil {
		return fmt.Errorf("history of %s: %w", e.ID(), err)
	}
	e.Versions, e.loaded, e.history = vs, true, nil
	return nil
}

// History returns e's whole history, oldest first (the latest last),
// decoding it when it is not loaded, without loading it into e: for
// reading a few entries of a catalog that is not changed. The result must
// not be modified.
func (e *Entry) History() ([]Version, error) {
	if e.HasHistory() {
		return e.Versions, nil
	}
	vs, err := decodeHistory(e.history, e.head())
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", e.ID(), err)
	}
	return vs, nil
}

// decodeHistory turns a history line and the head into the whole history.
func decodeHistory(line []byte, latest *Version) ([]Version, error) {
	var older []Version
	if len(line) > 0 {
		var err error
		if older, err = unmarshalVersions(line); err != nil {
			return nil, err
		}
	}
	if latest != nil {
		older = append(older, *latest)
	}
	return older, nil
}

// NewEntry returns an entry with an empty loaded history, for the indexer
// to publish a first version into.
func NewEntry(kind Kind, listing, name string) *Entry {
	return &Entry{Name: name, Kind: kind, Listing: listing, Visibility: Public, loaded: true}
}

// legacyCatalog is schema 1: one indented JSON document, histories inline.
type legacyCatalog struct {
	Schema    int                     `json:"schema"`
	Revision  int64                   `json:"revision"`
	UpdatedAt time.Time               `json:"updatedAt"`
	Skills    map[string]*legacyEntry `json:"skills"`
	Subagents map[string]*legacyEntry `json:"subagents"`
	Listings  map[string]*Listing     `json:"listings"`
	Config    *ConfigState            `json:"config,omitempty"`
}

type legacyEntry struct {
	Entry
	Versions []Version `json:"versions"`
}

// decodeLegacy reads a schema-1 catalog (and checks a newer one is refused).
func decodeLegacy(b []byte) (*Catalog, error) {
	var l legacyCatalog
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", Key, err)
	}
	if err := checkSchema(l.Schema); err != nil {
		return nil, err
	}
	c := New()
	c.Schema, c.Revision, c.UpdatedAt, c.Config = l.Schema, l.Revision, l.UpdatedAt, l.Config
	if l.Listings != nil {
		c.Listings = l.Listings
	}
	for into, from := range map[*map[string]*Entry]map[string]*legacyEntry{&c.Skills: l.Skills, &c.Subagents: l.Subagents} {
		for id, le := range from {
			e := le.Entry
			e.SetVersions(latestLast(le.Versions, e.Latest))
			(*into)[id] = &e
		}
	}
	c.stored = &stored{size: int64(len(b))}
	return c, nil
}

// latestLast moves the latest version to the end of the history, where
// schema 2 keeps it (schema 1 catalogs written before rollbacks moved it
// may have it elsewhere).
func latestLast(vs []Version, latest string) []Version {
	i := slices.IndexFunc(vs, func(v Version) bool { return v.Label == latest })
	if i < 0 || i == len(vs)-1 {
		return vs
	}
	out := append(slices.Delete(slices.Clone(vs), i, i+1), vs[i])
	return out
}

// StoredSize is the size of the object c was decoded from (0 for a
// catalog that was not read).
func (c *Catalog) StoredSize() int64 {
	if c.stored == nil {
		return 0
	}
	return c.stored.size
}

// LoadHistories loads the history of every entry (LoadHistory).
func (c *Catalog) LoadHistories() error {
	for _, m := range []map[string]*Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if err := e.LoadHistory(); err != nil {
				return err
			}
		}
	}
	return nil
}
