package obs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// line is one decoded log line: its top-level keys in order (duplicates
// kept, which map decoding would hide) and its values.
type line struct {
	keys   []string
	values map[string]any
}

func parseLines(t *testing.T, b []byte) []line {
	t.Helper()
	var out []line
	for _, raw := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		l := line{values: map[string]any{}}
		if err := json.Unmarshal(raw, &l.values); err != nil {
			t.Fatalf("not a JSON line: %q: %v", raw, err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil { // {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			l.keys = append(l.keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, l)
	}
	return out
}

func (l line) duplicates() []string {
	seen := map[string]bool{}
	var dup []string
	for _, k := range l.keys {
		if seen[k] {
			dup = append(dup, k)
		}
		seen[k] = true
	}
	return dup
}

func oneLine(t *testing.T, b []byte) line {
	t.Helper()
	ls := parseLines(t, b)
	if len(ls) != 1 {
		t.Fatalf("got %d lines, want 1:\n%s", len(ls), b)
	}
	if d := ls[0].duplicates(); len(d) > 0 {
		t.Fatalf("duplicate top-level keys %v in %s", d, b)
	}
	return ls[0]
}

func TestLoggerKeepsTopLevelKeysUnique(t *testing.T) {
	cases := []struct {
		name string
		log  func(l *slog.Logger)
		want map[string]any
	}{
		{
			name: "record attribute overrides With",
			log:  func(l *slog.Logger) { l.With("request_id", "a").Info("m", "request_id", "b") },
			want: map[string]any{"request_id": "b"},
		},
		{
			name: "later With overrides earlier With",
			log:  func(l *slog.Logger) { l.With("k", 1).With("k", 2).Info("m") },
			want: map[string]any{"k": 2.0},
		},
		{
			name: "last of a record's own duplicates wins",
			log:  func(l *slog.Logger) { l.Info("m", "k", "x", "k", "y") },
			want: map[string]any{"k": "y"},
		},
		{
			name: "distinct keys all survive",
			log:  func(l *slog.Logger) { l.With("a", 1).Info("m", "b", 2) },
			want: map[string]any{"a": 1.0, "b": 2.0},
		},
		{
			name: "a group keeps its own keys apart from the top level",
			log:  func(l *slog.Logger) { l.With("k", "top").WithGroup("g").Info("m", "k", "inner") },
			want: map[string]any{"k": "top", "g": map[string]any{"k": "inner"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			c.log(obs.NewLogger(&buf, slog.LevelDebug))
			l := oneLine(t, buf.Bytes())
			for k, v := range c.want {
				if fmt.Sprint(l.values[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v (line %s)", k, l.values[k], v, buf.String())
				}
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	cases := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelInfo, false},
		{"  ", slog.LevelInfo, false},
		{"debug", slog.LevelDebug, false},
		{"WARN", slog.LevelWarn, false},
		{" error ", slog.LevelError, false},
		{"verbose", 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := obs.ParseLevel(c.in)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("ParseLevel(%q) = %v, %v; want %v (error: %v)", c.in, got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestLoggerFiltersByLevelButNeverAuditEvents(t *testing.T) {
	var buf bytes.Buffer
	l := obs.NewLogger(&buf, slog.LevelError)
	l.Info("dropped")
	l.Warn("dropped too")
	obs.NewAuditor(l).Rejected(context.Background(), obs.RejectedEvent{Key: "skills/x.md", Code: "name_mismatch"})
	line := oneLine(t, buf.Bytes())
	if line.values["msg"] != obs.EventRejected || line.values["level"] != "AUDIT" {
		t.Errorf("got %s, want only the audit event at level AUDIT", buf.String())
	}
}

func TestAuditEventsAreFindableJSONLines(t *testing.T) {
	expected := digest.Of([]byte("validated"))
	observed := digest.Of([]byte("tampered"))
	cases := []struct {
		name    string
		emit    func(a *obs.Auditor)
		want    map[string]string
		absent  []string
		wantKey []string // exact set of top-level keys
	}{
		{
			name: "digest mismatch",
			emit: func(a *obs.Auditor) {
				a.DigestMismatch(context.Background(), obs.DigestMismatchEvent{
					SkillName: "deploy-via-pr", Hostname: "skills.example.com", Expected: expected,
					Observed: observed, Version: "1.2.0", RequestID: "req-42",
				})
			},
			want: map[string]string{
				"msg": obs.EventDigestMismatch, "event": obs.EventDigestMismatch, "level": "AUDIT",
				"skill_name": "deploy-via-pr", "hostname": "skills.example.com",
				"expected_digest": expected.String(), "observed_digest": observed.String(),
				"version": "1.2.0", "request_id": "req-42",
			},
			wantKey: []string{"time", "level", "msg", "event", "skill_name", "hostname", "expected_digest", "observed_digest", "version", "request_id"},
		},
		{
			name: "digest mismatch of one file names its path",
			emit: func(a *obs.Auditor) {
				a.DigestMismatch(context.Background(), obs.DigestMismatchEvent{
					SkillName: "pdf", Expected: expected, Observed: observed, Version: "1", RequestID: "r", Path: "references/FORMS.md",
				})
			},
			want:    map[string]string{"path": "references/FORMS.md", "skill_name": "pdf"},
			wantKey: []string{"time", "level", "msg", "event", "skill_name", "hostname", "expected_digest", "observed_digest", "version", "request_id", "path"},
		},
		{
			name: "digest mismatch with nothing readable logs an empty observed digest",
			emit: func(a *obs.Auditor) {
				a.DigestMismatch(context.Background(), obs.DigestMismatchEvent{SkillName: "x", Expected: expected, RequestID: "r"})
			},
			want: map[string]string{"observed_digest": "", "expected_digest": expected.String()},
		},
		{
			name: "rejection with a skill name",
			emit: func(a *obs.Auditor) {
				a.Rejected(context.Background(), obs.RejectedEvent{Key: "skills/x.md", Code: "name_mismatch", Message: "frontmatter name y, key implies x", SkillName: "x"})
			},
			want: map[string]string{
				"msg": obs.EventRejected, "event": obs.EventRejected, "level": "AUDIT",
				"key": "skills/x.md", "code": "name_mismatch", "message": "frontmatter name y, key implies x", "skill_name": "x",
			},
			wantKey: []string{"time", "level", "msg", "event", "key", "code", "message", "skill_name"},
		},
		{
			name: "rejection without a skill name omits it",
			emit: func(a *obs.Auditor) {
				a.Rejected(context.Background(), obs.RejectedEvent{Key: "agent-skills.yaml", Code: "config_invalid", Message: "unknown key"})
			},
			want:   map[string]string{"event": obs.EventRejected, "key": "agent-skills.yaml", "code": "config_invalid"},
			absent: []string{"skill_name", "digest", "findings"},
		},
		{
			name: "scan_blocked rejection carries the digest and the blocking findings",
			emit: func(a *obs.Auditor) {
				a.Rejected(context.Background(), obs.RejectedEvent{Key: "skills/x.md", Code: "scan_blocked", Message: "blocked", SkillName: "x",
					Digest: expected, Findings: []scan.Blocker{{Rule: "download-exec.pipe-to-shell", Severity: scan.SeverityCritical, File: "SKILL.md", Line: 9}}})
			},
			want:    map[string]string{"digest": expected.String(), "code": "scan_blocked"},
			wantKey: []string{"time", "level", "msg", "event", "key", "code", "message", "skill_name", "digest", "findings"},
		},
		{
			name: "request id attached with With and in the event appears once",
			emit: func(a *obs.Auditor) {
				a.With(obs.RequestIDKey, "req-7").DigestMismatch(context.Background(), obs.DigestMismatchEvent{SkillName: "x", RequestID: "req-7"})
			},
			want: map[string]string{"request_id": "req-7"},
		},
		{
			name: "With attributes reach a rejection",
			emit: func(a *obs.Auditor) {
				a.With(obs.RequestIDKey, "inv-1").Rejected(context.Background(), obs.RejectedEvent{Key: "k", Code: "c"})
			},
			want: map[string]string{"request_id": "inv-1", "key": "k"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			c.emit(obs.NewAuditor(obs.NewLogger(&buf, slog.LevelInfo)))
			l := oneLine(t, buf.Bytes())
			for k, v := range c.want {
				if got, ok := l.values[k].(string); !ok || got != v {
					t.Errorf("%s = %#v, want %q", k, l.values[k], v)
				}
			}
			for _, k := range c.absent {
				if _, ok := l.values[k]; ok {
					t.Errorf("%s present, want it omitted", k)
				}
			}
			if c.wantKey != nil && strings.Join(l.keys, ",") != strings.Join(c.wantKey, ",") {
				t.Errorf("keys %v, want %v", l.keys, c.wantKey)
			}
		})
	}
}

func TestAuditorWithoutLoggerDiscards(t *testing.T) {
	ctx := context.Background()
	for name, a := range map[string]*obs.Auditor{"nil": nil, "zero": {}, "nil logger": obs.NewAuditor(nil)} {
		t.Run(name, func(t *testing.T) {
			// Reaching the end without a panic is the behaviour under test.
			a.With("k", "v").DigestMismatch(ctx, obs.DigestMismatchEvent{})
			a.Rejected(ctx, obs.RejectedEvent{})
		})
	}
}

func TestRecorderKeepsEveryCountUnderConcurrency(t *testing.T) {
	var r obs.Recorder
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Count(context.Background(), obs.DigestMismatch, obs.DimensionSkill, fmt.Sprint("s", i%5))
		}()
	}
	wg.Wait()
	r.Count(context.Background(), obs.UploadRejected, obs.DimensionReason, "name_conflict")

	if got := r.Total(obs.DigestMismatch); got != 50 {
		t.Errorf("Total(DigestMismatch) = %d, want 50", got)
	}
	if got := r.Total(obs.UploadRejected); got != 1 {
		t.Errorf("Total(UploadRejected) = %d, want 1", got)
	}
	samples := r.Samples()
	if len(samples) != 51 {
		t.Fatalf("%d samples, want 51", len(samples))
	}
	if last := samples[50]; last != (obs.Sample{Name: obs.UploadRejected, Dimension: obs.DimensionReason, Value: "name_conflict", N: 1}) {
		t.Errorf("last sample %+v", last)
	}
	samples[0].Name = "mutated"
	if r.Samples()[0].Name == "mutated" {
		t.Error("Samples returned the recorder's own slice")
	}
}

func BenchmarkAuditDigestMismatch(b *testing.B) {
	var buf bytes.Buffer
	a := obs.NewAuditor(obs.NewLogger(&buf, slog.LevelInfo)).With(obs.RequestIDKey, "req")
	ev := obs.DigestMismatchEvent{SkillName: "x", Hostname: "h", Expected: digest.Of([]byte("a")), Observed: digest.Of([]byte("b")), Version: "1", RequestID: "req"}
	ctx := context.Background()
	for b.Loop() {
		buf.Reset()
		a.DigestMismatch(ctx, ev)
	}
}

// TestAuditEventsEscapeWhatWouldActOnATerminal: a key holding a C1 control
// or a bidi override is logged with those characters as \uXXXX escapes (so
// the line is safe to print) and decodes to the exact key (so a search by
// the S3 key matches).
func TestAuditEventsEscapeWhatWouldActOnATerminal(t *testing.T) {
	const key = "skills/\u009b31m\u202egpj.md\u200b.md"
	var buf bytes.Buffer
	obs.NewAuditor(obs.NewLogger(&buf, slog.LevelInfo)).Rejected(context.Background(), obs.RejectedEvent{Key: key, Code: "invalid_key", Message: "the skill name \"\u202e\" is invalid"})
	for _, r := range []rune{0x9b, 0x202e, 0x200b} {
		if bytes.ContainsRune(buf.Bytes(), r) {
			t.Errorf("%U written raw: %s", r, buf.Bytes())
		}
	}
	if !strings.Contains(buf.String(), `\u009b31m\u202egpj.md\u200b.md`) {
		t.Errorf("the key's characters are not escaped: %s", buf.Bytes())
	}
	if l := oneLine(t, buf.Bytes()); l.values["key"] != key {
		t.Errorf("key decodes to %q, want %q", l.values["key"], key)
	}
}
