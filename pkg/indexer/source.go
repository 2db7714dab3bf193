package indexer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Errors of Revalidate, testable with errors.Is.
var (
	// ErrSourceGone: the bytes the version was published from are no
	// longer there: the key is gone, or the config in force no longer
	// gives the entry those bytes.
	ErrSourceGone = errors.New("indexer: the version's source is gone")
	// ErrExternal: the version is an external entry's, whose bytes are
	// not re-hosted: there is no source key to read and no blob.
	ErrExternal = errors.New("indexer: an external version has no source in the bucket")
)

// Revalidation is a published version's source, read and validated again.
type Revalidation struct {
	// Source names the bytes: the bucket key they were read from, or the
	// agent-skills.yaml entry holding an inline body.
	Source string
	Data   []byte
	// Digest and Size are what the bytes validate to now.
	Digest digest.Digest
	Size   int64
	// Files are the validated artifact's files, with their content.
	Files []archive.File
}

// Revalidate reads the bytes version v of entry e was published from, as
// they are now, and validates them as the indexer validates what it reads
// there, with the caps cfg (the config in force) gives the entry: a dropped
// key by the rules of its own form, an agent-skills.yaml entry (an inline
// body, a files/ key) by the entry cfg has for e. It writes nothing. A
// source that is gone is ErrSourceGone, an external version ErrExternal,
// bytes that no longer validate an *artifact.Error; other errors are the
// store's.
func (ix *Indexer) Revalidate(ctx context.Context, cfg *skillsconfig.Config, e *catalog.Entry, v *catalog.Version) (*Revalidation, error) {
	src, err := ix.sourceOf(cfg, e, v)
	if err != nil {
		return nil, err
	}
	data, info, err := ix.readBytes(ctx, src.bytes, src.limits.MaxArtifactBytes)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidKey):
		return nil, fmt.Errorf("%w: %s does not exist", ErrSourceGone, src.name)
	case errors.Is(err, store.ErrTooLarge):
		return nil, &artifact.Error{Code: archive.CodeTooLarge, Entry: src.name, Msg: tooLarge(info.Size, src.limits.MaxArtifactBytes)}
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", src.name, err)
	}
	return src.check(data)
}

// versionSource is where a version's bytes come from now, and the rules
// that validate them.
type versionSource struct {
	name     string // for messages: the key, or the config entry
	bytes    bytesOf
	limits   archive.Limits
	validate func([]byte) (*validated, error)
}

// check validates data as the source's bytes.
func (s *versionSource) check(data []byte) (*Revalidation, error) {
	val, err := s.validate(data)
	if err != nil {
		return nil, err
	}
	return &Revalidation{Source: s.name, Data: data, Digest: val.Digest, Size: val.Size, Files: val.files}, nil
}

// sourceOf finds the bytes v of e was read from under cfg: v.SourceKey,
// which is a drop's key, a files/ key, or agent-skills.yaml for an inline
// body (external versions record their URL).
func (ix *Indexer) sourceOf(cfg *skillsconfig.Config, e *catalog.Entry, v *catalog.Version) (*versionSource, error) {
	key, t := v.SourceKey, targetOf(e)
	if key == "" {
		return nil, fmt.Errorf("%w: %s version %s records no source", ErrSourceGone, t, v.Label)
	}
	k, err := artifact.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a source key: %w", ErrSourceGone, key, err)
	}
	switch k.Kind {
	case artifact.KindSkill, artifact.KindSubagent:
		if targetOfKey(k) != t {
			return nil, fmt.Errorf("%w: %s is the source of %s, not of %s", ErrSourceGone, key, targetOfKey(k), t)
		}
		lim := ix.limitsFor(cfg.Touches(t.Kind, t.Listing, t.Name))
		return &versionSource{name: key, bytes: bytesOf{key: key}, limits: lim,
			validate: func(b []byte) (*validated, error) { return validateDrop(k, b, lim) }}, nil
	case artifact.KindFile, artifact.KindConfig:
		ce := cfg.Touches(t.Kind, t.Listing, t.Name)
		switch {
		case k.Kind == artifact.KindFile && (ce == nil || ce.FilePath != key):
			return nil, fmt.Errorf("%w: the agent-skills.yaml in force no longer takes %s from %s", ErrSourceGone, t, key)
		case k.Kind == artifact.KindConfig && (ce == nil || ce.Body == ""):
			return nil, fmt.Errorf("%w: the agent-skills.yaml in force no longer defines %s with an inline body", ErrSourceGone, t)
		}
		lim, name := ix.limitsFor(ce), key
		if ce.FilePath == "" {
			name = entryWarningKey(ce)
		}
		return &versionSource{name: name, bytes: bytesOf{key: ce.FilePath, body: ce.Body}, limits: lim,
			validate: func(b []byte) (*validated, error) { return validateEntry(ce, b, lim) }}, nil
	}
	if strings.Contains(key, "://") {
		return nil, fmt.Errorf("%w: %s", ErrExternal, key)
	}
	return nil, fmt.Errorf("%w: %s is not a source key", ErrSourceGone, key)
}
