package scan

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// view is a text as the pattern rules read it: invisible characters
// dropped, look-alike and full-width letters folded to ASCII, and line
// continuations (a trailing backslash, a trailing pipe or &&) joined into
// one logical line; lines maps it back to the lines of the original.
type view struct {
	text []byte
	// lines[i] is the offset in text where line i+1 of the original
	// starts, or where line orig[i] does when orig is set (a view of some
	// of the lines: decomment).
	lines []int
	orig  []int
}

// line is the 1-based line of the original that offset off of text is on.
func (v *view) line(off int) int {
	n := sort.Search(len(v.lines), func(i int) bool { return v.lines[i] > off })
	if v.orig != nil && n > 0 {
		return v.orig[n-1]
	}
	return n
}

// invisible is what normalising found hidden in a text: the first line of
// each kind of hidden character, and the text Unicode tag characters spell.
type invisible struct {
	tagLine, bidiLine, zeroWidthLine int
	tagText                          []byte
}

// maxTagText bounds the hidden text collected from tag characters.
const maxTagText = 64 << 10

// normalize builds the view of data (valid or invalid UTF-8 alike). The
// lines that normalising leaves as they are (ASCII without tabs, runs of
// blanks or a continuation, as most are) are not copied: up to the first
// line that changes, the view's text is data itself.
func normalize(data []byte) (*view, invisible) {
	v := &view{lines: make([]int, 1, len(data)/40+1)}
	var inv invisible
	ls := asIs(data, v)
	if ls == len(data) {
		v.text = data
		return v, inv
	}
	out := append(make([]byte, 0, len(data)), data[:ls]...)
	lineStart := ls // in out
	zeroRun := 0
	for i := ls; i < len(data); {
		// Most bytes are copied as they are: a blank too, when it is
		// one between two others.
		j := i
		for j < len(data) {
			if c := data[j]; plain[c] || c == ' ' && j > i && j+1 < len(data) && plain[data[j+1]] {
				j++
				continue
			}
			break
		}
		if j > i {
			out = append(out, data[i:j]...)
			zeroRun = 0
			if i = j; i == len(data) {
				break
			}
		}
		b := data[i]
		if b < utf8.RuneSelf {
			zeroRun = 0
			switch b {
			case '\n':
				out = joinOrBreak(out, lineStart)
				lineStart = len(out)
				v.lines = append(v.lines, len(out))
			case ' ', '\t':
				// Runs of blanks read as one space, as keywords spell them.
				if len(out) == lineStart || out[len(out)-1] != ' ' {
					out = append(out, ' ')
				}
			default:
				out = append(out, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		i += size
		line := len(v.lines)
		switch {
		case r == utf8.RuneError && size == 1:
			zeroRun = 0
			out = append(out, b)
		case r == blackFlag && rgiFlag(data[i:]) > 0:
			// England's, Scotland's and Wales's flags are tag sequences
			// on a black flag: an emoji, no hidden text.
			n := rgiFlag(data[i:])
			out = append(out, data[i-size:i+n]...)
			i += n
			zeroRun = 0
		case r >= 0xE0000 && r <= 0xE007F:
			if inv.tagLine == 0 {
				inv.tagLine = line
			}
			if c := r - 0xE0000; c >= 0x20 && c < 0x7F && len(inv.tagText) < maxTagText {
				inv.tagText = append(inv.tagText, byte(c))
			}
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			if inv.bidiLine == 0 {
				inv.bidiLine = line
			}
		case combining(r):
			// A mark on a letter (Ign\u0301ore) reads as the letter.
			zeroRun = 0
		case zeroWidth(r):
			zeroRun++
			if zeroRun == zeroWidthRun && inv.zeroWidthLine == 0 {
				inv.zeroWidthLine = line
			}
		default:
			zeroRun = 0
			out = appendFolded(out, r, data[i-size:i])
		}
	}
	v.text = out
	return v, inv
}

// blackFlag is the base of a flag emoji tag sequence (U+1F3F4).
const blackFlag = 0x1F3F4

// rgiFlags are the tag sequences (the subdivision's code in tag letters,
// then the cancel tag) of the flag emoji Unicode recommends: England,
// Scotland, Wales.
var rgiFlags = func() (f [][]byte) {
	for _, code := range []string{"gbeng", "gbsct", "gbwls"} {
		var b []byte
		for _, c := range code {
			b = utf8.AppendRune(b, 0xE0000+c)
		}
		f = append(f, utf8.AppendRune(b, 0xE007F))
	}
	return f
}()

// rgiFlag is the length of the flag tag sequence data starts with (after
// a black flag), or 0 for none.
func rgiFlag(data []byte) int {
	for _, f := range rgiFlags {
		if bytes.HasPrefix(data, f) {
			return len(f)
		}
	}
	return 0
}

// asIs is where the first line of data that normalising changes starts
// (len(data) when none does), having recorded the lines before it in v:
// a line stays as it is when it is ASCII without a tab or two blanks in a
// row, and does not continue on the next.
func asIs(data []byte, v *view) int {
	// Where the first tab, two blanks or non-ASCII byte is.
	stop := len(data)
	if i := bytes.IndexByte(data, '\t'); i >= 0 {
		stop = i
	}
	if i := bytes.Index(data[:stop], []byte("  ")); i >= 0 {
		stop = i
	}
	stop = ascii(data[:stop])
	lineStart := 0
	for {
		i := indexByteFrom(data[:stop], lineStart, '\n')
		if i < 0 {
			if stop == len(data) {
				return len(data)
			}
			return lineStart
		}
		if n, sep := lineEnding(data[:i], lineStart); n != i || sep != '\n' {
			return lineStart
		}
		lineStart = i + 1
		v.lines = append(v.lines, lineStart)
	}
}

// ascii is how many bytes data starts with that are ASCII, read eight at a
// time.
func ascii(data []byte) int {
	i := 0
	for ; i+8 <= len(data); i += 8 {
		if binary.LittleEndian.Uint64(data[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(data); i++ {
		if data[i] >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// plain are the bytes normalize copies as they are: ASCII but blanks and
// newlines.
var plain = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c != ' ' && c != '\t' && c != '\n'
	}
	return t
}()

// zeroWidthRun is how many zero-width characters in a row are a hidden
// channel rather than the odd joiner in an emoji sequence or a BOM.
const zeroWidthRun = 3

func zeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E, 0x00AD:
		return true
	}
	return false
}

// combining reports whether r is a combining mark, which a view drops:
// the diacritical blocks (U+0300–036F, U+1AB0–1AFF, U+1DC0–1DFF, U+20D0–20FF,
// U+FE20–FE2F).
func combining(r rune) bool {
	return r >= 0x0300 && r <= 0x036F || r >= 0x1AB0 && r <= 0x1AFF || r >= 0x1DC0 && r <= 0x1DFF ||
		r >= 0x20D0 && r <= 0x20FF || r >= 0xFE20 && r <= 0xFE2F
}

// joinOrBreak ends a line of out (which started at lineStart) as
// lineEnding says.
func joinOrBreak(out []byte, lineStart int) []byte {
	n, sep := lineEnding(out, lineStart)
	if out = out[:n]; sep != 0 {
		out = append(out, sep)
	}
	return out
}

// lineEnding says how a line of out (which started at lineStart) ends: out
// is cut to n bytes, then sep is appended (0: nothing). A line ends with a
// newline, or a space when it continues on the next (a trailing | or &&
// outside a markdown table row); a trailing backslash goes, joining the
// lines as a shell does (cu\<newline>rl is curl), but for a drive's root.
func lineEnding(out []byte, lineStart int) (n int, sep byte) {
	j := len(out) - 1
	for j >= lineStart && (out[j] == ' ' || out[j] == '\t' || out[j] == '\r') {
		j--
	}
	switch {
	case j < lineStart:
	case out[j] == '\\' && j > lineStart && out[j-1] == ':':
		return len(out), ' ' // a drive's root (C:\\), not a continuation
	case out[j] == '\\' && j == len(out)-1:
		return j, 0
	case out[j] == '\\':
		return j, ' '
	case out[j] == '|' || (out[j] == '&' && j > lineStart && out[j-1] == '&'):
		k := lineStart
		for k < j && (out[k] == ' ' || out[k] == '\t') {
			k++
		}
		if out[k] != '|' {
			return len(out), ' '
		}
	}
	return len(out), '\n'
}

// appendFolded appends r (whose encoding is enc) folded to the ASCII letter
// it imitates, when it is a look-alike.
func appendFolded(out []byte, r rune, enc []byte) []byte {
	if c, ok := confusable[r]; ok {
		return append(out, c)
	}
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		return append(out, byte(r-0xFEE0))
	case r == 0x3000: // ideographic space
		return append(out, ' ')
	case r >= 0x2000 && r <= 0x200A, r == 0x00A0, r == 0x202F, r == 0x205F: // other spaces
		return append(out, ' ')
	case r >= 0x1D400 && r <= 0x1D7FF, r >= 0x2460 && r <= 0x24FF: // mathematical, enclosed letters
		return norm.NFKC.Append(out, enc...)
	}
	return append(out, enc...)
}

// confusable maps letters of other scripts that read as Latin ones.
var confusable = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P', 'С': 'C',
	'Т': 'T', 'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ӏ': 'I',
	// Greek
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P',
	'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	'ҽ': 'e', 'ԍ': 'g',
	// Armenian
	'ս': 'u', 'օ': 'o', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ք': 'p',
	// Latin small capitals
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k',
	'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w',
	'ʏ': 'y', 'ᴢ': 'z',
	// Latin look-alikes
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ℓ': 'l', 'ⅰ': 'i', 'ⅼ': 'l', 'ⅽ': 'c', 'ⅾ': 'd', 'ⅿ': 'm',
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '−': '-', '⁄': '/', '∕': '/', '｜': '|', '¦': '|',
}

// earliest is the smallest of the places in next that are not -1 (none
// left), or -1 when every one is.
func earliest(next []int) int {
	at := -1
	for _, n := range next {
		if n >= 0 && (at < 0 || n < at) {
			at = n
		}
	}
	return at
}

// decomment returns the lines of a view that hold comment noise (an HTML
// or C block comment, an empty quote pair: ” or ""), with it taken out, so
// that a payload broken up by it reads whole; nil when there are none.
func decomment(v *view) *view {
	t := v.text
	var out *view
	// The next place each kind of noise starts (-1: none left), so that
	// only the lines holding some are read.
	var next [len(noiseMarks)]int
	for k, m := range noiseMarks {
		next[k] = indexFrom(t, 0, m)
	}
	for {
		at := earliest(next[:])
		if at < 0 {
			break
		}
		start := bytes.LastIndexByte(t[:at], '\n') + 1
		end := len(t)
		if i := bytes.IndexByte(t[at:], '\n'); i >= 0 {
			end = at + i
		}
		if out == nil {
			out = &view{}
		}
		out.orig = append(out.orig, v.line(start))
		out.lines = append(out.lines, len(out.text))
		out.text = append(stripNoise(out.text, t[start:end]), '\n')
		for k, n := range next {
			if n >= 0 && n <= end {
				next[k] = indexFrom(t, end+1, noiseMarks[k])
			}
		}
	}
	return out
}

// noiseMarks start the noise decomment takes out: comments, empty quote
// pairs, markdown's bold markers (ignore all **previous** instructions),
// and character references, which it reads as the characters they are
// (&#124; is |, &nbsp; a blank).
var noiseMarks = [...]string{"<!--", "/*", "''", `""`, "**", "&#", "&nbsp;"}

// noiseStart are the bytes noiseMarks start with.
var noiseStart = func() (n [256]bool) {
	for _, m := range noiseMarks {
		n[m[0]] = true
	}
	return n
}()

// stripNoise appends line to out without its comments and empty quotes.
// Where a comment ends is looked for once per place it could, so that a
// line of openers no closer follows costs one search, not one per opener.
func stripNoise(out, line []byte) []byte {
	html, block := closer{end: "-->"}, closer{end: "*/"}
	for i := 0; i < len(line); {
		// What starts no noise is copied as it is, in runs.
		j := i
		for j < len(line) && !noiseStart[line[j]] {
			j++
		}
		if out = append(out, line[i:j]...); j == len(line) {
			break
		}
		i = j
		switch {
		case hasAt(line, i, "<!--"):
			if k := html.after(line, i+4); k >= 0 {
				i = k + 3
				continue
			}
		case hasAt(line, i, "/*"):
			if k := block.after(line, i+2); k >= 0 {
				i = k + 2
				continue
			}
		case hasAt(line, i, "''"), hasAt(line, i, `""`), hasAt(line, i, "**"):
			i += 2
			continue
		case line[i] == '&':
			if r, n := charRef(line[i:]); n > 0 {
				out = utf8.AppendRune(out, r)
				i += n
				continue
			}
		}
		out = append(out, line[i])
		i++
	}
	return out
}

// charRef reads the character reference b starts with (&#73;, &#x49;,
// &nbsp;): the character, and its length (0: none).
func charRef(b []byte) (rune, int) {
	if hasAt(b, 0, "&nbsp;") {
		return ' ', len("&nbsp;")
	}
	if !hasAt(b, 0, "&#") {
		return 0, 0
	}
	end := bytes.IndexByte(b[:min(len(b), 12)], ';')
	if end < 3 {
		return 0, 0
	}
	digits, base := b[2:end], 10
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || n == 0 || n > utf8.MaxRune || n >= 0xD800 && n < 0xE000 {
		return 0, 0
	}
	return rune(n), end + 1
}

// closer finds where a comment ends, remembering its last search: the
// first end at or after from was at (-1: none).
type closer struct {
	end      string
	from, at int
	searched bool
}

// after is where the first end at or after from starts in t, or -1.
func (c *closer) after(t []byte, from int) int {
	if !c.searched || from < c.from || (c.at >= 0 && c.at < from) {
		c.from, c.at, c.searched = from, indexFrom(t, from, c.end), true
	}
	return c.at
}

func hasAt(t []byte, i int, s string) bool {
	return len(t)-i >= len(s) && string(t[i:i+len(s)]) == s
}

func indexFrom(t []byte, i int, s string) int {
	if i > len(t) {
		return -1
	}
	k := bytes.Index(t[i:], []byte(s))
	if k < 0 {
		return -1
	}
	return i + k
}
