package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The config is state, not an event: every round reads what the bucket
// holds at agent-skills.yaml (a HEAD, and the object itself only when its
// ETag is not one the catalog knows) and decides before it reads anything
// else. A round that cannot tell publishes nothing. A config that is
// deleted, unreadable or invalid leaves the config in force and holds every
// publication until a valid one arrives: what it was meant to hide must not
// appear meanwhile. Withdrawals always go through.

// The rejection codes of a config that cannot be put in force.
const (
	// CodeConfigMissing: agent-skills.yaml was deleted while a config was
	// in force, or after one was refused (it never came into force).
	CodeConfigMissing = "config_missing"
	// CodeConfigUnreadable: agent-skills.yaml exists but reading it is refused.
	CodeConfigUnreadable = "config_unreadable"
)

// heldSuffix ends the message of every rejection that holds publications.
const heldSuffix = "; the config in force stays, and new publications are held until a valid agent-skills.yaml is uploaded: " +
	"the one in force again, or a fixed one (`version: 1` alone runs without one, which gives every skill and sub-agent the default visibility)"

// configDecision is what a round found at agent-skills.yaml and does.
type configDecision struct {
	// inForce is the config in force when the round began; cfg the one
	// its plan is prepared under (inForce, or the bucket's new one).
	inForce, cfg *skillsconfig.Config
	// change puts a new config in force (or refreshes the ETag of the one
	// in force); nil: none.
	change *configChange
	// bucket is what the catalog records of the bucket's config (nil: it
	// holds the config in force), and hold whether publications wait.
	bucket *catalog.BucketConfig
	hold   bool
	// reject refuses the bucket's config.
	reject *rejection
	// observed is how agent-skills.yaml was read, for verify.
	observed observation
	// touched are the targets a change re-evaluates, and reread the keys
	// it reads again (refused as revoked, a revocation it lifts).
	touched []target
	reread  []string
	// result is Result.Config.
	result string
}

// decideConfig reads agent-skills.yaml and decides against snap. full is a
// re-index, where a new config is decided as incremental indexing in
// write order decided it (olderDrops). named says the round was told about
// agent-skills.yaml: a redelivery, or the retry of an invocation that put
// it in force but failed to read something it touches, so what it touches
// is evaluated again (no-ops when it all landed). An error means the round
// must not publish: the config could not be read for a reason that may
// pass.
func (ix *Indexer) decideConfig(ctx context.Context, snap *catalog.Catalog, full, named bool) (*configDecision, error) {
	inForce, err := configInForce(snap)
	if err != nil {
		return nil, err
	}
	d := &configDecision{inForce: inForce, cfg: inForce}
	info, err := ix.store.Head(ctx, skillsconfig.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.observed = observation{}
		return d.absent(snap, ix.now()), nil
	case errors.Is(err, store.ErrAccessDenied):
		d.observed = observation{present: true}
		return d.unreadable(snap, ix.now()), nil
	case err != nil:
		return nil, fmt.Errorf("head %s: %w", skillsconfig.Key, err)
	}
	d.observed = observation{present: true, etag: info.ETag}
	switch {
	case snap.Config != nil && snap.Config.ETag != "" && sameETag(snap.Config.ETag, info.ETag):
		// The config in force; a hold of an earlier round ends.
		if named || full {
			d.touched = configTargets(inForce)
		}
		return d, nil
	case snap.Bucket != nil && snap.Bucket.State == catalog.ConfigInvalid && sameETag(snap.Bucket.ETag, info.ETag):
		d.bucket, d.hold = snap.Bucket, true // judged already: still invalid
		return d, nil
	}
	data, info, err := ix.readConfig(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.observed = observation{}
		return d.absent(snap, ix.now()), nil
	case errors.Is(err, store.ErrAccessDenied):
		return d.unreadable(snap, ix.now()), nil
	case errors.Is(err, store.ErrTooLarge):
		d.observed = observation{present: true, etag: info.ETag}
		return d.invalid(snap, info.ETag, digest.Digest{},
			fmt.Sprintf("the config is %d bytes, at most %d allowed", info.Size, skillsconfig.MaxBytes), ix.now()), nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", skillsconfig.Key, err)
	}
	d.observed = observation{present: true, etag: info.ETag}
	sum := digest.Of(data)
	if snap.Config != nil && sum.Equal(snap.Config.Digest) {
		// The config in force, written again (or first seen with this
		// ETag): record the ETag, and re-evaluate what it touches.
		st := *snap.Config
		st.ETag = info.ETag
		d.change = &configChange{cfg: inForce, state: st, refresh: true}
		d.touched = configTargets(inForce)
		return d, nil
	}
	cfg, err := skillsconfig.Parse(data)
	msg := ""
	switch {
	case err != nil:
		msg = configMessage(err)
	case conflicts(snap, cfg) != "":
		msg = conflicts(snap, cfg)
	case full:
		if msg, err = ix.olderDrops(ctx, snap, inForce, cfg, info.LastModified); err != nil {
			return nil, err
		}
	}
	if msg != "" {
		return d.invalid(snap, info.ETag, sum, msg, ix.now()), nil
	}
	d.change = &configChange{cfg: cfg, state: catalog.ConfigState{Digest: sum, ETag: info.ETag, YAML: string(data)}}
	d.cfg, d.result = cfg, ConfigApplied
	d.touched = append(configTargets(inForce), configTargets(cfg)...)
	if lifted := liftedRevocations(inForce, cfg); len(lifted) > 0 {
		// Bytes refused as revoked may be published now, as an allow lets
		// scan_blocked bytes through: the entries of the name, and the keys
		// whose open rejection names those bytes, are read again.
		for _, e := range allEntries(snap) {
			if slices.ContainsFunc(lifted, func(r skillsconfig.Revocation) bool { return r.Name == e.Name }) {
				d.touched = append(d.touched, targetOf(e))
			}
		}
		if d.reread, err = ix.revokedKeys(ctx, lifted); err != nil {
			return nil, err
		}
	}
	if inForce.Policy() != cfg.Policy() {
		// A new scan threshold judges every entry's bytes again.
		for _, e := range allEntries(snap) {
			d.touched = append(d.touched, targetOf(e))
		}
	}
	return d, nil
}

// maxSettle bounds how long a round waits for agent-skills.yaml to settle
// (Config.ConfigSettle) before it gives up, publishing nothing: the next
// round (serve's watcher retries) reads it again.
const maxSettle = 30 * time.Second

// readConfig reads agent-skills.yaml once it has been left unchanged for
// the settle time: a file still being written (an editor's slow save, a
// copy) is read again once its writer has stopped, never half-written.
func (ix *Indexer) readConfig(ctx context.Context) ([]byte, store.Info, error) {
	deadline := time.Now().Add(maxSettle)
	for {
		data, info, err := store.ReadAll(ctx, ix.store, skillsconfig.Key, skillsconfig.MaxBytes)
		if err != nil || ix.settle <= 0 {
			return data, info, err
		}
		// The file system's clock, not ix.now (which tests may move).
		wait := ix.settle - time.Since(info.LastModified)
		if wait <= 0 {
			return data, info, nil
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, store.Info{}, fmt.Errorf("%s is still being written: it changed within the last %s for more than %s; "+
				"nothing is published until it settles (replace it in one step: write a copy, then rename it over the config)",
				skillsconfig.Key, ix.settle, maxSettle)
		}
		ix.log.InfoContext(ctx, "agent-skills.yaml changed just now; reading it again once it settles", "wait", wait.String())
		select {
		case <-ctx.Done():
			return nil, store.Info{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// absent decides a bucket without agent-skills.yaml. One that never had a
// config runs without (nothing changes). Otherwise it was deleted: the
// config in force, or one that was refused (invalid or unreadable) and so
// never came into force, whose deletion must not publish what it was
// meant to hide, as the operator's `aws s3 sync --delete` would.
func (d *configDecision) absent(snap *catalog.Catalog, now time.Time) *configDecision {
	var msg string
	switch {
	case snap.Config != nil:
		msg = fmt.Sprintf("agent-skills.yaml was deleted (the config in force is %s)", snap.Config.Digest.Short())
	case snap.Bucket != nil:
		msg = "agent-skills.yaml was deleted after it was refused (no config was ever in force)"
	default:
		return d
	}
	return d.refuse(snap, catalog.ConfigMissing, "", CodeConfigMissing, digest.Digest{}, msg, now)
}

func (d *configDecision) unreadable(snap *catalog.Catalog, now time.Time) *configDecision {
	return d.refuse(snap, catalog.ConfigUnreadable, "", CodeConfigUnreadable, digest.Digest{},
		"agent-skills.yaml cannot be read (access denied): grant the indexer s3:GetObject on it", now)
}

func (d *configDecision) invalid(snap *catalog.Catalog, etag string, sum digest.Digest, msg string, now time.Time) *configDecision {
	return d.refuse(snap, catalog.ConfigInvalid, etag, CodeInvalidConfig, sum, msg, now)
}

// refuse holds publications because of what the bucket holds, and rejects it.
func (d *configDecision) refuse(snap *catalog.Catalog, state, etag, code string, sum digest.Digest, msg string, now time.Time) *configDecision {
	d.hold, d.result = true, ConfigRejected
	d.bucket = &catalog.BucketConfig{State: state, ETag: etag, Since: now.UTC()}
	if b := snap.Bucket; b != nil && b.State == state && b.ETag == etag {
		d.bucket = b
	}
	d.reject = &rejection{Key: skillsconfig.Key, Code: code, Digest: sum, ETag: etag, Message: msg + heldSuffix}
	return d
}

// configInForce parses the config the catalog records as in force.
func configInForce(c *catalog.Catalog) (*skillsconfig.Config, error) {
	if c.Config == nil {
		return nil, nil
	}
	cfg, err := skillsconfig.ParseInForce([]byte(c.Config.YAML))
	if err != nil {
		// It was valid when it was put in force: only a stricter parser
		// gets here, and guessing would withdraw the config's entries.
		return nil, fmt.Errorf("the config in force (%s) no longer parses: %w", c.Config.Digest, err)
	}
	return cfg, nil
}

func configMessage(err error) string {
	var e *skillsconfig.Error
	if errors.As(err, &e) {
		if e.Field == "" {
			return e.Msg
		}
		return e.Field + ": " + e.Msg
	}
	return err.Error()
}

// liftedRevocations are the revocations of before that cfg no longer
// makes (by name, label and digest).
func liftedRevocations(before, cfg *skillsconfig.Config) []skillsconfig.Revocation {
	if before == nil {
		return nil
	}
	var out []skillsconfig.Revocation
	for _, r := range before.Revoke {
		if cfg.Revokes(r.Name, r.Version, r.Digest) == nil {
			out = append(out, r)
		}
	}
	return out
}

// revokedKeys are the keys whose newest rejection, open, refused the bytes
// of one of revs as revoked.
func (ix *Indexer) revokedKeys(ctx context.Context, revs []skillsconfig.Revocation) ([]string, error) {
	st, _, err := catalog.LoadStatus(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("load status: %w", err)
	}
	var keys []string
	for _, r := range revs {
		for i := range st.Rejections {
			rj := st.Rejections[i]
			if rj.Code != CodeRevoked || !rj.Closed.IsZero() || rj.Digest.IsZero() || !rj.Digest.Equal(r.Digest) ||
				(rj.Name != "" && rj.Name != r.Name) || slices.Contains(keys, rj.Key) {
				continue
			}
			if latest := st.LatestRejection(rj.Key, rj.Name); latest == &st.Rejections[i] {
				keys = append(keys, rj.Key)
			}
		}
	}
	return keys, nil
}
