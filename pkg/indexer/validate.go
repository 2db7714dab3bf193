package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// ErrNotAnArtifact is wrapped by Validate's error for a key that names no
// skill or sub-agent under the bucket contract.
var ErrNotAnArtifact = errors.New("indexer: not a skill or sub-agent key")

// Validate checks data as Reconcile would if it were dropped at key now:
// the bucket contract's rules with the caps of the config in force in the
// store (agent-skills.yaml's per-entry caps over the service's), then the
// catalog's decision, made on a private copy of the catalog
// (name_conflict, version_exists, path_conflict). It writes nothing;
// `skilldrop publish` runs it before uploading. Rejections are
// *artifact.Error values with stable codes (artifact.AsError); one the
// content scan blocks comes as a *ScanBlockedError, with the scan.
func (ix *Indexer) Validate(ctx context.Context, key string, data []byte) (*artifact.Artifact, error) {
	a, _, err := ix.Check(ctx, key, data)
	return a, err
}

// ScanBlockedError is Check's error for bytes the content scan blocks
// under the bucket's policy and allows: the rejection (scan_blocked, as
// artifact.AsError finds it), the bytes' digest and the judged scan, with
// every finding's rule, file and line.
type ScanBlockedError struct {
	Err    *artifact.Error
	Digest digest.Digest
	Scan   scan.Result
}

func (e *ScanBlockedError) Error() string { return e.Err.Error() }

// Unwrap is the rejection.
func (e *ScanBlockedError) Unwrap() error { return e.Err }

// Check is Validate that also reports whether the catalog already serves
// these very bytes as the latest version published from key: dropping
// them again would change nothing.
func (ix *Indexer) Check(ctx context.Context, key string, data []byte) (a *artifact.Artifact, unchanged bool, err error) {
	k, err := artifact.ParseKey(key)
	if err != nil {
		return nil, false, err
	}
	if k.Kind != artifact.KindSkill && k.Kind != artifact.KindSubagent {
		return nil, false, fmt.Errorf("%w: %s is %s", ErrNotAnArtifact, key, k.Kind)
	}
	c, _, err := catalog.Load(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c = catalog.New()
	case err != nil:
		return nil, false, fmt.Errorf("load catalog: %w", err)
	}
	cfg, err := configInForce(c)
	if err != nil {
		return nil, false, err
	}
	t := targetOfKey(k)
	a, err = artifact.Validate(k, data, ix.limitsFor(cfg.Touches(t.Kind, t.Listing, t.Name)))
	if err != nil {
		return nil, false, err
	}
	va := fromArtifact(a)
	if r := va.judge(cfg, cfg.Touches(t.Kind, t.Listing, t.Name), key, t.Name); r != nil {
		err := &artifact.Error{Code: r.Code, Entry: key, Msg: r.Message}
		if r.scan != nil {
			return nil, false, &ScanBlockedError{Err: err, Digest: r.Digest, Scan: *r.scan}
		}
		return nil, false, err
	}
	v := va.Version
	v.SourceKey = key
	now := ix.now().UTC()
	p := &plan{
		basis: basisOf(c), bucket: c.Bucket, cfg: cfg, candidates: map[target]bool{}, now: now,
		claims: []*claim{{target: t, source: key, version: v, modified: now}},
	}
	d, err := apply(c, p) // c was loaded for this call alone
	if err != nil && !errors.Is(err, catalog.ErrNoChange) {
		return nil, false, err
	}
	if len(d.rejections) > 0 {
		r := d.rejections[0]
		return nil, false, &artifact.Error{Code: r.Code, Entry: key, Msg: strings.TrimPrefix(r.Message, key+": ")}
	}
	return a, slices.Contains(d.unchanged, key), nil
}

// CheckInline checks an inline entry of cfg (its body) as the indexer does
// when it reads the config: validated under the entry's type, name and
// caps (over lim), then scanned and judged under cfg's policy and the
// allows the entry gives those bytes. It returns the judged scan and the
// bytes' digest (what an allow names); a verdict that blocks is a
// *ScanBlockedError, invalid bytes their *artifact.Error.
func CheckInline(cfg *skillsconfig.Config, ce *skillsconfig.Entry, lim archive.Limits) (*scan.Result, digest.Digest, error) {
	data := []byte(ce.Body)
	v, err := validateEntry(ce, data, EntryLimits(lim, ce))
	if err != nil {
		return nil, digest.Of(data), err
	}
	if r := v.judge(cfg, ce, skillsconfig.Key, ce.Name); r != nil {
		return r.scan, v.Digest, &ScanBlockedError{Err: &artifact.Error{Code: r.Code, Entry: skillsconfig.Key, Msg: r.Message}, Digest: v.Digest, Scan: *r.scan}
	}
	return v.Scan, v.Digest, nil
}
