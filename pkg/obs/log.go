// Package obs is skilldrop's observability: one JSON logger over log/slog,
// the audit events operators search for (agent_skill.digest_mismatch,
// agent_skill.rejected), and the Metrics interface the domain counts
// incidents through. The CloudWatch implementation of Metrics lives in
// obs/cwmetrics, so packages that only count never import the AWS SDK.
package obs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/safetext"
)

// EnvLogLevel is the environment variable the functions read their log
// level from (see ParseLevel).
const EnvLogLevel = "SKILLDROP_LOG_LEVEL"

// RequestIDKey is the attribute key that carries the request id (the Lambda
// or API Gateway request id) on every line of a request:
//
//	log := logger.With(obs.RequestIDKey, requestID)
const RequestIDKey = "request_id"

// LevelAudit is the level audit events are logged at: above slog.LevelError,
// so no log-level setting an operator picks for noise (up to ERROR) ever
// filters an audit event out. NewLogger renders it as "AUDIT".
const LevelAudit = slog.LevelError + 4

// NewLogger returns a logger that writes one JSON object per line to w
// (stdout in Lambda, which ships it to CloudWatch Logs), dropping records
// below level. Build one per process, in main.
//
// Keys at the top level of a line are unique: when an attribute added with
// With and an attribute of the record share a key, the record's wins, so a
// request_id attached with With and the request_id of an audit event yield
// one field, not a duplicate that JSON readers resolve differently.
//
// Values keep their exact text, but every character that could act on a
// terminal or hide in a log (C1 controls, bidi overrides, zero-width
// characters; see pkg/safetext) is written as a \uXXXX escape: a key
// uploaded with one in its name is still found by a search for the key.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	jh := slog.NewJSONHandler(safetext.NewJSONWriter(w), &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.LevelKey {
				if l, ok := a.Value.Any().(slog.Level); ok && l == LevelAudit {
					a.Value = slog.StringValue("AUDIT")
				}
			}
			return a
		},
	})
	return slog.New(&uniqueKeys{inner: jh})
}

// ParseLevel parses a log level setting: "" is INFO, otherwise one of
// DEBUG, INFO, WARN, ERROR in any case (slog's syntax, so "WARN+2" works too).
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if strings.TrimSpace(s) == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(strings.TrimSpace(s))); err != nil {
		return 0, fmt.Errorf("log level %q: want DEBUG, INFO, WARN or ERROR: %w", s, err)
	}
	return l, nil
}

// uniqueKeys is a slog.Handler that holds back the top-level attributes of
// With so that it can drop the ones a record overrides. slog's JSON handler
// writes every attribute it is given, duplicates included.
type uniqueKeys struct {
	inner slog.Handler
	attrs []slog.Attr // top-level attributes from With, keys unique
}

func (h *uniqueKeys) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *uniqueKeys) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	return &uniqueKeys{inner: h.inner, attrs: lastWins(h.attrs, as)}
}

func (h *uniqueKeys) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	// Attributes after a group live inside it and cannot clash with the
	// top level, so the held-back ones are handed over here.
	return h.inner.WithAttrs(h.attrs).WithGroup(name)
}

func (h *uniqueKeys) Handle(ctx context.Context, r slog.Record) error {
	own := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		own = append(own, a)
		return true
	})
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(lastWins(h.attrs, own)...)
	return h.inner.Handle(ctx, out)
}

// lastWins returns base followed by more, keeping for each key only its last
// value (at the position of that last occurrence). Attributes with an empty
// key are inlined groups (or dropped by slog) and kept as they are.
func lastWins(base, more []slog.Attr) []slog.Attr {
	all := make([]slog.Attr, 0, len(base)+len(more))
	all = append(all, base...)
	all = append(all, more...)
	out := make([]slog.Attr, 0, len(all))
	for i, a := range all {
		if a.Key != "" && overridden(a.Key, all[i+1:]) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func overridden(key string, later []slog.Attr) bool {
	for _, b := range later {
		if b.Key == key {
			return true
		}
	}
	return false
}
