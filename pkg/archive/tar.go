package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"strings"
)

const (
	tarBlock = 512
	// tarEnd is the end-of-archive marker: two zero blocks.
	tarEnd = 2 * tarBlock
)

// tarCounter sits between the gzip reader and the tar reader and counts
// every decompressed byte. While the tar reader parses headers (meta) it
// charges them to the metadata budget and asks gzip for no more than that
// budget allows, so a bomb hidden in headers or after the end of the tar
// is stopped within its budget. Content is budgeted by readContent, which
// asks the tar reader (and through it this reader) for no more than the
// content cap allows.
type tarCounter struct {
	r    io.Reader
	v    *validator
	meta bool
	// scan sees every byte the tar reader reads, as it reads it.
	scan *tarScan
	// padding is the zero fill after the last file's content, which the tar
	// reader skips before the next header; it is not metadata (it is at most
	// 511 bytes per entry, and entries are capped).
	padding int64
}

func (c *tarCounter) Read(p []byte) (int, error) {
	if c.meta {
		if allowed := c.padding + c.v.lim.MaxMetadataBytes - c.v.meta + 1; int64(len(p)) > allowed {
			p = p[:allowed]
		}
	}
	n, err := c.r.Read(p)
	c.v.produced += int64(n)
	c.scan.write(p[:n])
	if c.meta && n > 0 {
		m := int64(n)
		credit := min(m, c.padding)
		c.padding -= credit
		if e := c.v.addMeta("", m-credit); e != nil {
			return n, e
		}
	}
	return n, err
}

// tarGz validates a gzip-compressed tar: one gzip member, then a tar whose
// end-of-archive marker is followed by nothing but zeros.
func (v *validator) tarGz() error {
	var br bytes.Reader
	br.Reset(v.data)
	zr, err := gzip.NewReader(&br)
	if err != nil {
		return &Error{Code: CodeMalformed, Msg: "invalid gzip header: " + err.Error(), Err: err}
	}
	zr.Multistream(false)
	c := &tarCounter{r: zr, v: v, scan: newTarScan()}
	tr := tar.NewReader(c)
	for {
		c.meta = true
		before := v.meta
		hdr, err := tr.Next()
		if err == io.EOF {
			if v.meta-before < tarEnd {
				return fail(CodeMalformed, "", "the tar has no end-of-archive marker (truncated?)")
			}
			if err := c.scan.end(); err != nil {
				return err
			}
			break
		}
		insecure := false
		if err != nil {
			// archive/tar flags non-local names only under
			// GODEBUG=tarinsecurepath=0; the name policy below refuses them
			// with a precise code either way.
			if !errors.Is(err, tar.ErrInsecurePath) || hdr == nil {
				return readError("", err)
			}
			insecure = true
		}
		c.meta = false
		if err := v.tarEntry(tr, c, hdr); err != nil {
			return err
		}
		if insecure {
			return fail(CodeMalformed, hdr.Name, "archive/tar refuses the name")
		}
	}

	// Only zero padding may follow the end marker, up to the gzip member's
	// end (where gzip verifies its CRC and size).
	c.meta = true
	for {
		n, err := c.Read(v.buf)
		if !allZero(v.buf[:n]) {
			return fail(CodeTrailingData, "", "non-zero bytes after the end of the tar archive")
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readError("", err)
		}
	}
	if rest := v.data[len(v.data)-br.Len():]; len(rest) > 0 {
		if bytes.HasPrefix(rest, []byte{0x1f, 0x8b}) {
			return fail(CodeMultistreamGzip, "", "a second gzip member follows the first: only one is allowed")
		}
		return fail(CodeTrailingData, "", "%d bytes after the end of the gzip stream", len(rest))
	}
	return nil
}

// tarEntry applies the policy to one tar header and reads its content.
func (v *validator) tarEntry(tr *tar.Reader, c *tarCounter, hdr *tar.Header) error {
	raw := hdr.Name
	if err := v.countEntry(raw); err != nil {
		return err
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return fail(CodeSparseFile, raw, "sparse files are not allowed (PAX record %q)", clip(k))
		}
	}
	e := Entry{Mode: fs.FileMode(hdr.Mode & 0o777)}
	var k kind
	switch hdr.Typeflag {
	case tar.TypeReg:
		k = kindFile
	case tar.TypeDir:
		k, e.Dir, e.Mode = kindDir, true, e.Mode|fs.ModeDir
	case tar.TypeSymlink:
		k, e.Mode, e.Link = kindSymlink, e.Mode|fs.ModeSymlink, hdr.Linkname
	case tar.TypeLink:
		k, e.Link = kindHardlink, hdr.Linkname
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return fail(CodeSpecialFile, raw, "device and FIFO entries are not allowed")
	case tar.TypeGNUSparse:
		return fail(CodeSparseFile, raw, "sparse files are not allowed")
	case tar.TypeXGlobalHeader:
		return fail(CodeUnsupportedEntry, raw, "PAX global headers are not allowed")
	case 'V':
		return fail(CodeUnsupportedEntry, raw, "volume labels are not allowed")
	case 'M':
		return fail(CodeUnsupportedEntry, raw, "multi-volume continuations are not allowed")
	default:
		return fail(CodeUnsupportedEntry, raw, "tar entry type %q is not allowed", hdr.Typeflag)
	}
	if err := checkRawHeaders(c.scan, hdr); err != nil {
		return err
	}
	name, err := v.addEntry(raw, k, e, hdr.Linkname)
	if err != nil {
		return err
	}
	if k == kindHardlink {
		v.keepLink(name, hdr.Linkname)
	}
	if k != kindFile {
		return nil
	}
	rec := v.newRecord(name, hdr.Size)
	n, _, rerr := v.readContent(raw, tr, hdr.Size, false, false, rec)
	if rerr != nil {
		return rerr
	}
	v.keepFile(rec)
	if name == skillName {
		v.skill, v.foundSkill = rec.buf.Bytes(), true
	}
	v.entries[len(v.entries)-1].Size = n
	c.padding = -n & (tarBlock - 1)
	return nil
}

// checkRawHeaders compares the entry archive/tar returned with the headers
// as written: at most one PAX header, or at most one GNU long name and one
// long link, before it; no content declared for a type that has none; the
// size archive/tar reads the one the headers declare. It then tells the
// scanner how much content archive/tar reads.
func checkRawHeaders(s *tarScan, hdr *tar.Header) *Error {
	r, err := s.entry()
	if err != nil {
		err.Entry = clip(hdr.Name)
		return err
	}
	// A NUL type is a pre-POSIX file, which archive/tar returns as a file
	// or, for a name ending in '/', a directory.
	sameType := r.typ == hdr.Typeflag || r.typ == 0 && (hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeDir)
	switch {
	case r.nPAX > 1 || r.nName > 1 || r.nLink > 1:
		return fail(CodeMalformed, hdr.Name, "preceded by %d PAX headers, %d GNU long names and %d GNU long links: "+
			"extractors disagree on which of two alike applies", r.nPAX, r.nName, r.nLink)
	case r.nPAX > 0 && r.nName+r.nLink > 0:
		return fail(CodeMalformed, hdr.Name, "preceded by both a PAX header and a GNU long name or link: extractors disagree on which applies")
	case !sameType:
		return fail(CodeMalformed, hdr.Name, "archive/tar read type %q from a header of type %q", hdr.Typeflag, r.typ)
	}
	size := r.size
	if r.paxSize >= 0 {
		size = r.paxSize
	}
	switch hdr.Typeflag {
	case tar.TypeDir, tar.TypeSymlink, tar.TypeLink, tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		// archive/tar reads no content for these; GNU tar and others read
		// the blocks that follow as content, so they would disagree on
		// where the next header is.
		if r.size != 0 || size != 0 {
			return fail(CodeMalformed, hdr.Name, "a directory, link, device or FIFO entry declaring %d bytes of content", size)
		}
		s.data(0)
	default:
		if size != hdr.Size {
			return fail(CodeMalformed, hdr.Name, "the headers declare %d bytes of content, archive/tar reads %d", size, hdr.Size)
		}
		s.data(hdr.Size)
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
