package scan

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/archive"
)

// Budget bounds one scan, so that no input costs more than a known amount
// of work and memory: what a scan does not finish within it is reported as
// the finding scanner.budget (high: unread content is not clean).
type Budget struct {
	// MaxTextBytes caps the text read, decoded layers included
	// (DefaultMaxTextBytes when zero).
	MaxTextBytes int64
	// MaxPatternBytes caps the bytes the patterns run over
	// (DefaultMaxPatternBytes when zero).
	MaxPatternBytes int64
	// MaxDepth caps the layers of encoding decoded and scanned again
	// (DefaultMaxDepth when zero).
	MaxDepth int
}

// The defaults of Budget: well above what the archive validator's default
// caps let through (10 MiB of content), and linear in it.
const (
	DefaultMaxTextBytes    = 64 << 20
	DefaultMaxPatternBytes = 256 << 20
	DefaultMaxDepth        = 3
)

// Bounds on what a scan reports: a rule is reported at most maxPerRule
// times in one text, and a report holds at most MaxFindings findings (the
// most severe).
const (
	maxPerRule  = 3
	MaxFindings = 200
	// collectCap bounds the findings held while scanning (at most twice
	// that many, the most severe kept).
	collectCap = 10 * MaxFindings
)

// windowAfter is how far after a keyword a pattern may read, within its
// logical line.
const windowAfter = 1024

// wrapReach is how near its line's end a keyword of prose must end for
// its sentence to be read on into the next line: the rest of a phrase.
const wrapReach = 48

// shortLine is how short the rest of a line is for the needles of its
// windows to be looked for in each (when they are, where each is next
// found is kept for the line's next windows).
const shortLine = 256

// lowAhead is how far past a window the patterns lower-case the text.
const lowAhead = 4096

// Files scans files with the embedded rule pack and the default budget.
func Files(files []archive.File) Report { return Default().Scan(files, Budget{}) }

// Scan scans files: each file's content, whatever its media type. It never
// fails: what it could not read within the budget is a finding.
func (p *Pack) Scan(files []archive.File, b Budget) Report {
	if b.MaxTextBytes <= 0 {
		b.MaxTextBytes = DefaultMaxTextBytes
	}
	if b.MaxPatternBytes <= 0 {
		b.MaxPatternBytes = DefaultMaxPatternBytes
	}
	if b.MaxDepth <= 0 {
		b.MaxDepth = DefaultMaxDepth
	}
	s := &scanner{p: p, budget: b, seen: map[findingKey]bool{}, first: map[*Rule]Finding{}}
	text := make([]bool, len(files))
	for i, f := range files {
		s.path = f.Path
		text[i] = s.file(f.Path, f.Data)
	}
	if len(s.across) > 0 {
		s.runsAcross(files, text)
	}
	for _, r := range p.combos {
		parts := make([]Finding, 0, len(r.All))
		for _, id := range r.All {
			for _, part := range p.parts(id) {
				if f, ok := s.first[part]; ok {
					parts = append(parts, f)
					break
				}
			}
		}
		if len(parts) == len(r.All) {
			s.add(r, parts[0].File, parts[0].Line, "")
		}
	}
	return Report{Engine: p.Engine(), Findings: s.report()}
}

type findingKey struct {
	rule *Rule
	file string
	line int
}

// scanner is one scan's state.
type scanner struct {
	p      *Pack
	budget Budget
	// text and pattern are the budget spent.
	text, pattern int64
	over          bool
	// inComment is set while the content of an HTML comment is scanned.
	inComment int
	findings  []Finding
	count     []int
	seen      map[findingKey]bool
	// first is where each rule (signals included) was first found, for
	// the combinations.
	first map[*Rule]Finding
	// wrapped1 holds a window read on into the next line (wrapped).
	wrapped1 wrapCache
	// downloads are the downloads of the texts being scanned, for
	// runsOfDownloads.
	downloads []download
	// path is the file being scanned; across are the files its texts,
	// and those of the files before it, download (runsAcross).
	path   string
	across []fileDownload
	// low is runsOfDownloads' lower-cased text.
	low []byte
	// next1 is where patterns next finds each needle.
	next1 []nextNeedle
}

// emit receives what a text scan found: rule r on line (of that text),
// with a note on where it was found when it was inside something.
type emit func(r *Rule, line int, note string)

// file scans one file of the artifact, and reports whether it was read
// as text.
func (s *scanner) file(path string, data []byte) bool {
	top := func(r *Rule, line int, note string) { s.add(r, path, line, note) }
	s.eicar(data, 0, top)
	if s.binaryFile(path, data, 0, top) {
		return false
	}
	for _, t := range textsOf(data) {
		s.scanText(t, 0, top)
	}
	return true
}

// add records a finding (a signal only as a part for the combinations).
func (s *scanner) add(r *Rule, file string, line int, note string) {
	k := findingKey{r, file, line}
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	msg := r.Message
	if note != "" {
		msg += " (" + note + ")"
	}
	f := Finding{Rule: r.ID, Category: r.Category, Severity: r.Severity, File: file, Line: line, Message: msg}
	if _, ok := s.first[r]; !ok {
		s.first[r] = f
	}
	if r.Signal() {
		return
	}
	s.findings = append(s.findings, f)
	if len(s.findings) >= 2*collectCap {
		// Held in bounds by dropping the least severe, never the first
		// found: a flood of minor findings must not hide a critical one.
		s.findings = mostSevere(s.findings, collectCap)
	}
}

// report is the findings, most severe first, then by file, line and rule,
// at most MaxFindings of them.
func (s *scanner) report() []Finding { return mostSevere(s.findings, MaxFindings) }

// mostSevere sorts findings most severe first, then by file, line and rule,
// and keeps the first n.
func mostSevere(findings []Finding, n int) []Finding {
	slices.SortStableFunc(findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule))
	})
	return findings[:min(len(findings), n)]
}

// overBudget reports, once, that the scan stopped short.
func (s *scanner) overBudget(out emit, line int) {
	if !s.over {
		s.over = true
		out(s.p.detector["budget"], line, "")
	}
}

// scanText scans a text at a depth of decoding (0: a file's own content).
func (s *scanner) scanText(data []byte, depth int, out emit) {
	s.text += int64(len(data))
	if s.text > s.budget.MaxTextBytes {
		s.overBudget(out, 1)
		return
	}
	v, inv := normalize(data)
	d := s.p.detector
	if inv.tagLine > 0 {
		out(d["unicode-tags"], inv.tagLine, "")
		if len(inv.tagText) > 0 && depth < s.budget.MaxDepth {
			s.scanText(inv.tagText, depth+1, func(r *Rule, _ int, note string) {
				out(r, inv.tagLine, join("in the text the tag characters spell", note))
			})
		}
	}
	if inv.bidiLine > 0 {
		out(d["bidi-controls"], inv.bidiLine, "")
	}
	if inv.zeroWidthLine > 0 {
		out(d["zero-width-run"], inv.zeroWidthLine, "")
	}
	s.variationSelectors(data, depth, out)
	base := len(s.downloads)
	s.viewPatterns(v, out)
	if dv := decomment(v); dv != nil {
		s.viewPatterns(dv, out)
	}
	sv := shellView(v)
	if sv != nil {
		s.viewPatterns(sv, out)
	}
	if len(s.downloads) > base {
		s.runsOfDownloads(v, sv, s.downloads[base:], out)
		if depth == 0 {
			s.noteAcross(s.downloads[base:])
		}
		s.downloads = s.downloads[:base]
	}
	if s.inComment == 0 {
		// Comments do not nest: an <!-- inside one is its text (and an
		// unclosed one's content, to the end, holds every later one).
		s.comments(v, depth, out)
		s.markdownComments(v, depth, out)
	}
	if depth < s.budget.MaxDepth {
		s.blobs(v, depth, out)
	}
}

// viewPatterns matches the pattern rules in v, and places the downloads
// found there on their lines.
func (s *scanner) viewPatterns(v *view, out emit) {
	from := len(s.downloads)
	s.patterns(v, out)
	for i := from; i < len(s.downloads); i++ {
		s.downloads[i].line = v.line(s.downloads[i].off)
	}
}

// patterns matches the pattern rules where their keywords start in v.
func (s *scanner) patterns(v *view, out emit) {
	t := v.text
	// count[i] is how many times rule i was found in this text (patterns
	// never runs inside itself, so one buffer serves every text).
	if s.count == nil {
		s.count = make([]int, len(s.p.rules))
	}
	count := s.count
	clear(count)
	// The case-insensitive patterns read t lower-cased, done where they
	// run: low is t[lowFrom:lowFrom+len(low)] lower-cased.
	var low []byte
	lowFrom := 0
	lowered := func(start, we int) []byte {
		if start < lowFrom || we > lowFrom+len(low) {
			// Ahead as well, so that the windows of one line, or of
			// the next lines, are lower-cased once.
			src := t[start:min(len(t), we+lowAhead)]
			lowFrom, low = start, slices.Grow(low[:0], len(src))[:len(src)]
			lowerASCII(low, src)
		}
		return low[start-lowFrom : we-lowFrom]
	}
	// holds reports whether w, t[start:we] as the needles ids are looked
	// for (we no further than nl, the end of its line), holds one of them
	// (true for none). Where
	// each needle is next found is kept, for the next windows of the line:
	// they overlap, and most rules need what none of their line holds, so
	// a line is read about once for each needle.
	if s.next1 == nil {
		s.next1 = make([]nextNeedle, len(s.p.needles))
	}
	next := s.next1
	clear(next)
	// sig is the pairs of the lower-cased t[sigFrom:sigTo], a short line
	// from its first hit on.
	var sig bigrams
	sigFrom, sigTo := 0, -1
	holds := func(ids []int, w []byte, start, we, nl int) bool {
		if len(ids) == 0 {
			return true
		}
		if s.p.reference {
			return s.p.containsAny(w, ids)
		}
		if nl-start < shortLine {
			// w is the rest of the line (we is nl): its pairs, those of
			// the line from its first hit on, tell most needles absent.
			if start < sigFrom || we > sigTo {
				sig.of(lowered(start, we))
				sigFrom, sigTo = start, we
			}
			for _, i := range ids {
				if (!s.p.lowNeedle[i] || sig.mayHold(s.p.needlePairs[i])) && bytes.Contains(w, s.p.needles[i]) {
					return true
				}
			}
			return false
		}
		for _, i := range ids {
			n, c := s.p.needles[i], &next[i]
			if c.to == 0 || start < c.from || we > c.to || c.at >= 0 && c.at < start {
				src, from, to := t, 0, max(we, min(nl, start+lowAhead))
				if s.p.lowNeedle[i] {
					lowered(start, we)
					src, from, to = low, lowFrom, max(we, min(nl, lowFrom+len(low)))
				}
				*c = nextNeedle{from: start, to: to, at: bytes.Index(src[start-from:to-from], n)}
				if c.at >= 0 {
					c.at += start
				}
			}
			if c.at >= 0 && c.at+len(n) <= we {
				return true
			}
		}
		return false
	}
	nl := -1 // the first newline at or after the last hit's end, or len(t)
	s.p.keywords.find(t, func(k, end int) {
		if s.over {
			return
		}
		start := end - s.p.keywords.lens[k]
		if s.p.fetchWord[k] {
			s.noteDownload(t, start, end)
		}
		if nl < end {
			if nl = indexByteFrom(t, end, '\n'); nl < 0 {
				nl = len(t)
			}
		}
		// The logical line, at most windowAfter bytes on: how far a
		// pattern may read.
		we := min(nl, end+windowAfter)
		for _, m := range s.p.rulesOf[k] {
			r := m.rule
			i := r.index
			if count[i] >= maxPerRule || (r.Scope == "comment" && s.inComment == 0) {
				continue
			}
			s.pattern += int64(we - start)
			if s.pattern > s.budget.MaxPatternBytes {
				s.overBudget(out, v.line(start))
				return
			}
			w := t[start:we]
			if r.Case != "sensitive" {
				w = lowered(start, we)
			}
			var loc []int
			if holds(r.requires, w, start, we, nl) && (s.p.reference || holds(m.needs, w, start, we, nl)) {
				loc = m.re.FindIndex(w)
			}
			if loc == nil && r.prose && we == nl && nl-end <= wrapReach {
				// A sentence may wrap: read on into the paragraph's
				// next line (the newline a blank, offsets as in t).
				if w2 := s.wrapped(t, start, nl, end, r.Case != "sensitive"); w2 != nil &&
					s.p.containsAny(w2, r.requires) && s.p.containsAny(w2, m.needs) {
					s.pattern += int64(len(w2) - len(w))
					loc = m.re.FindIndex(w2)
				}
			}
			if loc == nil || (r.valid != nil && !r.valid(t, start, start+loc[1])) {
				continue
			}
			count[i]++
			out(r, v.line(start), "")
		}
	})
}

// wrapped is t[start:] through the line after the one ending at nl (at
// most windowAfter past end), the newline read as a blank and lower-cased
// when low is set, when the sentence runs on into that line (the first
// does not end one, and the next goes on the paragraph: not blank, not a
// heading, list item, quote, table row or code fence); else nil.
func (s *scanner) wrapped(t []byte, start, nl, end int, low bool) []byte {
	if nl+1 >= len(t) || endsSentence(t[end:nl]) || !continues(t[nl+1:]) {
		return nil
	}
	we := min(len(t), end+windowAfter)
	if k := bytes.IndexByte(t[nl+1:we], '\n'); k >= 0 {
		we = nl + 1 + k
	}
	// The hits of one line share what the first made (it starts no
	// later than theirs, and their windows end no later than its).
	if c := &s.wrapped1; c.nl != nl || c.low != low || start < c.from || we > c.to || c.text != &t[0] {
		c.nl, c.low, c.from, c.to, c.text = nl, low, start, we, &t[0]
		c.buf = slices.Grow(c.buf[:0], we-start)[:we-start]
		if low {
			lowerASCII(c.buf, t[start:we])
		} else {
			copy(c.buf, t[start:we])
		}
		c.buf[nl-start] = ' '
	}
	c := &s.wrapped1
	return c.buf[start-c.from : we-c.from]
}

// wrapCache is the window wrapped made last: t[from:to] (t named by its
// first byte), the newline at nl a blank, lower-cased when low is set.
type wrapCache struct {
	text         *byte
	nl, from, to int
	low          bool
	buf          []byte
}

// endsSentence reports whether the rest of a line ends otherwise than
// wrapped prose does, mid-sentence: on a word (a letter or digit, any
// non-ASCII byte, emphasis) or a comma. A full stop, a colon or a bracket
// ends what a phrase could run on from, and lines of code end so.
func endsSentence(rest []byte) bool {
	rest = bytes.TrimRight(rest, " \t\r")
	if len(rest) == 0 {
		return false
	}
	c := rest[len(rest)-1]
	return !word[c] && c < utf8.RuneSelf && c != ',' && c != '*'
}

// continues reports whether a line (line, up to its newline) carries on a
// paragraph of prose.
func continues(line []byte) bool {
	i := 0
	for i < len(line) && i < 4 && line[i] == ' ' {
		i++
	}
	if i == 4 || i == len(line) {
		return false // an indented code block, or the end
	}
	switch line[i] {
	case '\n', '#', '-', '*', '+', '>', '|', '`', '~', '<':
		return false
	}
	j := i
	for j < len(line) && j-i < 9 && '0' <= line[j] && line[j] <= '9' {
		j++
	}
	return j == i || j >= len(line) || (line[j] != '.' && line[j] != ')')
}

// containsAny reports whether b holds one of the needles ids (true for
// none).
func (p *Pack) containsAny(b []byte, ids []int) bool {
	for _, i := range ids {
		if bytes.Contains(b, p.needles[i]) {
			return true
		}
	}
	return len(ids) == 0
}

// nextNeedle is where a needle is first found in t[from:to] of a text
// (at: -1 for nowhere).
type nextNeedle struct{ from, to, at int }

// word are the bytes of words: a keyword that starts with one matches
// only where a word starts.
var word = func() (w [256]bool) {
	for c := range w {
		w[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	return w
}()

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + ", " + b
}

// lowerASCII writes src to dst (as long) with A-Z lower-cased, eight bytes
// at a time where they are all ASCII: a byte of 'A' or more gains its top
// bit when 0x3F is added, one above 'Z' when 0x25 is, and no sum carries
// into the next byte; the difference, moved to bit 5, is what to set.
func lowerASCII(dst, src []byte) {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		if x&tops != 0 {
			for j, c := range src[i : i+8] {
				dst[i+j] = lower[c]
			}
			continue
		}
		upper := (x + (0x80-'A')*ones) &^ (x + (0x80-'Z'-1)*ones) & tops
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		dst[i] = lower[src[i]]
	}
}
