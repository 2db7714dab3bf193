package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The detectors the rule pack names, written in code because a pattern
// cannot express them: magic bytes, decoding, the content of comments.

// maxComments bounds the HTML comments of one text scanned on their own.
const maxComments = 1000

// comments flags HTML comments (invisible in rendered markdown) whose
// content any rule finds something in, signals included: a comment that
// reads or sends data, or addresses the agent, is instructions hidden
// from the person reviewing the rendered skill.
func (s *scanner) comments(v *view, depth int, out emit) {
	t := v.text
	for n, i := 0, 0; n < maxComments; n++ {
		k := indexFrom(t, i, "<!--")
		if k < 0 {
			return
		}
		end := indexFrom(t, k+4, "-->")
		if end < 0 {
			end = len(t)
		}
		found := false
		s.inComment++
		s.scanText(t[k+4:end], depth+1, func(r *Rule, _ int, _ string) { found = true })
		s.inComment--
		if s.over {
			return
		}
		if found {
			out(s.p.detector["html-comment"], v.line(k), "")
		}
		i = end
	}
}

// markdownComments flags, as comments does, markdown's comment idiom: a
// link reference definition no text uses, whose title is never rendered
// ([//]: # (text), [comment]: <> "text"); the content is scanned as an
// HTML comment's.
func (s *scanner) markdownComments(v *view, depth int, out emit) {
	t := v.text
	// i is where a line starts: one definition fits a line, so each "]:"
	// found moves on to the next line, and every byte is read once.
	for n, i := 0, 0; n < maxComments; {
		k := indexFrom(t, i, "]:")
		if k < 0 {
			return
		}
		ls := i + bytes.LastIndexByte(t[i:k], '\n') + 1
		end := len(t)
		if j := bytes.IndexByte(t[k:], '\n'); j >= 0 {
			end = k + j
		}
		i = end + 1
		body, ok := markdownComment(t[ls:end], k-ls)
		if !ok {
			continue
		}
		n++
		found := false
		s.inComment++
		s.scanText(body, depth+1, func(*Rule, int, string) { found = true })
		s.inComment--
		if s.over {
			return
		}
		if found {
			out(s.p.detector["html-comment"], v.line(k), "a markdown comment")
		}
	}
}

// markdownComment reads line, whose "]:" is at k, as a markdown comment,
// "[label]: # (text)" (or <> for #; "text" or 'text' for (text)), at most
// three spaces in, and returns its text.
func markdownComment(line []byte, k int) ([]byte, bool) {
	open := 0
	for open < k && open < 3 && line[open] == ' ' {
		open++
	}
	if line[open] != '[' || bytes.IndexByte(line[open+1:k], ']') >= 0 {
		return nil, false
	}
	rest := bytes.TrimLeft(line[k+2:], " \t")
	switch {
	case bytes.HasPrefix(rest, []byte("#")):
		rest = rest[1:]
	case bytes.HasPrefix(rest, []byte("<>")):
		rest = rest[2:]
	default:
		return nil, false
	}
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
		return nil, false // the title is set off by a blank
	}
	title := bytes.Trim(rest, " \t\r")
	if len(title) < 2 || title[len(title)-1] != titleClose[title[0]] {
		return nil, false
	}
	return title[1 : len(title)-1], true
}

// titleClose closes a link title opened by its index (0: none).
var titleClose = [256]byte{'(': ')', '"': '"', '\'': '\''}

// Blob detection: base64 of at least minBase64 characters (a line of a
// wrapped blob counts when it is at least wrappedLine long), hex of at
// least minHex digits, or \xNN escapes of at least minEscapes bytes.
const (
	minBase64   = 40
	minHex      = 32
	minEscapes  = 8
	wrappedLine = 60
	// maxBlobs bounds the blobs of one text decoded.
	maxBlobs = 4096
)

var b64class = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_" {
		t[c] = true
	}
	return t
}()

// blobs decodes the encoded blobs of v and scans what they hold: text
// again, one layer deeper; bytes for executables. What a blob hides is
// reported at the blob's line, and the blob itself as decoded-findings.
func (s *scanner) blobs(v *view, depth int, out emit) {
	t := v.text
	n := 0
	for i := 0; i < len(t) && n < maxBlobs && !s.over; {
		if i = nextRun(t, i); i == len(t) {
			break
		}
		start := i
		var run []byte // the blob without line breaks, when wrapped
		lineStart := i
		for i < len(t) {
			for i < len(t) && b64class[t[i]] {
				i++
			}
			// A wrapped blob continues on the next line.
			if i+1 < len(t) && t[i] == '\n' && i-lineStart >= wrappedLine && b64class[t[i+1]] {
				run = append(run, t[lineStart:i]...)
				i++
				lineStart = i
				continue
			}
			break
		}
		if run != nil {
			run = append(run, t[lineStart:i]...)
		} else {
			run = t[start:i]
		}
		if len(run) < minHex {
			continue
		}
		decoded, kind := decodeBlob(run)
		if decoded == nil {
			continue
		}
		n++
		s.decoded(decoded, kind, v.line(start), depth, out)
	}
	for i := 0; n < maxBlobs && !s.over; n++ {
		k := indexFrom(t, i, `\x`)
		if k < 0 {
			break
		}
		var buf []byte
		j := k
		for j+4 <= len(t) && t[j] == '\\' && t[j+1] == 'x' && isHex(t[j+2]) && isHex(t[j+3]) {
			buf = append(buf, unhex(t[j+2])<<4|unhex(t[j+3]))
			j += 4
		}
		if len(buf) >= minEscapes {
			s.decoded(buf, `\x escapes`, v.line(k), depth, out)
		}
		i = max(j, k+2)
	}
}

// nextRun is where the next run of at least minHex base64 bytes starts in
// t, from i on (i starts a run or follows one), or len(t): a shorter run
// is no blob, even a wrapped one (its first line is longer). It reads the
// last byte of each minHex bytes first: one outside the class rules out
// every run across it, so prose costs a fraction of its bytes.
func nextRun(t []byte, i int) int {
	for i+minHex <= len(t) {
		j := i + minHex - 1
		for j >= i && b64class[t[j]] {
			j--
		}
		if j < i {
			return i
		}
		i = j + 1
	}
	return len(t)
}

// decoded scans what a blob decoded to: an executable is reported as one;
// text (UTF-8, UTF-16 as PowerShell's -EncodedCommand carries it, or
// mostly printable bytes with a few odd ones) is scanned again.
func (s *scanner) decoded(data []byte, kind string, line, depth int, out emit) {
	s.eicar(data, line, out)
	if k := native(data); k != "" {
		out(s.p.detector["native-executable"], line, "decoded from "+kind)
		return
	}
	if u := utf16Text(data); u != nil {
		data, kind = u, kind+" of UTF-16 text"
	} else if !printable(data) && !textual(data) {
		return
	}
	found := false
	s.scanText(data, depth+1, func(r *Rule, _ int, note string) {
		if !r.Signal() {
			found = true
		}
		out(r, line, join("decoded from "+kind, note))
	})
	if found {
		out(s.p.detector["decoded-findings"], line, kind)
	}
}

// decodeBlob decodes a run of base64 or hex characters; nil when it is
// neither (or too short to be worth it).
func decodeBlob(run []byte) ([]byte, string) {
	if len(run)%2 == 0 && allHex(run) {
		b := make([]byte, len(run)/2)
		if _, err := hex.Decode(b, run); err == nil {
			return b, "hex"
		}
		return nil, ""
	}
	if len(run) < minBase64 {
		return nil, ""
	}
	raw := bytes.TrimRight(run, "=")
	enc := base64.RawStdEncoding
	if bytes.ContainsAny(raw, "-_") {
		if bytes.ContainsAny(raw, "+/") {
			return nil, ""
		}
		enc = base64.RawURLEncoding
	}
	if len(raw)%4 == 1 {
		raw = raw[:len(raw)-1]
	}
	// Most long runs are not base64 of text: check a prefix first.
	head := raw[:min(len(raw), 1024)&^3]
	hb := make([]byte, enc.DecodedLen(len(head)))
	if _, err := enc.Decode(hb, head); err != nil || (!printable(hb) && !textual(hb) && native(hb) == "" && utf16Text(hb) == nil) {
		return nil, ""
	}
	b := make([]byte, enc.DecodedLen(len(raw)))
	n, err := enc.Decode(b, raw)
	if err != nil {
		return nil, ""
	}
	return b[:n], "base64"
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// printable reports whether decoded bytes are text: valid UTF-8 (a rune
// cut at the end aside) with almost no control characters.
func printable(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	ctl := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
				ctl++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 && len(b)-i >= utf8.UTFMax {
			return false
		}
		i += size
	}
	return ctl*50 <= len(b)
}

// textual reports whether bytes are mostly printable ASCII (three in four),
// as a script with a stray NUL or Latin-1 byte is, and compressed or random
// data (about one in three) is not.
func textual(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	n := 0
	for _, c := range b {
		if 0x20 <= c && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			n++
		}
	}
	return n*4 >= len(b)*3
}

// textsOf are the texts a file is scanned as, whatever its name or bytes:
// odd bytes never make a file "binary" and unscanned. Text (valid UTF-8
// without NUL bytes) is scanned as it is. Text with a few odd bytes (a NUL,
// a Latin-1 byte) is scanned as it is (an odd byte reads as a separator),
// and again without its NUL bytes, as a shell reads a script (cu\x00rl is
// curl; also for noise). Bytes that are mostly not text (an image, compressed or random
// data) are scanned for their runs of printable ASCII only, so that noise
// never reads as hidden Unicode. UTF-16 (with a byte order mark, or with
// the zero bytes of ASCII in UTF-16 on one side) is decoded and scanned too.
func textsOf(data []byte) [][]byte {
	if bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) {
		return [][]byte{data}
	}
	noise := binaryish(data)
	out := [][]byte{data}
	if noise {
		out[0] = printableRuns(data)
	}
	if u := utf16Text(data); u != nil {
		return append(out, u)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		out = append(out, bytes.ReplaceAll(out[0], []byte{0}, nil))
	}
	return out
}

// binaryish reports whether more than one byte in ten of data is a control
// byte (but blanks, line ends and escape) or part of no valid UTF-8 character:
// data, not text with a few odd bytes.
func binaryish(data []byte) bool {
	odd := 0
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b || c == 0x7f {
				odd++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			odd++
		}
		i += size
	}
	return odd*10 > len(data)
}

// printableRuns is data with every byte but printable ASCII, tabs, line
// ends and NULs (which textsOf drops for its second reading) turned to a
// space: the lines and offsets stay, the noise goes.
func printableRuns(data []byte) []byte {
	out := make([]byte, len(data))
	for i, c := range data {
		if 0x20 <= c && c < 0x7f || c == '\t' || c == '\n' || c == '\r' || c == 0 {
			out[i] = c
		} else {
			out[i] = ' '
		}
	}
	return out
}

// utf16Head is how much of a text without a byte order mark is read to
// tell whether it is UTF-16.
const utf16Head = 4 << 10

// utf16Text decodes UTF-16 text to UTF-8 (NUL characters dropped); nil when
// data is not UTF-16: it starts with no byte order mark, and its zero
// bytes are not those of mostly-ASCII UTF-16 (at least half the bytes of
// one parity, almost none of the other).
func utf16Text(data []byte) []byte {
	var big bool
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}) && !bytes.HasPrefix(data, []byte{0xff, 0xfe, 0, 0}):
		data = data[2:]
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		data, big = data[2:], true
	default:
		head := data[:min(len(data), utf16Head)&^1]
		pairs := len(head) / 2
		if pairs < 4 {
			return nil
		}
		var even, odd int
		for i := 0; i < len(head); i += 2 {
			if head[i] == 0 {
				even++
			}
			if head[i+1] == 0 {
				odd++
			}
		}
		switch {
		case odd*2 >= pairs && even*20 <= pairs:
		case even*2 >= pairs && odd*20 <= pairs:
			big = true
		default:
			return nil
		}
	}
	out := make([]byte, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		u := rune(binary.LittleEndian.Uint16(data[i:]))
		if big {
			u = rune(binary.BigEndian.Uint16(data[i:]))
		}
		if utf16.IsSurrogate(u) && i+3 < len(data) {
			v := rune(binary.LittleEndian.Uint16(data[i+2:]))
			if big {
				v = rune(binary.BigEndian.Uint16(data[i+2:]))
			}
			if r := utf16.DecodeRune(u, v); r != utf8.RuneError {
				out = utf8.AppendRune(out, r)
				i += 2
				continue
			}
		}
		if u != 0 {
			out = utf8.AppendRune(out, u)
		}
	}
	return out
}

// eicarString is the EICAR test file's content, which anti-virus tools
// match exactly; written in two parts so that this source file is not one.
const eicarString = `X5O!P%@AP[4\PZX54(P^)7CC)7}$` + `EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

func (s *scanner) eicar(data []byte, line int, out emit) {
	if bytes.Contains(data, []byte(eicarString)) {
		if line == 0 {
			line = 1 + bytes.Count(data[:bytes.Index(data, []byte(eicarString))], []byte{'\n'})
		}
		out(s.p.detector["eicar"], line, "")
	}
}

// binaryFile runs the detectors of binary content on a file, and reports
// whether its magic bytes make it an executable or bytecode: code that
// cannot be reviewed, judged by that alone. Anything else (a nested archive
// included) is scanned as text too.
func (s *scanner) binaryFile(path string, data []byte, line int, out emit) bool {
	if kind := native(data); kind != "" {
		out(s.p.detector["native-executable"], line, kind)
		return true
	}
	if kind := bytecode(path, data); kind != "" {
		out(s.p.detector["bytecode"], line, kind)
		return true
	}
	if kind := nested(data); kind != "" {
		// An archive's members are its own (unreviewed) content, not
		// something appended to it.
		out(s.p.detector["nested-archive"], line, kind)
		return false
	}
	// Every header below holds a NUL byte: text without one holds none.
	if bytes.IndexByte(data, 0) >= 0 {
		if kind, off := embeddedNative(data); kind != "" {
			l := line
			if l == 0 {
				l = 1 + bytes.Count(data[:off], []byte{'\n'})
			}
			out(s.p.detector["native-executable"], l, fmt.Sprintf("%s header at byte %d, after other content", kind, off))
		}
	}
	return false
}

// maxEmbeddedCandidates bounds the magic bytes embeddedNative checks.
const maxEmbeddedCandidates = 4096

// embeddedNative finds an executable's header after the start of data (a
// payload appended to a script, which carves it out and runs it): an ELF
// identification in full (class and data 1 or 2, version 1, zero padding),
// a PE header that a DOS header points to, or a Mach-O header with a known
// CPU and file type. It returns the format and offset, or "".
func embeddedNative(b []byte) (string, int) {
	n := 0
	find := func(magic string, ok func(k int) bool) int {
		for i := 1; n < maxEmbeddedCandidates; n++ {
			k := indexFrom(b, i, magic)
			if k < 0 {
				return -1
			}
			if ok(k) {
				return k
			}
			i = k + 1
		}
		return -1
	}
	if k := find("\x7fELF", func(k int) bool {
		h := b[k:]
		return len(h) >= 16 && (h[4] == 1 || h[4] == 2) && (h[5] == 1 || h[5] == 2) && h[6] == 1 &&
			bytes.Count(h[9:16], []byte{0}) == 7
	}); k >= 0 {
		return "ELF", k
	}
	if k := find("MZ", func(k int) bool {
		if k+0x40 > len(b) {
			return false
		}
		off := int(binary.LittleEndian.Uint32(b[k+0x3c:]))
		return off >= 0x40 && off < 1<<20 && k+off+4 <= len(b) && string(b[k+off:k+off+4]) == "PE\x00\x00"
	}); k >= 0 {
		return "PE", k
	}
	for _, magic := range []string{"\xfe\xed\xfa\xce", "\xfe\xed\xfa\xcf", "\xce\xfa\xed\xfe", "\xcf\xfa\xed\xfe"} {
		var order binary.ByteOrder = binary.LittleEndian
		if magic[0] == 0xfe {
			order = binary.BigEndian
		}
		if k := find(magic, func(k int) bool {
			if k+16 > len(b) {
				return false
			}
			cpu, file := order.Uint32(b[k+4:]), order.Uint32(b[k+12:])
			switch cpu &^ 0x01000000 {
			case 7, 12, 18: // x86, ARM, PowerPC
				return 1 <= file && file <= 12
			}
			return false
		}); k >= 0 {
			return "Mach-O", k
		}
	}
	return "", 0
}

// native names the executable format data starts with, or "".
func native(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "ELF"
	case len(b) >= 0x40 && b[0] == 'M' && b[1] == 'Z':
		off := int(binary.LittleEndian.Uint32(b[0x3c:]))
		if off >= 0x40 && off+4 <= len(b) && string(b[off:off+4]) == "PE\x00\x00" {
			return "PE"
		}
	case len(b) >= 4:
		switch binary.BigEndian.Uint32(b) {
		case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe:
			return "Mach-O"
		case 0xcafebabe:
			// Also a Java class's magic: a fat Mach-O counts its
			// architectures where a class has its version (45 and up).
			if len(b) >= 8 && binary.BigEndian.Uint32(b[4:]) > 0 && binary.BigEndian.Uint32(b[4:]) < 45 {
				return "Mach-O universal"
			}
		}
	}
	return ""
}

// bytecode names the bytecode format of a file, or "".
func bytecode(path string, b []byte) string {
	lower := strings.ToLower(path)
	switch {
	case len(b) >= 8 && binary.BigEndian.Uint32(b) == 0xcafebabe && binary.BigEndian.Uint16(b[6:]) >= 45:
		return "Java class"
	case len(b) >= 16 && b[2] == '\r' && b[3] == '\n' && (strings.HasSuffix(lower, ".pyc") || strings.HasSuffix(lower, ".pyo") ||
		binary.LittleEndian.Uint32(b[4:]) <= 3 && binary.LittleEndian.Uint16(b[:2]) >= 3000 && binary.LittleEndian.Uint16(b[:2]) < 4000):
		return "Python bytecode"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")) && (strings.HasSuffix(lower, ".jar") || strings.HasSuffix(lower, ".war") ||
		strings.HasSuffix(lower, ".ear") || bytes.Contains(b, []byte("META-INF/MANIFEST.MF")) || bytes.Contains(b, []byte(".class"))):
		return "JAR"
	}
	return ""
}

// nested names the archive format data starts with, or "". Magic bytes
// that plain text could start with are checked further (bzip2's block
// magic, a cabinet's reserved zeros, a tar header's checksum).
func nested(b []byte) string {
	magics := []struct {
		prefix, kind string
	}{
		{"PK\x03\x04", "zip"}, {"PK\x05\x06", "zip"}, {"\x1f\x8b", "gzip"},
		{"\xfd7zXZ\x00", "xz"}, {"7z\xbc\xaf\x27\x1c", "7z"}, {"Rar!\x1a\x07", "rar"}, {"\x28\xb5\x2f\xfd", "zstd"},
		{"MSCF\x00\x00\x00\x00", "cab"}, {"\x04\x22\x4d\x18", "lz4"},
	}
	for _, m := range magics {
		if bytes.HasPrefix(b, []byte(m.prefix)) {
			return m.kind
		}
	}
	if len(b) >= 10 && string(b[:3]) == "BZh" && '1' <= b[3] && b[3] <= '9' &&
		(string(b[4:10]) == "\x31\x41\x59\x26\x53\x59" || string(b[4:10]) == "\x17\x72\x45\x38\x50\x90") {
		return "bzip2"
	}
	if len(b) >= 512 && string(b[257:262]) == "ustar" && tarChecksum(b[:512]) {
		return "tar"
	}
	return ""
}

// tarChecksum checks a tar header's checksum: the octal sum of its bytes,
// the checksum field counted as spaces.
func tarChecksum(h []byte) bool {
	field := bytes.TrimRight(bytes.TrimLeft(h[148:156], " \x00"), " \x00")
	if len(field) == 0 {
		return false
	}
	want := 0
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		want = want*8 + int(c-'0')
	}
	sum := 0
	for i, c := range h {
		if 148 <= i && i < 156 {
			c = ' '
		}
		sum += int(c)
	}
	return sum == want
}

// minSelectorRun is the shortest run of variation selectors flagged: text
// has one at most after a character (an emoji's presentation, an
// ideographic variant), never two in a row.
const minSelectorRun = 2

// variationSelectors flags a run of variation selectors (U+FE00–FE0F,
// U+E0100–E01EF): they show as nothing, and there are 256 of them, so a
// run after one character is a byte each of hidden text (U+FE00+b for b
// below 16, U+E0100+b-16 from 16), which models read. The text the runs
// spell is scanned too, one layer deeper, and its findings reported at the
// first run's line.
func (s *scanner) variationSelectors(data []byte, depth int, out emit) {
	first, start, run := -1, 0, 0
	var spelled, cur []byte
	end := func() {
		if run >= minSelectorRun {
			if first < 0 {
				first = start
			}
			if len(spelled) < maxTagText {
				spelled = append(spelled, cur...)
			}
		}
		run, cur = 0, cur[:0]
	}
	// The next 0xEF and 0xF3 at or after where the scan is (len(data):
	// none), the bytes every selector starts with: between them the text
	// is skipped at IndexByte's speed.
	nextEF, nextF3 := -1, -1
	lead := func(i int) int {
		if nextEF < i {
			nextEF = indexByteOr(data, i, 0xEF)
		}
		if nextF3 < i {
			nextF3 = indexByteOr(data, i, 0xF3)
		}
		return min(nextEF, nextF3)
	}
	for i := 0; i < len(data); {
		if c := data[i]; c != 0xEF && c != 0xF3 {
			if run > 0 {
				end()
			}
			i = lead(i + 1)
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		b, ok := selectorByte(r)
		if !ok {
			if run > 0 {
				end()
			}
			i += size
			continue
		}
		if run == 0 {
			start = i
		}
		run++
		cur = append(cur, b)
		i += size
	}
	if run > 0 {
		end()
	}
	if first < 0 {
		return
	}
	line := bytes.Count(data[:first], []byte{'\n'}) + 1
	out(s.p.detector["variation-selector-run"], line, "")
	if depth < s.budget.MaxDepth {
		s.scanText(spelled, depth+1, func(r *Rule, _ int, note string) {
			out(r, line, join("in the text the variation selectors spell", note))
		})
	}
}

// selectorByte is the byte a variation selector stands for in a run.
func selectorByte(r rune) (byte, bool) {
	switch {
	case r >= 0xFE00 && r <= 0xFE0F:
		return byte(r - 0xFE00), true
	case r >= 0xE0100 && r <= 0xE01EF:
		return byte(r - 0xE0100 + 16), true
	}
	return 0, false
}

// indexByteOr is the offset of the first c in data at or after from, or
// len(data) when there is none.
func indexByteOr(data []byte, from int, c byte) int {
	if i := bytes.IndexByte(data[from:], c); i >= 0 {
		return from + i
	}
	return len(data)
}
