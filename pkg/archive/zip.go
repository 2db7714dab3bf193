package archive

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// The zip records this parser reads (APPNOTE.TXT 6.3), by signature.
const (
	sigLocal   = 0x04034b50
	sigCentral = 0x02014b50
	sigEnd     = 0x06054b50
	sigEnd64   = 0x06064b50
	sigLoc64   = 0x07064b50
	sigDesc    = 0x08074b50

	lenLocal   = 30
	lenCentral = 46
	lenEnd     = 22
	lenEnd64   = 56
	lenLoc64   = 20

	extraZip64       = 0x0001
	extraUnicodePath = 0x7075 // Info-ZIP: a UTF-8 name unzip prefers over the header's

	flagEncrypted       = 0x0001
	flagDescriptor      = 0x0008
	flagStrongEncrypted = 0x0040
	flagUTF8            = 0x0800 // the name and comment are UTF-8, not CP437
	flagMaskedHeaders   = 0x2000 // the central directory itself is encrypted

	methodStore   = 0
	methodDeflate = 8
	methodAES     = 99

	sat16 = 0xffff
	sat32 = 0xffffffff
)

// Unix file types in the high half of the external attributes, and the
// Windows reparse-point attribute (symlinks, junctions) in the low half.
const (
	unixTypeMask    = 0xf000
	unixFIFO        = 0x1000
	unixChar        = 0x2000
	unixDir         = 0x4000
	unixBlock       = 0x6000
	unixRegular     = 0x8000
	unixSymlink     = 0xa000
	unixSocket      = 0xc000
	dosDir          = 0x10
	dosReparsePt    = 0x400
	defaultFilePerm = 0o644
	defaultDirPerm  = 0o755
)

// zipEntry is one central directory record, resolved through zip64 extras.
type zipEntry struct {
	raw     string
	flags   uint16
	method  uint16
	crc     uint32
	csize   uint64
	usize   uint64
	offset  uint64
	dir     bool
	mode    fs.FileMode
	dataAt  uint64 // first byte of the entry's data
	zip64   bool   // the local header carries a zip64 extra
	lengths uint64 // header + name + extra + comment bytes of the central record
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// zip validates a zip archive: its layout must be exactly local records
// (header, data, optional descriptor) from offset 0, then the central
// directory, then the optional zip64 end records, then the end record.
func (v *validator) zip() error {
	d := v.data
	size := uint64(len(d))
	end, err := findEnd(d)
	if err != nil {
		return err
	}
	if err := v.addMeta("", int64(size-end)); err != nil {
		return err
	}
	disk, cdDisk := uint64(le16(d[end+4:])), uint64(le16(d[end+6:]))
	nThis, nTotal := uint64(le16(d[end+8:])), uint64(le16(d[end+10:]))
	cdSize, cdOffset := uint64(le32(d[end+12:])), uint64(le32(d[end+16:]))
	cdEnd := end // where the central directory must stop

	if end >= lenLoc64 && le32(d[end-lenLoc64:]) == sigLoc64 {
		loc := end - lenLoc64
		rec := le64(d[loc+8:])
		if le32(d[loc+4:]) != 0 || le32(d[loc+16:]) > 1 || rec > loc || loc-rec < lenEnd64 || le32(d[rec:]) != sigEnd64 {
			return fail(CodeMalformed, "", "invalid zip64 end of central directory locator")
		}
		if le64(d[rec+4:]) != loc-rec-12 {
			return fail(CodeMalformed, "", "the zip64 end record does not end at its locator")
		}
		if err := v.addMeta("", int64(loc-rec+lenLoc64)); err != nil {
			return err
		}
		r := d[rec:]
		z := [...]struct{ short, long, sat uint64 }{
			{disk, uint64(le32(r[16:])), sat16}, {cdDisk, uint64(le32(r[20:])), sat16},
			{nThis, le64(r[24:]), sat16}, {nTotal, le64(r[32:]), sat16},
			{cdSize, le64(r[40:]), sat32}, {cdOffset, le64(r[48:]), sat32},
		}
		for _, f := range z {
			if f.short != f.long && f.short != f.sat {
				return fail(CodeHeaderMismatch, "", "the end record and the zip64 end record disagree")
			}
		}
		disk, cdDisk, nThis, nTotal, cdSize, cdOffset = z[0].long, z[1].long, z[2].long, z[3].long, z[4].long, z[5].long
		cdEnd = rec
	} else if nTotal == sat16 || cdSize == sat32 || cdOffset == sat32 {
		return fail(CodeMalformed, "", "the end record needs a zip64 end record, and there is none")
	}
	if disk != 0 || cdDisk != 0 || nThis != nTotal {
		return fail(CodeMalformed, "", "multi-disk archives are not supported")
	}
	if nTotal > uint64(v.lim.MaxEntries) {
		return fail(CodeTooManyEntries, "", "the archive declares %d entries, more than max_entries (%d)", nTotal, v.lim.MaxEntries)
	}
	switch {
	case cdOffset > cdEnd || cdSize > cdEnd-cdOffset:
		return fail(CodeMalformed, "", "the central directory runs past the end record")
	case cdOffset+cdSize < cdEnd:
		return fail(CodeHiddenData, "", "%d bytes between the central directory and the end record", cdEnd-cdOffset-cdSize)
	}
	if err := checkTail(d, cdEnd, end); err != nil {
		return err
	}

	entries := make([]zipEntry, 0, nTotal)
	for p, i := cdOffset, uint64(0); i < nTotal; i++ {
		e, n, err := parseCentral(d[p:cdEnd])
		if err != nil {
			return err
		}
		if err := v.addMeta(e.raw, int64(n)); err != nil {
			return err
		}
		entries = append(entries, e)
		p += n
		if i == nTotal-1 && p != cdEnd {
			return fail(CodeMalformed, "", "the central directory holds more than the %d entries the end record declares", nTotal)
		}
	}
	if nTotal == 0 && cdSize != 0 {
		return fail(CodeMalformed, "", "the central directory holds more than the 0 entries the end record declares")
	}

	// Physical order: the records must tile [0, cdOffset) exactly, which
	// refuses prefixes, gaps and overlaps (several central records sharing
	// one compressed kernel is how Fifield's bombs work).
	slices.SortStableFunc(entries, func(a, b zipEntry) int {
		switch {
		case a.offset < b.offset:
			return -1
		case a.offset > b.offset:
			return 1
		}
		return 0
	})
	for i := 1; i < len(entries); i++ {
		if entries[i].offset == entries[i-1].offset {
			return fail(CodeOverlapping, entries[i].raw, "shares its local record with %q", clip(entries[i-1].raw))
		}
	}
	var next uint64
	for i := range entries {
		e := &entries[i]
		switch {
		case e.offset >= cdOffset:
			return fail(CodeOverlapping, e.raw, "its local header would lie inside the central directory")
		case i == 0 && e.offset != 0:
			return fail(CodeLeadingData, e.raw, "%d bytes before the first local header", e.offset)
		case e.offset < next:
			return fail(CodeOverlapping, e.raw, "its local record overlaps the previous entry")
		case e.offset > next:
			return fail(CodeHiddenData, e.raw, "%d bytes between entries that no entry accounts for", e.offset-next)
		}
		if err := v.countEntry(e.raw); err != nil {
			return err
		}
		boundary := cdOffset
		if i+1 < len(entries) {
			boundary = min(entries[i+1].offset, cdOffset)
		}
		end, err := v.checkLocal(e, boundary)
		if err != nil {
			return err
		}
		next = end
		k := kindFile
		if e.dir {
			k = kindDir
		}
		if _, err := v.addEntry(e.raw, k, Entry{Dir: e.dir, Mode: e.mode}, ""); err != nil {
			return err
		}
	}
	if len(entries) > 0 && next != cdOffset {
		if next > cdOffset {
			return fail(CodeOverlapping, entries[len(entries)-1].raw, "its data runs into the central directory")
		}
		return fail(CodeHiddenData, "", "%d bytes between the last entry and the central directory", cdOffset-next)
	}
	if len(entries) == 0 && cdOffset != 0 {
		return fail(CodeLeadingData, "", "%d bytes before the central directory of an empty archive", cdOffset)
	}

	// Only now is anything decompressed: every entry is read to its end and
	// its CRC-32 and size checked against the central directory.
	var br bytes.Reader
	var fr io.ReadCloser
	for i := range entries {
		e := &entries[i]
		ent := &v.entries[i]
		br.Reset(d[e.dataAt : e.dataAt+e.csize])
		var r io.Reader = &br
		if e.method == methodDeflate {
			if fr == nil {
				fr = flate.NewReader(&br)
			} else if err := fr.(flate.Resetter).Reset(&br, nil); err != nil {
				return readError(e.raw, err)
			}
			r = fr
		}
		var keep io.Writer
		var rec *fileRecord
		if !e.dir {
			rec = v.newRecord(ent.Name, int64(min(e.usize, uint64(v.contentCap))))
			keep = rec
		}
		n, crc, err := v.readContent(e.raw, r, int64(e.usize), e.method == methodDeflate, true, keep)
		if err != nil {
			return err
		}
		switch {
		case uint64(n) != e.usize:
			return fail(CodeSizeMismatch, e.raw, "inflates to %d bytes, the central directory says %d", n, e.usize)
		case crc != e.crc:
			return fail(CodeChecksumMismatch, e.raw, "CRC-32 is %08x, the central directory says %08x", crc, e.crc)
		case br.Len() != 0:
			return fail(CodeHiddenData, e.raw, "%d bytes follow the end of its deflate stream", br.Len())
		case e.dir && n != 0:
			return fail(CodeMalformed, e.raw, "a directory entry with content")
		}
		ent.Size = n
		if rec != nil {
			v.keepFile(rec)
			if ent.Name == skillName {
				v.skill, v.foundSkill = rec.buf.Bytes(), true
			}
		}
	}
	return nil
}

// findEnd locates the end of central directory record, which must end
// exactly at the end of the data (its comment included). Some parsers take
// the last signature whose comment fits, so that one must be it: an end
// record hidden in the comment, or two that reach the end, would make
// parsers disagree. Others take the last signature at all, comment or not;
// checkTail refuses those once the central directory is known.
func findEnd(d []byte) (uint64, error) {
	size := len(d)
	found, last := -1, -1
	for i := size - lenEnd; i >= 0 && i >= size-lenEnd-0xffff; i-- {
		if le32(d[i:]) != sigEnd {
			continue
		}
		stop := i + lenEnd + int(le16(d[i+20:]))
		if stop > size {
			continue // not an end record: its comment would not fit
		}
		if last < 0 {
			last = i
		}
		if stop == size {
			if found >= 0 {
				return 0, fail(CodeMalformed, "", "two end of central directory records")
			}
			found = i
		}
	}
	switch {
	case found >= 0 && found != last:
		return 0, fail(CodeMalformed, "", "the archive comment holds another end of central directory record")
	case found >= 0:
		return uint64(found), nil
	case last >= 0:
		return 0, fail(CodeTrailingData, "", "bytes follow the end of central directory record")
	}
	return 0, fail(CodeMalformed, "", "no end of central directory record")
}

// nextRecordSig returns where, at i or after, b holds the next signature
// of a zip record (any of the ones this parser reads), or -1.
func nextRecordSig(b []byte, i int) (int, uint32) {
	for i < len(b) {
		j := bytes.Index(b[i:], []byte("PK"))
		if j < 0 || i+j+4 > len(b) {
			return -1, 0
		}
		i += j
		switch sig := le32(b[i:]); sig {
		case sigLocal, sigCentral, sigEnd, sigEnd64, sigLoc64, sigDesc:
			return i, sig
		}
		i++
	}
	return -1, 0
}

// checkTail refuses any record signature in the bytes after the central
// directory (from) other than the end records chosen: the one at end and,
// when from < end, the zip64 end record at from and its locator. Extractors
// search backwards for an end record and disagree on which candidate wins
// (Python, Info-ZIP and bsdtar take one whose comment runs past the end of
// the file, which findEnd passes over), and a comment that holds local or
// central records is a second archive waiting for a lenient reader. Another
// end record signature is reported first: it is what makes readers differ.
func checkTail(d []byte, from, end uint64) error {
	tail := d[from:]
	comment := end + lenEnd - from // where the comment starts in tail
	var hidden error
	for i, sig := nextRecordSig(tail, 0); i >= 0; i, sig = nextRecordSig(tail, i+1) {
		at := from + uint64(i)
		switch {
		case sig == sigEnd && at == end,
			sig == sigEnd64 && at == from && from < end,
			sig == sigLoc64 && at == end-lenLoc64 && from < end:
			// the records chosen
		case sig == sigEnd || sig == sigEnd64 || sig == sigLoc64:
			return fail(CodeMalformed, "", "another end of central directory record signature at offset %d, after the central directory: extractors could read a different archive", at)
		case hidden != nil:
		case uint64(i) >= comment:
			hidden = fail(CodeHiddenData, "", "the archive comment holds a zip record signature (%#08x) at offset %d: extractors could read it as another archive", sig, at)
		default:
			hidden = fail(CodeHiddenData, "", "a zip record signature (%#08x) at offset %d, inside the zip64 end record", sig, at)
		}
	}
	return hidden
}

// parseCentral parses one central directory record at the start of b and
// applies the per-entry policy that needs no other record: encryption,
// methods, symlinks and special files by mode bits, zip64 fields.
func parseCentral(b []byte) (zipEntry, uint64, error) {
	if len(b) < lenCentral || le32(b) != sigCentral {
		return zipEntry{}, 0, fail(CodeMalformed, "", "invalid central directory record")
	}
	nameLen, extraLen, commentLen := uint64(le16(b[28:])), uint64(le16(b[30:])), uint64(le16(b[32:]))
	n := lenCentral + nameLen + extraLen + commentLen
	if n > uint64(len(b)) {
		return zipEntry{}, 0, fail(CodeMalformed, "", "a central directory record runs past the central directory")
	}
	e := zipEntry{
		raw:     string(b[lenCentral : lenCentral+nameLen]),
		flags:   le16(b[8:]),
		method:  le16(b[10:]),
		crc:     le32(b[16:]),
		csize:   uint64(le32(b[20:])),
		usize:   uint64(le32(b[24:])),
		offset:  uint64(le32(b[42:])),
		lengths: n,
	}
	extra := b[lenCentral+nameLen : lenCentral+nameLen+extraLen]
	if e.flags&(flagEncrypted|flagStrongEncrypted|flagMaskedHeaders) != 0 || e.method == methodAES {
		return e, 0, fail(CodeEncrypted, e.raw, "encrypted entries are not allowed")
	}
	if e.method != methodStore && e.method != methodDeflate {
		return e, 0, fail(CodeUnsupportedMethod, e.raw, "compression method %d: only store (0) and deflate (8) are allowed", e.method)
	}
	if e.flags&flagUTF8 == 0 && !isASCII(e.raw) {
		// Python and others decode it as CP437, where names that differ
		// here may meet ("Ä.md" and "Î.md" fold to one name).
		return e, 0, fail(CodeInvalidName, e.raw, "a non-ASCII name without the UTF-8 flag (general purpose bit 11), "+
			"which extractors read as CP437: re-create the archive with a UTF-8-aware tool")
	}
	fields, err := extraFields(e.raw, extra)
	if err != nil {
		return e, 0, err
	}
	diskStart := uint64(le16(b[34:]))
	if e.usize == sat32 || e.csize == sat32 || e.offset == sat32 || diskStart == sat16 {
		z, ok := fields[extraZip64]
		if !ok {
			return e, 0, fail(CodeMalformed, e.raw, "saturated sizes without a zip64 extra field")
		}
		for _, f := range []*uint64{&e.usize, &e.csize, &e.offset} {
			if *f != sat32 {
				continue
			}
			if len(z) < 8 {
				return e, 0, fail(CodeMalformed, e.raw, "zip64 extra field too short")
			}
			*f, z = le64(z), z[8:]
		}
		if diskStart == sat16 {
			if len(z) < 4 {
				return e, 0, fail(CodeMalformed, e.raw, "zip64 extra field too short")
			}
			diskStart = uint64(le32(z))
		}
	}
	if diskStart != 0 {
		return e, 0, fail(CodeMalformed, e.raw, "multi-disk archives are not supported")
	}
	if u, ok := fields[extraUnicodePath]; ok && (len(u) < 5 || string(u[5:]) != e.raw) {
		return e, 0, fail(CodeHeaderMismatch, e.raw, "its Info-ZIP Unicode path extra field names another file")
	}
	if e.method == methodStore && e.csize != e.usize {
		return e, 0, fail(CodeSizeMismatch, e.raw, "stored entry with compressed size %d and size %d", e.csize, e.usize)
	}

	// Mode bits decide, whatever system the creator byte claims: extractors
	// honour them regardless.
	ext := le32(b[38:])
	unix := ext >> 16
	e.dir = strings.HasSuffix(e.raw, "/")
	switch unix & unixTypeMask {
	case unixSymlink:
		return e, 0, fail(CodeSymlink, e.raw, "symlinks are not allowed in zip archives")
	case unixChar, unixBlock, unixFIFO, unixSocket:
		return e, 0, fail(CodeSpecialFile, e.raw, "device, FIFO and socket entries are not allowed")
	case unixDir:
		if !e.dir {
			return e, 0, fail(CodeMalformed, e.raw, "mode bits say directory but the name does not end with '/'")
		}
	}
	if ext&dosReparsePt != 0 {
		return e, 0, fail(CodeSymlink, e.raw, "Windows reparse points (symlinks, junctions) are not allowed")
	}
	if ext&dosDir != 0 && !e.dir && unix&unixTypeMask != unixRegular {
		return e, 0, fail(CodeMalformed, e.raw, "attributes say directory but the name does not end with '/'")
	}
	perm := fs.FileMode(unix & 0o777)
	switch {
	case unix&unixTypeMask == 0 && e.dir:
		perm = defaultDirPerm
	case unix&unixTypeMask == 0:
		perm = defaultFilePerm
	}
	e.mode = perm
	if e.dir {
		e.mode |= fs.ModeDir
	}
	return e, n, nil
}

// extraFields indexes the extra fields this parser relies on. The fields
// are otherwise opaque: writers pad local extras (zipalign), so only the
// two that change meaning must parse, and neither may appear twice.
func extraFields(name string, extra []byte) (map[uint16][]byte, error) {
	var fields map[uint16][]byte
	for len(extra) >= 4 {
		id, n := le16(extra), int(le16(extra[2:]))
		if 4+n > len(extra) {
			break
		}
		if id == extraZip64 || id == extraUnicodePath {
			if _, dup := fields[id]; dup {
				return nil, fail(CodeMalformed, name, "extra field %#04x appears twice", id)
			}
			if fields == nil {
				fields = map[uint16][]byte{}
			}
			fields[id] = extra[4 : 4+n]
		}
		extra = extra[4+n:]
	}
	return fields, nil
}

// checkLocal compares e's local header (and data descriptor) with its
// central record and returns where its local record ends. boundary is where
// the next record starts.
func (v *validator) checkLocal(e *zipEntry, boundary uint64) (uint64, error) {
	d := v.data
	if e.offset > boundary || boundary-e.offset < lenLocal || le32(d[e.offset:]) != sigLocal {
		return 0, fail(CodeMalformed, e.raw, "no local header at offset %d", e.offset)
	}
	h := d[e.offset:boundary]
	nameLen, extraLen := uint64(le16(h[26:])), uint64(le16(h[28:]))
	e.dataAt = e.offset + lenLocal + nameLen + extraLen
	if e.dataAt > boundary || e.csize > boundary-e.dataAt {
		return 0, fail(CodeOverlapping, e.raw, "its local record runs into the next record")
	}
	if string(h[lenLocal:lenLocal+nameLen]) != e.raw {
		return 0, fail(CodeHeaderMismatch, e.raw, "the local header names %q", clip(string(h[lenLocal:lenLocal+nameLen])))
	}
	flags, method := le16(h[6:]), le16(h[8:])
	if flags != e.flags || method != e.method {
		return 0, fail(CodeHeaderMismatch, e.raw, "the local header's flags or method differ from the central directory's")
	}
	fields, err := extraFields(e.raw, h[lenLocal+nameLen:lenLocal+nameLen+extraLen])
	if err != nil {
		return 0, err
	}
	if u, ok := fields[extraUnicodePath]; ok && (len(u) < 5 || string(u[5:]) != e.raw) {
		return 0, fail(CodeHeaderMismatch, e.raw, "its local Info-ZIP Unicode path extra field names another file")
	}
	crc, csize, usize := le32(h[14:]), uint64(le32(h[18:])), uint64(le32(h[22:]))
	z, zip64 := fields[extraZip64]
	e.zip64 = zip64
	if usize == sat32 || csize == sat32 {
		// APPNOTE 4.5.3: a local zip64 field holds both sizes.
		if len(z) < 16 {
			return 0, fail(CodeMalformed, e.raw, "saturated local sizes without a complete zip64 extra field")
		}
		usize, csize = le64(z), le64(z[8:])
	}
	agree := func(local, central uint64) bool {
		return local == central || (e.flags&flagDescriptor != 0 && local == 0)
	}
	if !agree(uint64(crc), uint64(e.crc)) || !agree(csize, e.csize) || !agree(usize, e.usize) {
		return 0, fail(CodeHeaderMismatch, e.raw, "the local header's CRC or sizes differ from the central directory's")
	}
	if err := v.addMeta(e.raw, int64(e.dataAt-e.offset)); err != nil {
		return 0, err
	}
	end := e.dataAt + e.csize
	if e.flags&flagDescriptor == 0 {
		return end, nil
	}
	n, err := descriptor(e, d[end:boundary])
	if err != nil {
		return 0, err
	}
	if e.method == methodStore {
		// Stored data has no end of its own: a streaming reader ends it at
		// the first descriptor signature whose CRC and size fit, or at the
		// next record, so data holding a signature reads as other entries
		// (a signature may straddle the data's end). Without one there is
		// only one reading, and Go's archive/zip, bsdtar and a piped
		// Info-ZIP zip store files this way, so only that is refused.
		if i, sig := nextRecordSig(d[e.dataAt:min(end+3, boundary)], 0); i >= 0 && uint64(i) < e.csize {
			return 0, fail(CodeHiddenData, e.raw, "stored with a data descriptor, and its data holds a zip record signature (%#08x) at byte %d, "+
				"where a streaming extractor would end the entry: deflate it, or store it with its sizes in the local header", sig, i)
		}
	}
	if err := v.addMeta(e.raw, int64(n)); err != nil {
		return 0, err
	}
	return end + n, nil
}

// descriptor finds the data descriptor at the start of b that agrees with
// the central directory: with or without its optional signature, with
// 64-bit sizes first when the local header carried a zip64 extra.
func descriptor(e *zipEntry, b []byte) (uint64, error) {
	widths := []int{4, 8}
	if e.zip64 {
		widths = []int{8, 4}
	}
	for _, sig := range []bool{true, false} {
		for _, w := range widths {
			p := 0
			if sig {
				if len(b) < 4 || le32(b) != sigDesc {
					continue
				}
				p = 4
			}
			if len(b) < p+4+2*w {
				continue
			}
			crc := le32(b[p:])
			var cs, us uint64
			if w == 8 {
				cs, us = le64(b[p+4:]), le64(b[p+12:])
			} else {
				cs, us = uint64(le32(b[p+4:])), uint64(le32(b[p+8:]))
			}
			if crc == e.crc && cs == e.csize && us == e.usize {
				return uint64(p + 4 + 2*w), nil
			}
		}
	}
	return 0, fail(CodeHeaderMismatch, e.raw, "no data descriptor agreeing with the central directory follows its data")
}
