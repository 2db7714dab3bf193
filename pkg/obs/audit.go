package obs

import (
	"context"
	"log/slog"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// EventKey is the attribute that names an audit event on its line, beside
// the same name as the line's message: a CloudWatch Logs Insights query can
// filter on either (`filter event = "agent_skill.digest_mismatch"`).
const EventKey = "event"

// The audit event names. They are part of the operator contract: alarms
// and saved queries match on them, so they never change.
const (
	EventDigestMismatch    = "agent_skill.digest_mismatch"
	EventRejected          = "agent_skill.rejected"
	EventScanAllowed       = "agent_skill.scan_allowed"
	EventWithdrawn         = "agent_skill.version_withdrawn"
	EventRestored          = "agent_skill.version_restored"
	EventConfigUnmatched   = "agent_skill.config_unmatched"
	EventConfigIgnored     = "agent_skill.config_ignored"
	EventCredentialRefused = "agent_skill.credential_refused"
)

// DigestMismatchEvent records that the bytes read for an artifact did not
// hash to the digest the catalog pinned, so the artifact was not served.
type DigestMismatchEvent struct {
	SkillName string
	Hostname  string // the host the request was addressed to
	Expected  digest.Digest
	Observed  digest.Digest // zero (logged as "") when no bytes could be read
	Version   string
	RequestID string
	// Path names what failed: a file within the skill (an MCP read), or a
	// pre-rendered document; "" (and not logged) for the artifact as a whole.
	Path string
	// KeyID and Audiences name the caller's key and its audiences ("*" for
	// every audience); both empty (and not logged) for an anonymous caller.
	KeyID     string
	Audiences []string
}

// CredentialRefusedEvent records that a configured key was presented and
// refused: expired, or presented in a path without being a path key. A
// key that is not configured at all is only logged (anyone can send one).
type CredentialRefusedEvent struct {
	KeyID     string   // the key's id in the store, never the key
	Audiences []string // the key's audiences as the store has them ("*" for every audience); none is logged as []
	Reason    string   // apikey's stable reason, e.g. "expired_key"
	Path      string   // the request path, a capability URL's key redacted
	RequestID string
}

// RejectedEvent records that an uploaded key was not published.
type RejectedEvent struct {
	Key       string // the bucket key as dropped
	Code      string // the stable rejection code, e.g. "name_mismatch"
	Message   string // for the operator; never the artifact's content
	SkillName string // when known; omitted from the line when empty
	// Digest is the refused bytes' (omitted when they could not be hashed),
	// and Findings the findings that block scan_blocked bytes (omitted
	// for other rejections; at most scan.MaxFindings).
	Digest   digest.Digest
	Findings []scan.Blocker
}

// ScanAllowedEvent records that a version was published with a finding
// of Rule that the operator allowed for its digest, and why.
type ScanAllowedEvent struct {
	SkillName string
	Version   string
	Digest    digest.Digest
	Rule      string
	Reason    string
	Source    string // the key (or agent-skills.yaml) the bytes came from
}

// VersionWithdrawnEvent records that a published version was taken out of
// service: Code revoked (agent-skills.yaml) or scan_blocked (the content
// scan blocks its bytes now), with the reason its routes answer 410 with.
type VersionWithdrawnEvent struct {
	SkillName string
	Version   string
	Digest    digest.Digest
	Code      string
	Reason    string
	Source    string
}

// VersionRestoredEvent records that a version taken out of service is
// back: its revocation lifted, or its bytes no longer blocked by the scan
// under the policy and allows now in force. Code is why it had been gone.
type VersionRestoredEvent struct {
	SkillName string
	Version   string
	Digest    digest.Digest
	Code      string
	Source    string
}

// ConfigUnmatchedEvent records that an entry of the agent-skills.yaml in
// force names no published skill or sub-agent, so its settings (a
// visibility among them) apply to nothing: usually a misspelt name,
// which leaves the skill it meant as it was.
type ConfigUnmatchedEvent struct {
	Key        string // the config's key
	Field      string // where the entry is: skills[0], listings.p.skills[1]
	Kind       string // skill or subagent
	Listing    string // omitted when empty
	Name       string // the name as written
	Suggestion string // the published name it most likely misspells; omitted when none
	Message    string
}

// ConfigIgnoredEvent records a file at the bucket's root meant as the
// config (agent-skills.yml, Agent-Skills.yaml, agent-skills.yaml.bak …)
// that is never read as one, so whatever it says configures nothing.
type ConfigIgnoredEvent struct {
	Key     string // the stray file's key
	Config  string // the key the config is read from
	Message string
}

// Auditor writes audit events as JSON lines through a logger: each line's
// message and its "event" attribute carry the event name, and the event's
// fields are top-level attributes. Events are logged at LevelAudit. An
// Auditor only logs; counting the matching metric is the caller's
// (Metrics.Count with DigestMismatch or UploadRejected), so a sink that
// fails can never silence the log line, nor the other way round.
// The zero Auditor discards events; an Auditor is safe for concurrent use.
type Auditor struct {
	logger *slog.Logger
}

// NewAuditor returns an Auditor that logs through l (nil: discard).
func NewAuditor(l *slog.Logger) *Auditor {
	return &Auditor{logger: l}
}

// With returns an Auditor whose events also carry args (as slog.Logger.With),
// typically the request id of the invocation: With(RequestIDKey, id).
func (a *Auditor) With(args ...any) *Auditor {
	if a == nil || a.logger == nil {
		return a
	}
	return &Auditor{logger: a.logger.With(args...)}
}

// DigestMismatch logs EventDigestMismatch.
func (a *Auditor) DigestMismatch(ctx context.Context, e DigestMismatchEvent) {
	attrs := []slog.Attr{
		slog.String("skill_name", e.SkillName),
		slog.String("hostname", e.Hostname),
		slog.String("expected_digest", e.Expected.String()),
		slog.String("observed_digest", e.Observed.String()),
		slog.String("version", e.Version),
		slog.String(RequestIDKey, e.RequestID),
	}
	if e.Path != "" {
		attrs = append(attrs, slog.String("path", e.Path))
	}
	if e.KeyID != "" {
		attrs = append(attrs, slog.String("key_id", e.KeyID), slog.Any("audiences", nonNil(e.Audiences)))
	}
	a.log(ctx, EventDigestMismatch, attrs...)
}

// CredentialRefused logs EventCredentialRefused.
func (a *Auditor) CredentialRefused(ctx context.Context, e CredentialRefusedEvent) {
	a.log(ctx, EventCredentialRefused,
		slog.String("key_id", e.KeyID), slog.Any("audiences", nonNil(e.Audiences)), slog.String("reason", e.Reason),
		slog.String("path", e.Path), slog.String(RequestIDKey, e.RequestID))
}

// nonNil writes no audiences as [], not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Rejected logs EventRejected.
func (a *Auditor) Rejected(ctx context.Context, e RejectedEvent) {
	attrs := []slog.Attr{
		slog.String("key", e.Key),
		slog.String("code", e.Code),
		slog.String("message", e.Message),
	}
	if e.SkillName != "" {
		attrs = append(attrs, slog.String("skill_name", e.SkillName))
	}
	if !e.Digest.IsZero() {
		attrs = append(attrs, slog.String("digest", e.Digest.String()))
	}
	if len(e.Findings) > 0 {
		attrs = append(attrs, slog.Any("findings", e.Findings))
	}
	a.log(ctx, EventRejected, attrs...)
}

// ScanAllowed logs EventScanAllowed.
func (a *Auditor) ScanAllowed(ctx context.Context, e ScanAllowedEvent) {
	a.log(ctx, EventScanAllowed,
		slog.String("skill_name", e.SkillName),
		slog.String("version", e.Version),
		slog.String("digest", e.Digest.String()),
		slog.String("rule", e.Rule),
		slog.String("reason", e.Reason),
		slog.String("source", e.Source),
	)
}

// VersionWithdrawn logs EventWithdrawn.
func (a *Auditor) VersionWithdrawn(ctx context.Context, e VersionWithdrawnEvent) {
	a.log(ctx, EventWithdrawn,
		slog.String("skill_name", e.SkillName),
		slog.String("version", e.Version),
		slog.String("digest", e.Digest.String()),
		slog.String("code", e.Code),
		slog.String("reason", e.Reason),
		slog.String("source", e.Source),
	)
}

// VersionRestored logs EventRestored.
func (a *Auditor) VersionRestored(ctx context.Context, e VersionRestoredEvent) {
	a.log(ctx, EventRestored,
		slog.String("skill_name", e.SkillName),
		slog.String("version", e.Version),
		slog.String("digest", e.Digest.String()),
		slog.String("code", e.Code),
		slog.String("source", e.Source),
	)
}

// ConfigUnmatched logs EventConfigUnmatched.
func (a *Auditor) ConfigUnmatched(ctx context.Context, e ConfigUnmatchedEvent) {
	attrs := []slog.Attr{
		slog.String("key", e.Key),
		slog.String("field", e.Field),
		slog.String("kind", e.Kind),
		slog.String("name", e.Name),
		slog.String("message", e.Message),
	}
	if e.Listing != "" {
		attrs = append(attrs, slog.String("listing", e.Listing))
	}
	if e.Suggestion != "" {
		attrs = append(attrs, slog.String("did_you_mean", e.Suggestion))
	}
	a.log(ctx, EventConfigUnmatched, attrs...)
}

// ConfigIgnored audits a stray config, once (while the status document
// warns of it).
func (a *Auditor) ConfigIgnored(ctx context.Context, e ConfigIgnoredEvent) {
	a.log(ctx, EventConfigIgnored, slog.String("key", e.Key), slog.String("did_you_mean", e.Config), slog.String("message", e.Message))
}

func (a *Auditor) log(ctx context.Context, event string, attrs ...slog.Attr) {
	if a == nil || a.logger == nil {
		return
	}
	a.logger.LogAttrs(ctx, LevelAudit, event, append([]slog.Attr{slog.String(EventKey, event)}, attrs...)...)
}
