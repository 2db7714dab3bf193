package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The codes of the blobs Verify cannot vouch for (catalog.BlobProblem.Code).
const (
	// Unrecoverable: no source gives the pinned bytes any more.
	CodeSourceMissing = "source_missing" // the source key is gone, or the config no longer gives the entry those bytes
	CodeSourceChanged = "source_changed" // the source validates to other bytes
	CodeSourceInvalid = "source_invalid" // the source no longer validates
	// Failed: run verify again.
	CodeReadFailed         = "read_failed"         // the blob or a source could not be read
	CodeWriteFailed        = "write_failed"        // the repair could not be written
	CodePreconditionFailed = "precondition_failed" // the blob changed between the check and the repair: it was not overwritten
)

// What a broken blob held (Repair.Was).
const (
	BlobMissing    = "missing"
	BlobOtherSize  = "other size"
	BlobOtherBytes = "other bytes"
)

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Progress, when set, is told after each blob how many of the total
	// are done; it is called from one goroutine at a time.
	Progress func(done, total int)
}

// VerifyResult is what Verify found: the record it wrote to the status
// document, with every problem (the document keeps the first
// catalog.MaxVerifyProblems), and the blobs it rewrote.
type VerifyResult struct {
	catalog.Verify
	Repairs []Repair `json:"repairs"`
}

// Repair is one blob Verify rewrote, named by the first version (or file
// of a version) that pins it.
type Repair struct {
	Digest  digest.Digest `json:"digest"`
	Kind    catalog.Kind  `json:"kind"`
	Entry   string        `json:"entry"`
	Version string        `json:"version"`
	File    string        `json:"file,omitempty"`
	Others  int           `json:"others,omitempty"`
	// Was is what the blob held: BlobMissing, BlobOtherSize or BlobOtherBytes.
	Was string `json:"was"`
	// From names the bytes written: the source key (with the file's path
	// in the archive for a file), or the version's artifact blob.
	From string `json:"from"`
}

// Verify re-hashes every blob the catalog pins for a live entry (every
// version's artifact and each of its files; external versions have none)
// and repairs the ones that are missing or hold other bytes from their
// source, when it still validates to the pinned digest (Revalidate).
//
// The repair is the one write under blobs/ that is not create-only: an
// overwrite conditional on the ETag of the object that was hashed, so a
// blob someone else rewrote meanwhile is never replaced, and a missing blob
// is created with IfNoneMatch "*". Only bytes that hash to the pinned
// digest and size are written, and an intact blob is never written at all.
// Blobs are checked on at most Config.Concurrency goroutines, each
// streaming one blob through SHA-256. The outcome is recorded in the status
// document (catalog.Status.Verify).
//
// Verify reads every blob, so its time grows with the bucket: it is meant
// for a workstation (`skilldrop reindex --verify`), not for an invocation
// with a timeout. A missing catalog is store.ErrNotFound.
func (ix *Indexer) Verify(ctx context.Context, o VerifyOptions) (*VerifyResult, error) {
	started := ix.now().UTC()
	c, _, err := catalog.Load(ctx, ix.store)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if err := c.LoadHistories(); err != nil {
		return nil, fmt.Errorf("load catalog histories: %w", err)
	}
	cfg, err := configInForce(c)
	if err != nil {
		return nil, err
	}
	blobs, skipped := pinnedBlobs(c)
	res := &VerifyResult{Verify: catalog.Verify{Started: started, Blobs: len(blobs), Skipped: skipped}}

	outcomes := make(chan blobOutcome)
	go func() {
		var g errgroup.Group
		g.SetLimit(ix.workers)
		for _, b := range blobs {
			g.Go(func() error {
				outcomes <- ix.verifyBlob(ctx, cfg, b)
				return nil
			})
		}
		_ = g.Wait() // outcomes carry the failures
		close(outcomes)
	}()
	done := 0
	for out := range outcomes {
		res.merge(out)
		done++
		if o.Progress != nil {
			o.Progress(done, len(blobs))
		}
	}
	res.sort()
	if err := ctx.Err(); err != nil {
		return res, err // not recorded: the counts cover only part of the blobs
	}
	res.Finished = ix.now().UTC()
	if err := catalog.UpdateStatus(ctx, ix.store, func(s *catalog.Status) error {
		s.SetVerify(res.Verify)
		return nil
	}); err != nil {
		return res, fmt.Errorf("update status: %w", err)
	}
	return res, nil
}

// pin is one place the catalog pins a blob: a version's artifact (file
// nil) or one of its files.
type pin struct {
	entry   *catalog.Entry
	version *catalog.Version
	file    *catalog.File
}

// pinnedBlob is one blob to check, with every pin that names it, the
// first of which names the blob in reports.
type pinnedBlob struct {
	digest digest.Digest
	size   int64
	pins   []pin
}

func (b *pinnedBlob) key() string { return catalog.BlobKey(b.digest) }

// pinnedBlobs lists the blobs the live entries of c pin, each once, with
// its pins: entries in ID order, each one's versions newest first, a
// version's artifact before its files. It counts the versions that pin
// nothing checkable: external versions, and withdrawn entries' versions,
// which are served nowhere.
func pinnedBlobs(c *catalog.Catalog) (blobs []*pinnedBlob, skipped int) {
	type id struct {
		d    digest.Digest
		size int64
	}
	byID := map[id]*pinnedBlob{}
	add := func(d digest.Digest, size int64, p pin) {
		b := byID[id{d, size}]
		if b == nil {
			b = &pinnedBlob{digest: d, size: size}
			byID[id{d, size}] = b
			blobs = append(blobs, b)
		}
		b.pins = append(b.pins, p)
	}
	for _, e := range append(c.SortedSkills(), c.SortedSubagents()...) {
		if e.Withdrawn {
			skipped += len(e.Versions)
			continue
		}
		for i := len(e.Versions) - 1; i >= 0; i-- {
			v := &e.Versions[i]
			if external(v) {
				skipped++
				continue
			}
			add(v.Digest, v.Size, pin{entry: e, version: v})
			for j := range v.Files {
				add(v.Files[j].Digest, v.Files[j].Size, pin{entry: e, version: v, file: &v.Files[j]})
			}
		}
	}
	return blobs, skipped
}

// external reports whether v is an external entry's: its source is a URL
// and its bytes are not re-hosted.
func external(v *catalog.Version) bool { return strings.Contains(v.SourceKey, "://") }

// blobOutcome is what checking one blob found: intact, repaired (repair
// set) or a problem.
type blobOutcome struct {
	repair  *Repair
	problem *catalog.BlobProblem
}

func (r *VerifyResult) merge(o blobOutcome) {
	switch {
	case o.repair != nil:
		r.Repaired++
		r.Repairs = append(r.Repairs, *o.repair)
	case o.problem == nil:
		r.Verified++
	case o.problem.State == catalog.BlobFailed:
		r.Failed++
		r.Problems = append(r.Problems, *o.problem)
	default:
		r.Unrecoverable++
		r.Problems = append(r.Problems, *o.problem)
	}
}

// sort orders the reports by what they name: blobs finish in any order.
func (r *VerifyResult) sort() {
	slices.SortFunc(r.Repairs, func(a, b Repair) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Entry, b.Entry), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.File, b.File), cmp.Compare(a.Digest.String(), b.Digest.String()))
	})
	slices.SortFunc(r.Problems, func(a, b catalog.BlobProblem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Entry, b.Entry), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.File, b.File), cmp.Compare(a.Digest.String(), b.Digest.String()))
	})
}

// verifyBlob checks one blob and repairs it when it is broken.
func (ix *Indexer) verifyBlob(ctx context.Context, cfg *skillsconfig.Config, b *pinnedBlob) blobOutcome {
	was, etag, err := ix.hashBlob(ctx, b)
	switch {
	case err != nil:
		return b.problem(catalog.BlobFailed, CodeReadFailed, err.Error())
	case was == "":
		return blobOutcome{}
	}
	src := ix.repairBytes(ctx, cfg, b)
	if src.data == nil {
		return b.problem(src.state, src.code, src.msg)
	}
	if err := ix.rewrite(ctx, b, was, etag, src); err != nil {
		ix.log.WarnContext(ctx, "blob repair not written", "blob", b.key(), "error", err.Error())
		if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrNotFound) {
			return b.problem(catalog.BlobFailed, CodePreconditionFailed,
				"the blob changed after it was checked (another repair or write): it was not overwritten; run verify again")
		}
		return b.problem(catalog.BlobFailed, CodeWriteFailed, err.Error())
	}
	ix.log.InfoContext(ctx, "blob repaired", "blob", b.key(), "was", was, "from", src.from)
	p := b.pins[0]
	r := &Repair{Digest: b.digest, Kind: p.entry.Kind, Entry: p.entry.ID(), Version: p.version.Label,
		Others: len(b.pins) - 1, Was: was, From: src.from}
	if p.file != nil {
		r.File = p.file.Path
	}
	return blobOutcome{repair: r}
}

func (b *pinnedBlob) problem(state, code, msg string) blobOutcome {
	p := b.pins[0]
	bp := &catalog.BlobProblem{Digest: b.digest, State: state, Code: code, Message: msg,
		Kind: p.entry.Kind, Entry: p.entry.ID(), Version: p.version.Label, Others: len(b.pins) - 1}
	if p.file != nil {
		bp.File = p.file.Path
	}
	return blobOutcome{problem: bp}
}

// hashBlob streams the blob through SHA-256 and says what is wrong with it
// ("" when nothing is), with the ETag of the object it read. An object of
// another size is not read at all.
func (ix *Indexer) hashBlob(ctx context.Context, b *pinnedBlob) (was, etag string, err error) {
	obj, err := ix.store.Get(ctx, b.key(), store.GetOptions{})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return BlobMissing, "", nil
	case err != nil:
		return "", "", fmt.Errorf("read %s: %w", b.key(), err)
	}
	defer func() { _ = obj.Body.Close() }()
	if obj.Size != b.size {
		return BlobOtherSize, obj.ETag, nil
	}
	r := digest.NewReader(io.LimitReader(obj.Body, b.size+1))
	if _, err := io.Copy(io.Discard, r); err != nil {
		return "", "", fmt.Errorf("read %s: %w", b.key(), err)
	}
	switch {
	case r.N() != b.size:
		return BlobOtherSize, obj.ETag, nil
	case !r.Digest().Equal(b.digest):
		return BlobOtherBytes, obj.ETag, nil
	}
	return "", obj.ETag, nil
}

// repairSource is the bytes a repair writes and where they come from, or
// why there are none (data nil).
type repairSource struct {
	data        []byte
	from        string
	contentType string
	state       string // of the problem: catalog.BlobUnrecoverable or catalog.BlobFailed
	code, msg   string
}

// repairBytes finds the pinned bytes of a broken blob: for each pin in
// turn, from its version's source, validated again; for a file, first
// from its version's artifact blob when that one is intact. The first pin
// that gives them wins. Otherwise the problem is the first pin's, unless
// some source could not be read (then running again may repair it).
func (ix *Indexer) repairBytes(ctx context.Context, cfg *skillsconfig.Config, b *pinnedBlob) repairSource {
	m := &revalidations{ix: ix, ctx: ctx, cfg: cfg, sources: map[string]result{}, artifacts: map[string]result{}}
	var first, failed *repairSource
	for _, p := range b.pins {
		src := m.bytesOf(b, p)
		if src.data != nil {
			return src
		}
		if first == nil {
			first = &src
		}
		if failed == nil && src.state == catalog.BlobFailed {
			failed = &src
		}
	}
	if failed != nil {
		return *failed
	}
	return *first
}

// result is one source validated again, or why it could not be.
type result struct {
	rv  *Revalidation
	err error
}

// revalidations validates each source at most once while one blob is
// repaired: many pins of a blob share a source.
type revalidations struct {
	ix        *Indexer
	ctx       context.Context
	cfg       *skillsconfig.Config
	sources   map[string]result // by entry and source key
	artifacts map[string]result // by artifact digest
}

// bytesOf is what pin p offers toward repairing b.
func (m *revalidations) bytesOf(b *pinnedBlob, p pin) repairSource {
	if p.file != nil && !p.version.Digest.Equal(b.digest) {
		if f := findFile(m.artifact(p).rv, b); f != nil {
			return repairSource{data: f.Data, contentType: p.file.MediaType,
				from: fmt.Sprintf("%s (%s, the artifact of %s)", catalog.BlobKey(p.version.Digest), f.Path, p.version.Label)}
		}
	}
	r := m.source(p)
	if r.err != nil {
		return unrecoverableOr(r.err)
	}
	if p.file == nil {
		if !r.rv.Digest.Equal(b.digest) || r.rv.Size != b.size {
			return repairSource{state: catalog.BlobUnrecoverable, code: CodeSourceChanged,
				msg: fmt.Sprintf("%s now validates to %s (%d bytes), not to the pinned %s (%d bytes)", r.rv.Source, r.rv.Digest, r.rv.Size, b.digest, b.size)}
		}
		return repairSource{data: r.rv.Data, from: r.rv.Source, contentType: p.version.Format.ContentType()}
	}
	f := findFile(r.rv, b)
	if f == nil {
		return repairSource{state: catalog.BlobUnrecoverable, code: CodeSourceChanged,
			msg: fmt.Sprintf("%s now validates to %s, which has no file with the pinned %s (%d bytes) of %s", r.rv.Source, r.rv.Digest, b.digest, b.size, p.file.Path)}
	}
	return repairSource{data: f.Data, from: fmt.Sprintf("%s (%s)", r.rv.Source, f.Path), contentType: p.file.MediaType}
}

// source is p's version's source, validated again.
func (m *revalidations) source(p pin) result {
	id := string(p.entry.Kind) + " " + p.entry.ID() + " " + p.version.SourceKey
	r, ok := m.sources[id]
	if !ok {
		r.rv, r.err = m.ix.Revalidate(m.ctx, m.cfg, p.entry, p.version)
		m.sources[id] = r
	}
	return r
}

// artifact is p's version's artifact blob, validated again when it holds
// exactly the pinned bytes (rv nil otherwise: the source is asked then).
func (m *revalidations) artifact(p pin) result {
	id := p.version.Digest.String()
	r, ok := m.artifacts[id]
	if !ok {
		r.rv, r.err = m.ix.revalidateBlob(m.ctx, m.cfg, p.entry, p.version)
		m.artifacts[id] = r
	}
	return r
}

// revalidateBlob reads the artifact blob of v, which must hold exactly the
// pinned bytes, and validates it as v's source would be.
func (ix *Indexer) revalidateBlob(ctx context.Context, cfg *skillsconfig.Config, e *catalog.Entry, v *catalog.Version) (*Revalidation, error) {
	src, err := ix.sourceOf(cfg, e, v)
	if err != nil {
		return nil, err
	}
	data, _, err := store.ReadAll(ctx, ix.store, catalog.BlobKey(v.Digest), v.Size)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != v.Size || !v.Digest.Verify(data) {
		return nil, fmt.Errorf("%s does not hold the pinned bytes", catalog.BlobKey(v.Digest))
	}
	return src.check(data)
}

// findFile is the file of rv whose content is b's pinned bytes, or nil.
func findFile(rv *Revalidation, b *pinnedBlob) *archive.File {
	if rv == nil {
		return nil
	}
	for i := range rv.Files {
		f := &rv.Files[i]
		if f.Size == b.size && int64(len(f.Data)) == b.size && b.digest.Verify(f.Data) {
			return f
		}
	}
	return nil
}

// unrecoverableOr classifies why a source gave nothing: gone, invalid
// (unrecoverable), or unreadable (failed: it may be read next time).
func unrecoverableOr(err error) repairSource {
	if e, ok := artifact.AsError(err); ok {
		return repairSource{state: catalog.BlobUnrecoverable, code: CodeSourceInvalid, msg: "the source no longer validates: " + e.Error()}
	}
	if errors.Is(err, ErrSourceGone) || errors.Is(err, ErrExternal) {
		return repairSource{state: catalog.BlobUnrecoverable, code: CodeSourceMissing, msg: err.Error()}
	}
	return repairSource{state: catalog.BlobFailed, code: CodeReadFailed, msg: err.Error()}
}

// rewrite writes the repair of b: over the object hashed, conditional on
// its ETag, or create-only where there was none. It refuses bytes that do
// not hash to the pinned digest and size, and an overwrite it cannot make
// conditional.
func (ix *Indexer) rewrite(ctx context.Context, b *pinnedBlob, was, etag string, src repairSource) error {
	if int64(len(src.data)) != b.size || !b.digest.Verify(src.data) {
		return fmt.Errorf("refused to write %s: the repair's bytes do not hash to the pinned digest", b.key())
	}
	opts := store.PutOptions{ContentType: src.contentType}
	switch {
	case was == BlobMissing:
		opts.IfNoneMatch = "*"
	case etag == "":
		return fmt.Errorf("refused to overwrite %s: the store gave no ETag to make the overwrite conditional on", b.key())
	default:
		opts.IfMatch = etag
	}
	if _, err := ix.store.Put(ctx, b.key(), src.data, opts); err != nil {
		return fmt.Errorf("write %s: %w", b.key(), err)
	}
	return nil
}
