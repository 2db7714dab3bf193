// Package scan is skilldrop's static content scanner: it reads the files of
// a validated artifact (the in-memory archive.File values the validator
// produced: a SKILL.md or agent.md, or every file of an archive, text and
// binary) and reports what in them is dangerous for an agent that installs
// the skill: prompt injection, hidden text, download-and-execute, encoded
// payloads, credential theft, reverse shells, persistence, destructive
// commands, embedded secrets, executables and bytecode, nested archives,
// requests to disable an agent's approvals or sandbox, and the EICAR test
// string.
//
// It never executes, imports or extracts anything: text is normalised
// (homoglyphs and full-width forms folded, invisible characters dropped,
// line continuations joined) and matched against the rule pack, an embedded,
// versioned YAML document (rules.yaml) whose patterns are RE2 regular
// expressions, linear in their input; base64 and hex blobs are decoded and
// scanned again to a bounded depth; binary files are judged by their magic
// bytes. Each regular expression runs only on the windows of text that hold
// one of its rule's keywords, found in one pass, so the cost stays linear in
// the bytes scanned, and every scan is bounded in the work and memory it
// spends (Budget).
//
// A Report lists findings; a Policy turns them into a Verdict (clean, warn
// or block), leaving out the rules an operator allowed for the artifact's
// digest. The indexer records the Result on the catalog version it
// publishes, so the request path never scans.
package scan

import (
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a finding. The zero value is no severity (a rule that
// only feeds a combination).
type Severity uint8

// The severities, lowest first.
const (
	SeverityLow Severity = iota + 1
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = [...]string{SeverityLow: "low", SeverityMedium: "medium", SeverityHigh: "high", SeverityCritical: "critical"}

// String is the severity's name: low, medium, high or critical.
func (s Severity) String() string {
	if int(s) < len(severityNames) && severityNames[s] != "" {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// ParseSeverity reads a severity's name.
func ParseSeverity(name string) (Severity, error) {
	for s, n := range severityNames {
		if n != "" && n == name {
			return Severity(s), nil
		}
	}
	return 0, fmt.Errorf("%q is not a severity (critical, high, medium or low)", name)
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < SeverityLow || s > SeverityCritical {
		return nil, fmt.Errorf("scan: no name for %s", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Category groups rules by what they find.
type Category string

// The categories.
const (
	CategoryPromptInjection  Category = "prompt-injection"  // instructions that override the agent's own
	CategoryAgentSafety      Category = "agent-safety"      // requests to disable an agent's approvals or sandbox
	CategoryHiddenText       Category = "hidden-text"       // Unicode tags, bidi controls, zero-width runs, instructions in HTML comments
	CategoryDownloadExec     Category = "download-exec"     // a download piped into an interpreter
	CategoryEncodedPayload   Category = "encoded-payload"   // decoded data executed, or flagged content hidden in an encoding
	CategoryCredentialAccess Category = "credential-access" // reading keys, cloud credentials, browser profiles, keychains, the environment
	CategoryReverseShell     Category = "reverse-shell"     // a shell handed to a remote host
	CategoryPersistence      Category = "persistence"       // cron, launchd, systemd, shell rc files, autostart keys
	CategoryDestructive      Category = "destructive"       // wiping files, disks or databases
	CategorySecret           Category = "secret"            // credentials embedded in the skill itself
	CategoryExecutable       Category = "executable"        // native executables and bytecode
	CategoryNestedArchive    Category = "nested-archive"    // an archive inside the archive, which nothing here opens
	CategoryEICAR            Category = "eicar"             // the EICAR anti-virus test string
	CategoryScanner          Category = "scanner"           // the scan itself could not finish
)

// Categories are every category, in the order the README lists them.
var Categories = []Category{
	CategoryPromptInjection, CategoryHiddenText, CategoryDownloadExec, CategoryEncodedPayload,
	CategoryCredentialAccess, CategoryReverseShell, CategoryPersistence, CategoryDestructive,
	CategorySecret, CategoryExecutable, CategoryNestedArchive, CategoryAgentSafety, CategoryEICAR, CategoryScanner,
}

// Finding is one thing a rule found: where (the file's path in the skill
// and the 1-based line, 0 for a binary file), the rule, its category and
// severity, and a message saying what was found and why it matters.
type Finding struct {
	Rule     string   `json:"rule"`
	Category Category `json:"category"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Message  string   `json:"message"`
}

// String is the finding for people: "file:line: severity rule: message".
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return fmt.Sprintf("%s: %s %s: %s", loc, f.Severity, f.Rule, f.Message)
}

// Report is what one scan found, under the rule pack Engine names.
type Report struct {
	Engine   string
	Findings []Finding
}

// Verdict is what a scan's findings mean for publication.
type Verdict string

// The verdicts.
const (
	Clean Verdict = "clean" // nothing found
	Warn  Verdict = "warn"  // published; the findings are shown with it
	Block Verdict = "block" // not published (rejection scan_blocked), or withdrawn when found by a rescan
)

// Policy decides verdicts: a finding at or above Block blocks, any other
// finding warns.
type Policy struct {
	// Block is the lowest severity that blocks; zero is DefaultBlock.
	Block Severity
}

// DefaultBlock is the default threshold: block on critical and high, warn
// on medium and low.
const DefaultBlock = SeverityHigh

// Allowed is an operator's allow in force for one rule: the rule id and the
// reason the operator gave, bound to the digest of the bytes it was given
// for (the caller matched the digest).
type Allowed struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Result is a scan as the catalog records it on a version: the verdict
// under the policy and allows in force when it was judged, the engine
// (rule pack) version that scanned the bytes, every finding, and the
// allows that were used (each matched at least one finding, which then
// counted for nothing).
type Result struct {
	Verdict  Verdict   `json:"verdict"`
	Engine   string    `json:"engine"`
	Findings []Finding `json:"findings,omitempty"`
	Allowed  []Allowed `json:"allowed,omitempty"`
}

// Clone is a deep copy of res (nil for nil).
func (res *Result) Clone() *Result {
	if res == nil {
		return nil
	}
	c := *res
	c.Findings, c.Allowed = slices.Clone(res.Findings), slices.Clone(res.Allowed)
	return &c
}

// Equal reports whether two results record the same scan (nil equals nil).
func (res *Result) Equal(o *Result) bool {
	if res == nil || o == nil {
		return res == o
	}
	return res.Verdict == o.Verdict && res.Engine == o.Engine &&
		slices.Equal(res.Findings, o.Findings) && slices.Equal(res.Allowed, o.Allowed)
}

// Judge applies the policy to a report. allows maps a rule id to the
// operator's reason for allowing it for these bytes (nil: none): an
// allowed finding never blocks but still warns, and the allows that
// matched a finding are recorded in the result.
func (p Policy) Judge(r Report, allows map[string]string) Result {
	block := p.Block
	if block == 0 {
		block = DefaultBlock
	}
	res := Result{Verdict: Clean, Engine: r.Engine, Findings: r.Findings}
	used := map[string]bool{}
	for _, f := range r.Findings {
		if reason, ok := allows[f.Rule]; ok {
			if !used[f.Rule] {
				used[f.Rule] = true
				res.Allowed = append(res.Allowed, Allowed{Rule: f.Rule, Reason: reason})
			}
			// Allowed, it never blocks; it is still a finding shown.
			if res.Verdict == Clean {
				res.Verdict = Warn
			}
			continue
		}
		switch {
		case f.Severity >= block:
			res.Verdict = Block
		case res.Verdict == Clean:
			res.Verdict = Warn
		}
	}
	slices.SortFunc(res.Allowed, func(a, b Allowed) int { return strings.Compare(a.Rule, b.Rule) })
	return res
}

// Blocking returns the findings that made the verdict block: those at or
// above the threshold that no allow covered.
func (res Result) Blocking(p Policy) []Finding {
	block := p.Block
	if block == 0 {
		block = DefaultBlock
	}
	var out []Finding
	for _, f := range res.Findings {
		if f.Severity >= block && !slices.ContainsFunc(res.Allowed, func(a Allowed) bool { return a.Rule == f.Rule }) {
			out = append(out, f)
		}
	}
	return out
}

// CodeBlocked is the stable rejection code of an upload the scan blocks.
const CodeBlocked = "scan_blocked"

// BlockedMessage says why res blocks the bytes with digest d under p, and
// how an operator may publish them anyway.
func (res Result) BlockedMessage(p Policy, d string) string {
	return res.BlockedReason(p) + fmt.Sprintf("; to publish these bytes anyway, allow the rules for digest %s "+
		"in the entry's allow list in agent-skills.yaml, with a reason", d)
}

// BlockedReason is why res blocks under p, as a version the scan took out
// of service gives it (its 410 and revocations.json): the engine and the
// blocking findings.
func (res Result) BlockedReason(p Policy) string {
	return fmt.Sprintf("blocked by the content scan (%s): %s", res.Engine, Summary(res.Blocking(p), 10))
}

// Summary is the findings for a message: "rule (file:line), …", at most
// limit of them, then how many more.
func Summary(fs []Finding, limit int) string {
	var b strings.Builder
	for i, f := range fs {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(fs)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Rule)
		b.WriteString(" (")
		b.WriteString(f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Blocker is a blocking finding as a rejection names it: its rule,
// severity and place, without the message its rule gives every finding.
type Blocker struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
}

// Blockers is fs as blockers, in order (nil for none); a report holds at
// most MaxFindings findings, and so do they.
func Blockers(fs []Finding) []Blocker {
	if len(fs) == 0 {
		return nil
	}
	out := make([]Blocker, len(fs))
	for i, f := range fs {
		out[i] = Blocker{Rule: f.Rule, Severity: f.Severity, File: f.File, Line: f.Line}
	}
	return out
}
