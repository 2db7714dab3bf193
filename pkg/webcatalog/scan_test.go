package webcatalog

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

func TestScanSectionIsBoundedAndSpellsOutInvisibleCharacters(t *testing.T) {
	other := scanSection(&catalog.Version{Scan: &scan.Result{Verdict: scan.Warn, Findings: []scan.Finding{{Rule: "a"}}, Allowed: []scan.Allowed{{Rule: "b"}}}})
	if other.Findings[0].Allowed || strings.Contains(string(other.Table), "allowed") {
		t.Errorf("a finding no allow covers is marked allowed: %+v", other.Findings)
	}
	if s := scanSection(&catalog.Version{}); s != nil {
		t.Errorf("a version never scanned: %+v", s)
	}
	if s := scanSection(&catalog.Version{Scan: &scan.Result{Verdict: scan.Clean, Engine: "7"}}); s == nil || s.Class != "pass" || len(s.Findings) != 0 {
		t.Errorf("clean: %+v", s)
	}
	res := &scan.Result{Verdict: scan.Warn, Engine: "7", Allowed: []scan.Allowed{{Rule: "hidden-text.bidi-control", Reason: "ok \u202eevil"}}}
	for i := range maxFindings + 3 {
		res.Findings = append(res.Findings, scan.Finding{
			Rule: "hidden-text.bidi-control", Severity: scan.SeverityLow, Line: i + 1,
			File: "dir/\u202egnp.sh" + strings.Repeat("x", 1000), Message: fmt.Sprintf("found \u2067%d\u2069 ", i) + strings.Repeat("m", 5000),
		})
	}
	s := scanSection(&catalog.Version{Scan: res})
	if s.Class != "warn" || len(s.Findings) != maxFindings || s.MoreFindings != 3 {
		t.Fatalf("warn: class %q, %d findings, %d more", s.Class, len(s.Findings), s.MoreFindings)
	}
	f := s.Findings[0]
	if !strings.HasPrefix(f.File, `dir/\u202egnp.sh`) || !strings.HasPrefix(f.Message, `found \u20670\u2069`) ||
		!strings.HasPrefix(s.Allowed[0].Reason, `ok \u202e`) || f.Severity != "low" || f.Line != 1 {
		t.Errorf("finding shown as %+v, allowed %+v", f, s.Allowed)
	}
	if !f.Allowed || !strings.Contains(string(s.Table), `<td>low <span class="badge">allowed</span></td>`) {
		t.Errorf("the allowed finding is not marked: %s", s.Table[:200])
	}
	if utf8.RuneCountInString(f.File) > maxFindingFile+1 || utf8.RuneCountInString(f.Message) > maxFindingMessage+1 {
		t.Errorf("not clipped: file %d, message %d runes", utf8.RuneCountInString(f.File), utf8.RuneCountInString(f.Message))
	}
}
