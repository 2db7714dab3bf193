package indexer

import (
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// rejudge puts cfg's scan policy and allows in force on every version the
// catalog holds a scan of, from the findings that scan recorded (the
// request path never scans; neither does this, nor does it read a blob):
// a version whose findings now block is taken out of service
// (scan_blocked), one the scan had withdrawn that no longer blocks is back,
// and each records its new verdict and allows. A source re-read judges
// only the bytes its key holds now; this reaches the older versions too,
// so a new threshold or allow applies without an upload. Revoked versions
// stay revoked (applyRevocations decides them), withdrawn entries are
// judged when they come back, and a version never scanned (an external
// entry pinned by digest) has nothing to judge. Only the entries whose
// judgement cfg can change from before's are read (all of them with a new
// threshold, or with all set): a history is decoded only where an allow
// changed.
// It is pure, as apply is.
func (d *decisions) rejudge(c *catalog.Catalog, before, cfg *skillsconfig.Config, all bool, p *plan) error {
	pol := cfg.Policy()
	all = all || pol != before.Policy()
	for _, e := range allEntries(c) {
		if e.Withdrawn {
			continue
		}
		ce := cfg.Touches(e.Kind, e.Listing, e.Name)
		if !all && sameAllows(before.Touches(e.Kind, e.Listing, e.Name), ce) {
			continue
		}
		if err := e.LoadHistory(); err != nil {
			return err
		}
		labels := make([]string, len(e.Versions))
		for i, v := range e.Versions {
			labels[i] = v.Label
		}
		for _, label := range labels { // SetGone reorders the history
			v := e.Version(label)
			if v == nil || v.Scan == nil || (v.Gone != nil && v.Gone.Code == catalog.GoneRevoked) {
				continue
			}
			res := judgeRecorded(v, pol, ce.Allows(v.Digest))
			blocks := res.Verdict == scan.Block
			if res.Equal(v.Scan) && blocks == (v.Gone != nil) {
				continue
			}
			v.Scan, d.changed = &res, true
			switch {
			case blocks && v.Gone == nil:
				d.scanWithdraw(c, e, v, pol, p.now)
			case !blocks && v.Gone != nil:
				d.restore(c, e, v)
			}
		}
	}
	return nil
}

// judgeRecorded judges the findings v's scan recorded under pol, with the
// rules allows allows (no blob is read, nothing scanned again).
func judgeRecorded(v *catalog.Version, pol scan.Policy, allows map[string]string) scan.Result {
	return pol.Judge(scan.Report{Engine: v.Scan.Engine, Findings: v.Scan.Findings}, allows)
}

// scanWithdraw takes version v of e out of service as scan_blocked, its
// scan (v.Scan) blocking it under pol, for the result and the audit event
// version_withdrawn (counted as ScanBlocked, by rule).
func (d *decisions) scanWithdraw(c *catalog.Catalog, e *catalog.Entry, v *catalog.Version, pol scan.Policy, at time.Time) {
	reason := v.Scan.BlockedReason(pol)
	blocking := rulesOf(v.Scan.Blocking(pol))
	ch := changeOf(e, v)
	if c.SetGone(e, v, &catalog.Gone{Code: catalog.GoneScanBlocked, Reason: reason, At: at}) {
		d.gone = append(d.gone, goneChange{Change: ch, code: catalog.GoneScanBlocked, reason: reason, blocking: blocking})
	}
}

// sameAllows reports whether two config entries (nil: none) allow the
// same rules for the same digests.
func sameAllows(a, b *skillsconfig.Entry) bool {
	var x, y []skillsconfig.Allow
	if a != nil {
		x = a.Allow
	}
	if b != nil {
		y = b.Allow
	}
	return slices.EqualFunc(x, y, func(m, n skillsconfig.Allow) bool {
		return m.Digest.Equal(n.Digest) && m.Reason == n.Reason && slices.Equal(m.Rules, n.Rules)
	})
}

// restore puts gone version v of e back in service, for the result (a
// revival, Published) and the audit event version_restored.
func (d *decisions) restore(c *catalog.Catalog, e *catalog.Entry, v *catalog.Version) {
	code, label := v.Gone.Code, v.Label
	if !c.SetGone(e, v, nil) {
		return
	}
	d.changed = true
	ch := changeOf(e, e.Version(label))
	d.published = append(d.published, ch)
	d.restored = append(d.restored, restoredChange{Change: ch, code: code})
}

// restoredChange is a version this write put back in service; code is
// why it had been gone.
type restoredChange struct {
	Change
	code string
}

// change is r as a Result lists it.
func (r restoredChange) change() Change {
	ch := r.Change
	ch.Gone = &catalog.Gone{Code: r.code}
	return ch
}
