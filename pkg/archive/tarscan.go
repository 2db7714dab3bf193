package archive

import (
	"bytes"
	"strconv"
)

// maxPAXBytes is the most a PAX extended header may hold: archive/tar's own
// limit on extension records, so nothing it accepts is refused here.
const maxPAXBytes = 1 << 20

// tarScan walks the raw 512-byte blocks of a tar stream in step with
// archive/tar, fed every decompressed byte the tar reader reads (tarCounter
// tees them here). archive/tar folds extension headers into the entry it
// returns and keeps only its own reading of them; other extractors resolve
// stacks of them differently, so the validator needs to see what came
// before each entry as it was written. The scanner skips content by size,
// honouring a PAX size record, keeps at most one header block and one PAX
// header in memory, and fails closed: once it cannot follow the stream,
// every later entry is refused.
type tarScan struct {
	blk  [tarBlock]byte
	fill int // bytes of blk filled

	skip      int64  // bytes to pass (content, then padding) before the next header
	pax       []byte // the PAX header being read
	paxLeft   int64  // bytes of it still to come
	paxKeys   map[string]struct{}
	sparseExt bool // old GNU sparse extension blocks follow

	next    tarRaw // what the headers so far say of the next entry
	pending bool   // an entry header was read; data has not been told its size
	cur     tarRaw // that entry
	zeros   int    // zero blocks in a row
	done    bool   // the end-of-archive marker was read
	err     *Error
}

// tarRaw is one entry's header as written, and the extension headers that
// preceded it.
type tarRaw struct {
	typ     byte
	size    int64 // the header's size field
	paxSize int64 // a PAX size record's value, or -1
	nPAX    int   // PAX extended headers ('x')
	nName   int   // GNU long names ('L')
	nLink   int   // GNU long link names ('K')
}

func newTarScan() *tarScan {
	return &tarScan{next: tarRaw{paxSize: -1}}
}

func (s *tarScan) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fail(CodeMalformed, "", "tar headers: "+format, args...)
	}
}

// write consumes the next bytes of the stream.
func (s *tarScan) write(p []byte) {
	for len(p) > 0 && s.err == nil && !s.done {
		if s.skip > 0 {
			n := min(int64(len(p)), s.skip)
			if s.paxLeft > 0 {
				m := min(n, s.paxLeft)
				s.pax = append(s.pax, p[:m]...)
				if s.paxLeft -= m; s.paxLeft == 0 {
					s.parsePAX()
				}
			}
			s.skip -= n
			p = p[n:]
			continue
		}
		if s.pending && !s.sparseExt {
			// archive/tar reads nothing between returning an entry and
			// reading its content, whose size data() is told.
			s.fail("archive/tar read past an entry header the scanner did not expect it to")
			return
		}
		m := copy(s.blk[s.fill:], p)
		s.fill += m
		p = p[m:]
		if s.fill == tarBlock {
			s.fill = 0
			s.header()
		}
	}
}

// header reads one full block where a header is due.
func (s *tarScan) header() {
	b := s.blk[:]
	if s.sparseExt {
		s.sparseExt = b[504] != 0
		return
	}
	if allZero(b) {
		if s.zeros++; s.zeros == 2 {
			s.done = true
		}
		return
	}
	if s.zeros > 0 {
		s.fail("a zero block followed by a header")
		return
	}
	if !tarChecksumOK(b) {
		s.fail("a header block with a wrong checksum")
		return
	}
	size, ok := tarNumber(b[124:136])
	if !ok {
		s.fail("a header with an invalid size field")
		return
	}
	s.skip = padded(size)
	switch typ := b[156]; typ {
	case 'x':
		if size > maxPAXBytes {
			s.fail("a PAX header of %d bytes, more than %d", size, maxPAXBytes)
			return
		}
		s.next.nPAX++
		s.pax, s.paxLeft = s.pax[:0], size
		if size == 0 {
			s.parsePAX()
		}
	case 'L':
		s.next.nName++
	case 'K':
		s.next.nLink++
	default:
		s.cur, s.next = s.next, tarRaw{paxSize: -1}
		s.cur.typ, s.cur.size = typ, size
		s.pending, s.skip = true, 0
		s.sparseExt = typ == 'S' && b[482] != 0
	}
}

// parsePAX reads the records of a complete PAX header as archive/tar does
// (a later header replaces an earlier one's), refusing a key given twice:
// readers keep the first or the last.
func (s *tarScan) parsePAX() {
	if s.paxKeys == nil {
		s.paxKeys = map[string]struct{}{}
	}
	clear(s.paxKeys)
	s.next.paxSize = -1
	for rest := s.pax; len(rest) > 0; {
		sp := bytes.IndexByte(rest, ' ')
		if sp <= 0 {
			s.fail("a PAX record without a length")
			return
		}
		n, err := strconv.Atoi(string(rest[:sp]))
		if err != nil || n < 5 || n > len(rest) || n <= sp+1 || rest[n-1] != '\n' {
			s.fail("a PAX record with a wrong length")
			return
		}
		k, v, ok := bytes.Cut(rest[sp+1:n-1], []byte("="))
		if !ok || len(k) == 0 {
			s.fail("a PAX record without a key")
			return
		}
		if _, dup := s.paxKeys[string(k)]; dup {
			s.fail("the PAX record %q appears twice in one header", clip(string(k)))
			return
		}
		s.paxKeys[string(k)] = struct{}{}
		if string(k) == "size" && len(v) > 0 { // an empty value keeps the header's
			size, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || size < 0 {
				s.fail("a PAX size record that is not a size")
				return
			}
			s.next.paxSize = size
		}
		rest = rest[n:]
	}
}

// entry returns the raw view of the entry archive/tar has just returned.
func (s *tarScan) entry() (tarRaw, *Error) {
	if s.err != nil {
		return tarRaw{}, s.err
	}
	if !s.pending {
		return tarRaw{}, fail(CodeMalformed, "", "tar headers: archive/tar returned an entry the scanner did not read")
	}
	return s.cur, nil
}

// data tells the scanner that archive/tar reads n content bytes for the
// entry it returned last.
func (s *tarScan) data(n int64) {
	s.pending, s.skip = false, padded(n)
}

// end checks, once archive/tar has read the end of the archive, that no
// extension header was left without an entry.
func (s *tarScan) end() *Error {
	switch {
	case s.err != nil:
		return s.err
	case s.pending:
		return fail(CodeMalformed, "", "tar headers: an entry header archive/tar did not return")
	case s.next.nPAX+s.next.nName+s.next.nLink > 0:
		return fail(CodeMalformed, "", "tar headers: extension headers with no entry after them")
	}
	return nil
}

// padded rounds n up to whole blocks.
func padded(n int64) int64 { return n + (-n & (tarBlock - 1)) }

// tarChecksumOK checks a header's checksum as archive/tar does: the sum of
// its bytes, the checksum field counted as spaces, signed or unsigned.
func tarChecksumOK(b []byte) bool {
	want, ok := tarOctal(b[148:156])
	if !ok {
		return false
	}
	var unsigned, signed int64
	for i, c := range b {
		if i >= 148 && i < 156 {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	return want == unsigned || want == signed
}

// tarNumber parses a numeric header field as archive/tar does: octal, or
// base-256 when the high bit is set. Negative values are refused.
func tarNumber(b []byte) (int64, bool) {
	if len(b) == 0 || b[0]&0x80 == 0 {
		return tarOctal(b)
	}
	if b[0]&0x40 != 0 {
		return 0, false
	}
	var x uint64
	for i, c := range b {
		if i == 0 {
			c &= 0x7f
		}
		if x>>56 != 0 {
			return 0, false
		}
		x = x<<8 | uint64(c)
	}
	return int64(x), x>>63 == 0
}

// tarOctal parses an octal field padded with spaces or NULs.
func tarOctal(b []byte) (int64, bool) {
	b = bytes.Trim(b, " \x00")
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	x, err := strconv.ParseUint(string(b), 8, 63)
	return int64(x), err == nil
}
