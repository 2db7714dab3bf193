package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// recorder gathers what an invocation's rounds found for the status document.
type recorder struct {
	rejections []rejection
	warnings   map[string][]string
	gone       []goneChange
	restored   []restoredChange
	// unmatched are the entries of the config in force that name nothing
	// published, judged against the catalog the invocation left (nil
	// with judged: none); they replace the config key's warnings.
	unmatched []skillsconfig.Unmatched
	judged    bool
	// gates are the config's GateWarnings and RuleWarnings, judged with
	// unmatched; they join the config key's warnings.
	gates []string
	// strays are the keys at the bucket's root meant as the config but
	// never read as one (StrayConfigs), with strayed: looked for; they
	// replace the status document's warnings of such keys.
	strays  []string
	strayed bool
	// cfg is the config in force after the last round (its plan's).
	cfg *skillsconfig.Config
}

func newRecorder() *recorder { return &recorder{warnings: map[string][]string{}} }

// add takes a round's findings into the result, leaving out rejections and
// warnings of keys that changed while the round ran: they were decided on
// stale bytes, and the next round decides them again.
func (r *recorder) add(pr *prepared, d *decisions, changed []string, res *Result) {
	stale := func(key string) bool { return slices.Contains(changed, key) }
	for _, rj := range d.rejections {
		if !stale(rj.Key) {
			r.rejections = append(r.rejections, rj)
		}
	}
	for key, w := range pr.warnings {
		if !stale(key) {
			r.warnings[key] = w
		}
	}
	res.Published = append(res.Published, d.published...)
	res.Withdrawn = append(res.Withdrawn, d.withdrawn...)
	for _, g := range d.gone {
		res.Gone = append(res.Gone, g.change())
		r.gone = append(r.gone, g)
	}
	for _, rs := range d.restored {
		res.Restored = append(res.Restored, rs.change())
		r.restored = append(r.restored, rs)
	}
	res.Unchanged = append(res.Unchanged, d.unchanged...)
	res.Ignored = append(res.Ignored, pr.ignored...)
	res.Held = append(res.Held, pr.plan.held...)
	r.cfg = pr.plan.cfg
	if pr.config != "" {
		res.Config = pr.config
	}
}

// record writes the invocation's rejections and warnings to the status
// document in one update, then audits and counts the rejections that were
// recorded. A rejection equal to the newest one recorded for its key (same
// code, bytes and message, and nothing published from the key since) is a
// redelivery: it is reported in the result as Repeated and nothing else.
func (ix *Indexer) record(ctx context.Context, rec *recorder, cat *catalog.Catalog, res *Result) error {
	if len(rec.rejections) == 0 && len(rec.warnings) == 0 && len(rec.restored) == 0 && !rec.judged && !rec.strayed {
		return nil
	}
	now := ix.now().UTC()
	var fresh []bool
	var news []skillsconfig.Unmatched // findings the status document did not hold
	var newStrays []string
	err := catalog.UpdateStatus(ctx, ix.store, func(st *catalog.Status) error {
		fresh = make([]bool, len(rec.rejections))
		news, newStrays = nil, nil
		before, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("encode status: %w", err)
		}
		for _, key := range slices.Sorted(maps.Keys(rec.warnings)) {
			st.Warn(key, rec.warnings[key])
		}
		if rec.judged {
			was := st.Warnings[skillsconfig.Key]
			msgs := make([]string, len(rec.unmatched))
			for i, u := range rec.unmatched {
				msgs[i] = u.Message
				if !slices.Contains(was, u.Message) {
					news = append(news, u)
				}
			}
			st.Warn(skillsconfig.Key, append(msgs, rec.gates...))
		}
		if rec.strayed {
			for key := range st.Warnings {
				if skillsconfig.IsStray(key) && !slices.Contains(rec.strays, key) {
					st.Warn(key, nil) // gone, or renamed to the config
				}
			}
			for _, key := range rec.strays {
				if !slices.Contains(st.Warnings[key], skillsconfig.StrayMessage()) {
					newStrays = append(newStrays, key)
				}
				st.Warn(key, []string{skillsconfig.StrayMessage()})
			}
		}
		// A version back in service closes the rejection that kept its
		// bytes out, before this invocation's own rejections are judged.
		for _, r := range rec.restored {
			st.CloseRejections(r.Name, r.Digest, now)
		}
		for i, r := range rec.rejections {
			if repeated(st, r, cat) {
				continue
			}
			fresh[i] = true
			st.Reject(catalog.Rejection{
				Key: r.Key, Code: r.Code, Message: r.Message, Time: now, Name: r.Name, Digest: r.Digest, ETag: r.ETag,
				Findings: scan.Blockers(r.blocking),
			})
		}
		after, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("encode status: %w", err)
		}
		if bytes.Equal(before, after) {
			return catalog.ErrNoChange
		}
		return nil
	})
	if err != nil {
		// Nothing is audited or counted for a status not written: the
		// retry this error causes records, audits and counts it once.
		for _, r := range rec.rejections {
			res.Rejected = append(res.Rejected, publicRejection(r, false))
		}
		return fmt.Errorf("update status: %w", err)
	}
	byCode, byRule := map[string]int{}, map[string]int{}
	for i, r := range rec.rejections {
		res.Rejected = append(res.Rejected, publicRejection(r, !fresh[i]))
		if !fresh[i] {
			continue
		}
		ix.audit.Rejected(ctx, obs.RejectedEvent{Key: r.Key, Code: r.Code, Message: r.Message, SkillName: r.Name, Digest: r.Digest,
			Findings: scan.Blockers(r.blocking)})
		byCode[r.Code]++
		for _, rule := range rulesOf(r.blocking) {
			byRule[rule]++
		}
	}
	for _, code := range slices.Sorted(maps.Keys(byCode)) {
		ix.metrics.CountN(ctx, obs.UploadRejected, obs.DimensionReason, code, byCode[code])
	}
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		ix.metrics.CountN(ctx, obs.ScanBlocked, obs.DimensionRule, rule, byRule[rule])
	}
	for _, key := range newStrays {
		ix.audit.ConfigIgnored(ctx, obs.ConfigIgnoredEvent{Key: key, Config: skillsconfig.Key, Message: skillsconfig.StrayMessage()})
	}
	for _, u := range news {
		ix.audit.ConfigUnmatched(ctx, obs.ConfigUnmatchedEvent{Key: skillsconfig.Key, Field: u.Field, Kind: string(u.Kind),
			Listing: u.Listing, Name: u.Name, Suggestion: u.Suggestion, Message: u.Message})
	}
	return nil
}

// judgeConfig finds the entries of the config in force (the last round's)
// that name nothing cat publishes, for the status document: after an
// invocation that may have changed either (a publish, a withdrawal, a new
// config, a re-index).
func (r *recorder) judgeConfig(cat *catalog.Catalog, res *Result, full bool) {
	changed := full || len(res.Published) > 0 || len(res.Withdrawn) > 0 || len(res.Gone) > 0 || res.Config == ConfigApplied
	if cat == nil || !changed {
		return
	}
	published := skillsconfig.PublishedIn(cat)
	r.unmatched, r.judged = r.cfg.Unmatched(published), true
	r.gates = append(r.cfg.GateWarnings(published, cat.DefaultVisibility), r.cfg.RuleWarnings(scan.Default())...)
}

// countPublished counts the invocation's publications, one send per kind,
// and the warnings of what it published (ScanWarned, by rule); each allow
// a publication used is an audit event.
func (ix *Indexer) countPublished(ctx context.Context, res *Result) {
	byKind, byRule := map[catalog.Kind]int{}, map[string]int{}
	for _, ch := range res.Published {
		byKind[ch.Kind]++
		if ch.Scan == nil {
			continue
		}
		if ch.Scan.Verdict == scan.Warn {
			for _, rule := range rulesOf(ch.Scan.Findings) {
				if !slices.ContainsFunc(ch.Scan.Allowed, func(a scan.Allowed) bool { return a.Rule == rule }) {
					byRule[rule]++
				}
			}
		}
		for _, a := range ch.Scan.Allowed {
			ix.audit.ScanAllowed(ctx, obs.ScanAllowedEvent{SkillName: ch.Name, Version: ch.Version, Digest: ch.Digest,
				Rule: a.Rule, Reason: a.Reason, Source: ch.Source})
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		ix.metrics.CountN(ctx, obs.UploadPublished, obs.DimensionKind, string(kind), byKind[kind])
	}
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		ix.metrics.CountN(ctx, obs.ScanWarned, obs.DimensionRule, rule, byRule[rule])
	}
}

// auditGone writes an audit event for each version the invocation took
// out of service, and counts those the scan withdrew (ScanBlocked, by rule).
func (ix *Indexer) auditGone(ctx context.Context, rec *recorder) {
	byRule := map[string]int{}
	for _, g := range rec.gone {
		ix.audit.VersionWithdrawn(ctx, obs.VersionWithdrawnEvent{SkillName: g.Name, Version: g.Version, Digest: g.Digest,
			Code: g.code, Reason: g.reason, Source: g.Source})
		for _, rule := range g.blocking {
			byRule[rule]++
		}
	}
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		ix.metrics.CountN(ctx, obs.ScanBlocked, obs.DimensionRule, rule, byRule[rule])
	}
	for _, r := range rec.restored {
		ix.audit.VersionRestored(ctx, obs.VersionRestoredEvent{SkillName: r.Name, Version: r.Version, Digest: r.Digest,
			Code: r.code, Source: r.Source})
	}
}

// rulesOf is the distinct rule ids of findings, in order.
func rulesOf(fs []scan.Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}

func publicRejection(r rejection, repeated bool) Rejection {
	return Rejection{Key: r.Key, Code: r.Code, Message: r.Message, Name: r.Name, Digest: r.Digest, Findings: scan.Blockers(r.blocking),
		Repeated: repeated}
}

// repeated reports whether r is already the newest rejection of its key:
// the same code, bytes and message. The bytes (digest, or ETag when they
// could not be read) tell two drops apart; the message tells apart
// rejections that have no bytes of their own (a fetch_failed for a URL
// that answered 404, then another that answers 500) and the same bytes
// refused for another reason. Validation messages are a function of the
// bytes, the config and the catalog (never of the clock), so a redelivery
// repeats them; a fetch's names the URL and the cause.
func repeated(st *catalog.Status, r rejection, cat *catalog.Catalog) bool {
	prev := st.LatestRejection(r.Key, r.Name)
	if prev == nil || !prev.Closed.IsZero() || prev.Code != r.Code || prev.Message != r.Message {
		return false
	}
	switch {
	case !r.Digest.IsZero() || !prev.Digest.IsZero():
		if !sameDigest(prev.Digest, r.Digest) {
			return false
		}
	case prev.ETag != r.ETag:
		return false
	}
	// Bytes published from the key since then make the same refusal news
	// again. A publish makes its version the latest, so the latest
	// versions tell.
	if cat != nil {
		for _, m := range []map[string]*catalog.Entry{cat.Skills, cat.Subagents} {
			for _, e := range m {
				if e.Name != r.Name && r.Name != "" {
					continue // publishes the key made are of its name: no need to look at others' versions
				}
				if v := e.LatestVersion(); v != nil && v.SourceKey == r.Key && v.PublishedAt.After(prev.Time) {
					return false
				}
			}
		}
	}
	return true
}
