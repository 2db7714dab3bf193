package webcatalog

import (
	"html/template"
	"strconv"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/safetext"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// Bounds of a page's scan section, so that a page stays small whatever a
// scan found: the findings past maxFindings are counted, and read in full
// in the native version document.
const (
	maxFindings       = 20
	maxAllowed        = 5
	maxFindingMessage = 300
	maxFindingFile    = 120
)

// ScanSection is what the content scan found in a version, as the native
// version document carries it (catalog.Version.Scan): the verdict, the
// rule pack's version, each finding and the operator's allows used.
type ScanSection struct {
	Verdict, Engine string
	// Class is the verdict's badge class: pass for clean, warn otherwise.
	Class        string
	Findings     []FindingRow
	MoreFindings int
	Allowed      []AllowedRow
	// Table is Findings as a table's rows, written by findingsHTML.
	Table template.HTML
}

// FindingRow is one finding.
type FindingRow struct {
	Rule, Severity, File string
	Line                 int
	Message              string
	// Allowed is set when an operator's allow for these bytes covers the
	// rule: the finding counted for nothing in the verdict.
	Allowed bool
}

// AllowedRow is an allow the operator gave for the version's bytes that a
// finding used.
type AllowedRow struct{ Rule, Reason string }

// scanSection is ver's scan as a page shows it; nil for a version never
// scanned. File names and messages (which quote what the bytes hold) are
// the author's: they are shown as text, escaped by the template, their
// invisible characters spelled out, and clipped.
func scanSection(ver *catalog.Version) *ScanSection {
	res := ver.Scan
	if res == nil {
		return nil
	}
	s := &ScanSection{Verdict: string(res.Verdict), Engine: safetext.Text(res.Engine), Class: "warn"}
	if res.Verdict == scan.Clean {
		s.Class = "pass"
	}
	allowed := map[string]bool{}
	for _, a := range res.Allowed {
		allowed[a.Rule] = true
	}
	for i, f := range res.Findings {
		if i == maxFindings {
			s.MoreFindings = len(res.Findings) - maxFindings
			break
		}
		s.Findings = append(s.Findings, FindingRow{
			Rule: safetext.Text(f.Rule), Severity: f.Severity.String(), File: clipRunes(safetext.Text(f.File), maxFindingFile),
			Line: f.Line, Message: clipRunes(safetext.Text(f.Message), maxFindingMessage), Allowed: allowed[f.Rule],
		})
	}
	for i, a := range res.Allowed {
		if i == maxAllowed {
			break
		}
		s.Allowed = append(s.Allowed, AllowedRow{Rule: safetext.Text(a.Rule), Reason: clipRunes(safetext.Text(a.Reason), maxFindingMessage)})
	}
	s.Table = findingsHTML(s.Findings)
	return s
}

// findingsHTML writes the findings' table rows, every value escaped
// (template.HTMLEscapeString), as rowsHTML writes a list's: html/template's
// reflection over a few fields a row would make the findings the slowest
// part of a skill page. The tests' hostile findings check what it writes.
func findingsHTML(rows []FindingRow) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	for _, f := range rows {
		b.WriteString("<tr><td>")
		b.WriteString(esc(f.Severity))
		if f.Allowed {
			b.WriteString(` <span class="badge">allowed</span>`)
		}
		b.WriteString("</td><td><code>")
		b.WriteString(esc(f.Rule))
		b.WriteString(`</code></td><td class="path">`)
		b.WriteString(esc(f.File))
		if f.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(f.Line))
		}
		b.WriteString(`</td><td dir="auto">`)
		b.WriteString(esc(f.Message))
		b.WriteString("</td></tr>\n")
	}
	return template.HTML(b.String()) // #nosec G203 -- every value above is escaped
}
