package indexer

import (
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// CodeRevoked: agent-skills.yaml revokes the version an upload would
// publish.
const CodeRevoked = "revoked"

// applyRevocations puts the revocations of cfg in force on c: a version
// cfg revokes (name, label and digest) is gone, with the operator's
// reason; one no longer revoked is back in service, unless cfg's scan
// policy and allows now block it, when it stays gone, as scan_blocked (a
// config that lifts a revocation and an allow at once). Every entry of
// the name is looked at, in every listing and the sub-agents. It is pure,
// as apply is.
func (d *decisions) applyRevocations(c *catalog.Catalog, cfg *skillsconfig.Config, p *plan) error {
	for _, g := range append([]catalog.GoneVersion(nil), c.Gone...) {
		if g.Code != catalog.GoneRevoked || cfg.Revokes(g.Name, g.Version, g.Digest) != nil {
			continue
		}
		e, v, err := goneEntry(c, g)
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if v.Scan == nil {
			d.restore(c, e, v)
			continue
		}
		// Judged as rejudge would, before it is back: what it publishes
		// carries the allows in force now, and what blocks stays gone.
		pol := cfg.Policy()
		res := judgeRecorded(v, pol, cfg.Touches(e.Kind, e.Listing, e.Name).Allows(v.Digest))
		v.Scan, d.changed = &res, true
		if res.Verdict != scan.Block {
			d.restore(c, e, v)
			continue
		}
		d.scanWithdraw(c, e, v, pol, p.now)
	}
	if cfg == nil {
		return nil
	}
	for _, r := range cfg.Revoke {
		for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
			for _, e := range m {
				if e.Name != r.Name {
					continue
				}
				if err := e.LoadHistory(); err != nil {
					return err
				}
				v := e.Version(r.Version)
				if v == nil || !v.Digest.Equal(r.Digest) || (v.Gone != nil && v.Gone.Code == catalog.GoneRevoked) {
					continue
				}
				ch := changeOf(e, v)
				if c.SetGone(e, v, &catalog.Gone{Code: catalog.GoneRevoked, Reason: r.Reason, At: p.now}) {
					d.changed = true
					d.gone = append(d.gone, goneChange{Change: ch, code: catalog.GoneRevoked, reason: r.Reason})
				}
			}
		}
	}
	return nil
}

// withdrawBlocked takes out of service the published versions whose bytes
// this round's scan blocks (a stricter policy, an allow removed): the
// rejection names the source and the digest.
func (d *decisions) withdrawBlocked(c *catalog.Catalog, occ *occupancy, p *plan) error {
	kept := d.rejections[:0:0]
	defer func() { d.rejections = kept }()
	for _, r := range d.rejections {
		if r.Code != CodeScanBlocked || r.Digest.IsZero() {
			kept = append(kept, r)
			continue
		}
		newer, err := newerPasses(occ.bySource[r.Key], r, p)
		if err != nil {
			return err
		}
		if newer {
			// A newer rule pack judged these bytes and its findings do not
			// block them: that judgement stands over this build's.
			d.unchanged = append(d.unchanged, r.Key)
			continue
		}
		kept = append(kept, r)
		for _, e := range occ.bySource[r.Key] {
			if e.Name != r.Name && r.Name != "" {
				continue
			}
			if err := e.LoadHistory(); err != nil {
				return err
			}
			for i := range e.Versions {
				v := &e.Versions[i]
				if !v.Digest.Equal(r.Digest) || v.Gone != nil {
					continue
				}
				ch := changeOf(e, v)
				reason := r.blockedReason(p)
				if c.SetGone(e, v, &catalog.Gone{Code: catalog.GoneScanBlocked, Reason: reason, At: p.now}) {
					d.changed = true
					// The rejection counts the block (ScanBlocked).
					d.gone = append(d.gone, goneChange{Change: ch, code: catalog.GoneScanBlocked, reason: reason})
				}
				break
			}
		}
	}
	return nil
}

// newerPasses reports whether one of entries holds the bytes of
// scan_blocked rejection r, in service, scanned by a newer rule pack than
// the one that blocks them now, whose recorded findings do not block under
// the policy and allows in force.
func newerPasses(entries []*catalog.Entry, r rejection, p *plan) (bool, error) {
	if r.scan == nil {
		return false, nil
	}
	for _, e := range entries {
		if e.Name != r.Name && r.Name != "" {
			continue
		}
		if err := e.LoadHistory(); err != nil {
			return false, err
		}
		for i := range e.Versions {
			v := &e.Versions[i]
			if !v.Digest.Equal(r.Digest) || v.Gone != nil || v.Scan == nil || scan.CompareEngines(v.Scan.Engine, r.scan.Engine) <= 0 {
				continue
			}
			res := judgeRecorded(v, p.cfg.Policy(), p.cfg.Touches(e.Kind, e.Listing, e.Name).Allows(v.Digest))
			return res.Verdict != scan.Block, nil
		}
	}
	return false, nil
}

// goneChange is a version taken out of service by this write; blocking
// are the rules of a rescan that blocks it (counted as ScanBlocked).
type goneChange struct {
	Change
	code, reason string
	blocking     []string
}

// change is g as a Result lists it.
func (g goneChange) change() Change {
	ch := g.Change
	ch.Gone = &catalog.Gone{Code: g.code, Reason: g.reason}
	return ch
}

// blockedReason is why the scan blocks a scan_blocked rejection's bytes,
// as every version the scan takes out of service gives it (judge records
// the scan on every one).
func (r rejection) blockedReason(p *plan) string {
	return r.scan.BlockedReason(p.cfg.Policy())
}

// goneEntry finds the entry and version a gone record names (nil when
// they are no longer there).
func goneEntry(c *catalog.Catalog, g catalog.GoneVersion) (*catalog.Entry, *catalog.Version, error) {
	m := c.Skills
	if g.Kind == catalog.KindSubagent {
		m = c.Subagents
	}
	e := m[g.ID()]
	if e == nil {
		return nil, nil, nil
	}
	if err := e.LoadHistory(); err != nil {
		return nil, nil, err
	}
	return e, e.Version(g.Version), nil
}
