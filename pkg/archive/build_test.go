package archive

// Builders for the archives the tests validate. Benign archives come from
// Go's own writers where they can express the case; hostile ones from the
// raw builders below, which write every header field explicitly so a test
// can make the layers disagree.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

func skillDoc(name string) string { return skilltest.SkillMD(name, "", "A test skill.") }

// file is one entry for the writers built on Go's archive packages.
type file struct {
	name   string
	body   string
	mode   fs.FileMode // for zip: becomes the Unix mode bits
	store  bool        // zip: method store
	typ    byte        // tar: type flag (0 means regular)
	link   string      // tar: link target
	pax    map[string]string
	modify func(*zip.FileHeader)
}

// goZip writes files with archive/zip (deflate and data descriptors unless
// store is set).
func goZip(t testing.TB, files ...file) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: time.Unix(1700000000, 0)}
		if f.store {
			h.Method = zip.Store
		}
		if f.mode != 0 {
			h.SetMode(f.mode)
		}
		if f.modify != nil {
			f.modify(h)
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// goTgz writes files with archive/tar and compress/gzip.
func goTgz(t testing.TB, files ...file) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.body)),
			Linkname: f.link, ModTime: time.Unix(1700000000, 0), PAXRecords: f.pax}
		if f.typ != 0 {
			h.Typeflag = f.typ
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar header %q: %v", f.name, err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func deflate(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// --- raw tar ---

// tarRec is one raw tar header (and content) written field by field.
type tarRec struct {
	name string
	typ  byte
	body string
	link string
	size int64 // declared size when body is empty and size > 0
	// sizeField, when set, is the header's size field whatever the body.
	sizeField *int64
	pax       map[string]string
	gnu       bool // GNU magic instead of ustar
	// nulType writes the typeflag NUL, as pre-POSIX tars did for files.
	nulType bool
}

func octal(dst []byte, v int64) {
	copy(dst, fmt.Sprintf("%0*o\x00", len(dst)-1, v))
}

func tarHeader(name string, typ byte, size int64, link string, gnu bool) []byte {
	b := make([]byte, tarBlock)
	copy(b[0:100], name)
	octal(b[100:108], 0o644)
	octal(b[108:116], 0)
	octal(b[116:124], 0)
	octal(b[124:136], size)
	octal(b[136:148], 1700000000)
	b[156] = typ
	copy(b[157:257], link)
	if gnu {
		copy(b[257:265], "ustar  \x00")
	} else {
		copy(b[257:265], "ustar\x0000")
	}
	copy(b[148:156], "        ")
	var sum int64
	for _, c := range b {
		sum += int64(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func padBlock(b []byte) []byte {
	if r := len(b) % tarBlock; r != 0 {
		b = append(b, make([]byte, tarBlock-r)...)
	}
	return b
}

func paxData(recs map[string]string) []byte {
	var out []byte
	for k, v := range recs {
		out = append(out, paxRecord(k, v)...)
	}
	return out
}

// paxRecord is one PAX record, "<length> <key>=<value>\n".
func paxRecord(k, v string) string {
	rec := " " + k + "=" + v + "\n"
	// The length counts its own digits: 9 bytes of record make "11 ...".
	digits := len(fmt.Sprint(len(rec)))
	for len(fmt.Sprint(len(rec)+digits)) != digits {
		digits++
	}
	return fmt.Sprintf("%d%s", len(rec)+digits, rec)
}

// Extension headers for rawTar: a PAX extended header and GNU long-name
// and long-link records, each a record of its own so a test can stack them.
func paxHdr(recs ...string) tarRec {
	return tarRec{name: "PaxHeaders/x", typ: 'x', body: strings.Join(recs, "")}
}
func longName(name string) tarRec {
	return tarRec{name: "././@LongLink", typ: 'L', body: name + "\x00", gnu: true}
}
func longLink(link string) tarRec {
	return tarRec{name: "././@LongLink", typ: 'K', body: link + "\x00", gnu: true}
}

// rawTar writes records, then the end marker unless noEnd, then trailing.
func rawTar(recs []tarRec, noEnd bool, trailing []byte) []byte {
	var out []byte
	for _, r := range recs {
		if r.pax != nil {
			d := paxData(r.pax)
			out = append(out, tarHeader("PaxHeaders/x", 'x', int64(len(d)), "", false)...)
			out = padBlock(append(out, d...))
		}
		typ := r.typ
		if typ == 0 && !r.nulType {
			typ = '0'
		}
		size := int64(len(r.body))
		if size == 0 {
			size = r.size
		}
		if r.sizeField != nil {
			size = *r.sizeField
		}
		out = append(out, tarHeader(r.name, typ, size, r.link, r.gnu)...)
		out = padBlock(append(out, r.body...))
	}
	if !noEnd {
		out = append(out, make([]byte, tarEnd)...)
	}
	return append(out, trailing...)
}

// --- raw zip ---

// zipRec is one entry written field by field; the override fields make the
// local header, the central record or the descriptor say something else.
type zipRec struct {
	name       string
	body       string
	method     uint16 // 0 store, 8 deflate (compressed here), others stored as is
	flags      uint16
	creator    uint16 // version made by (high byte: system)
	extAttr    uint32
	descriptor bool   // flag bit 3, zero local CRC/sizes, descriptor with signature
	noDescSig  bool   // descriptor without its optional signature
	zip64Local bool   // local sizes 0xffffffff with a zip64 extra
	compressed []byte // raw data to store instead of compressing body

	localName    *string
	localFlags   *uint16
	localCRC     *uint32
	declared     *uint32 // size declared in both headers (a lie about the content)
	centralCRC   *uint32
	centralUsize *uint32
	centralCsize *uint32
	descCRC      *uint32
	localExtra   []byte
	centralExtra []byte
	offset       *uint32 // central offset override (overlaps)
	noLocal      bool    // write only the central record
	after        []byte  // bytes written after this entry's local record
}

type zipOpt struct {
	prefix   []byte
	beforeCD []byte
	comment  string
	trailing []byte
	zip64End bool    // write zip64 end records and saturate the end record
	count    *uint16 // end record entry count override
}

func ptr[T any](v T) *T { return &v }

func put16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func put32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func put64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func rawZip(t testing.TB, recs []zipRec, opt zipOpt) []byte {
	t.Helper()
	out := append([]byte(nil), opt.prefix...)
	type done struct {
		r                         zipRec
		crc, csize, usize, offset uint32
		flags                     uint16
	}
	var written []done
	for _, r := range recs {
		data := r.compressed
		if data == nil {
			data = []byte(r.body)
			if r.method == methodDeflate {
				data = deflate(t, data)
			}
		}
		crc := crc32.ChecksumIEEE([]byte(r.body))
		flags := r.flags
		if r.descriptor {
			flags |= flagDescriptor
		}
		d := done{r: r, crc: crc, csize: uint32(len(data)), usize: uint32(len(r.body)), offset: uint32(len(out)), flags: flags}
		if r.declared != nil {
			d.usize = *r.declared
		}
		if !r.noLocal {
			name := r.name
			if r.localName != nil {
				name = *r.localName
			}
			lf := flags
			if r.localFlags != nil {
				lf = *r.localFlags
			}
			lcrc, lcs, lus := crc, d.csize, d.usize
			if r.localCRC != nil {
				lcrc = *r.localCRC
			}
			if r.descriptor {
				lcrc, lcs, lus = 0, 0, 0
			}
			extra := r.localExtra
			if r.zip64Local {
				extra = put64(put64(put32(nil, 0x0001|16<<16), uint64(lus)), uint64(lcs))
				lcs, lus = sat32, sat32
			}
			out = put32(out, sigLocal)
			out = put16(out, 20)
			out = put16(out, lf)
			out = put16(out, r.method)
			out = put16(out, 0)
			out = put16(out, 0x5821)
			out = put32(out, lcrc)
			out = put32(out, lcs)
			out = put32(out, lus)
			out = put16(out, uint16(len(name)))
			out = put16(out, uint16(len(extra)))
			out = append(out, name...)
			out = append(out, extra...)
			out = append(out, data...)
			if r.descriptor {
				dcrc := crc
				if r.descCRC != nil {
					dcrc = *r.descCRC
				}
				if !r.noDescSig {
					out = put32(out, sigDesc)
				}
				out = put32(out, dcrc)
				if r.zip64Local {
					out = put64(put64(out, uint64(d.csize)), uint64(d.usize))
				} else {
					out = put32(put32(out, d.csize), d.usize)
				}
			}
		}
		out = append(out, r.after...)
		written = append(written, d)
	}
	out = append(out, opt.beforeCD...)
	cdOffset := len(out)
	for _, d := range written {
		r := d.r
		crc, cs, us, off := d.crc, d.csize, d.usize, d.offset
		if r.centralCRC != nil {
			crc = *r.centralCRC
		}
		if r.centralUsize != nil {
			us = *r.centralUsize
		}
		if r.centralCsize != nil {
			cs = *r.centralCsize
		}
		if r.offset != nil {
			off = *r.offset
		}
		out = put32(out, sigCentral)
		out = put16(out, r.creator)
		out = put16(out, 20)
		out = put16(out, d.flags)
		out = put16(out, r.method)
		out = put16(out, 0)
		out = put16(out, 0x5821)
		out = put32(out, crc)
		out = put32(out, cs)
		out = put32(out, us)
		out = put16(out, uint16(len(r.name)))
		out = put16(out, uint16(len(r.centralExtra)))
		out = put16(out, 0)
		out = put16(out, 0)
		out = put16(out, 0)
		out = put32(out, r.extAttr)
		out = put32(out, off)
		out = append(out, r.name...)
		out = append(out, r.centralExtra...)
	}
	cdSize := len(out) - cdOffset
	n := uint16(len(written))
	if opt.count != nil {
		n = *opt.count
	}
	if opt.zip64End {
		rec := len(out)
		out = put32(out, sigEnd64)
		out = put64(out, lenEnd64-12)
		out = put16(out, 45)
		out = put16(out, 45)
		out = put32(out, 0)
		out = put32(out, 0)
		out = put64(out, uint64(n))
		out = put64(out, uint64(n))
		out = put64(out, uint64(cdSize))
		out = put64(out, uint64(cdOffset))
		out = put32(out, sigLoc64)
		out = put32(out, 0)
		out = put64(out, uint64(rec))
		out = put32(out, 1)
	}
	out = put32(out, sigEnd)
	out = put16(out, 0)
	out = put16(out, 0)
	if opt.zip64End {
		out = put16(put16(out, sat16), sat16)
		out = put32(put32(out, sat32), sat32)
	} else {
		out = put16(put16(out, n), n)
		out = put32(put32(out, uint32(cdSize)), uint32(cdOffset))
	}
	out = put16(out, uint16(len(opt.comment)))
	out = append(out, opt.comment...)
	return append(out, opt.trailing...)
}

// localRecord returns the bytes of r's local record as rawZip writes it.
func localRecord(t testing.TB, r zipRec) []byte {
	t.Helper()
	b := rawZip(t, []zipRec{r}, zipOpt{})
	return b[:bytes.LastIndex(b, []byte("PK\x01\x02"))]
}

// unixAttr is the external attribute of a Unix creator with mode bits m.
func unixAttr(m uint32) uint32 { return m << 16 }

const creatorUnix = 3<<8 | 20

// many returns n small files beside SKILL.md.
func many(n int, dir string) []file {
	files := []file{{name: "SKILL.md", body: skillDoc("many")}}
	for i := range n {
		files = append(files, file{name: fmt.Sprintf("%sf%04d.txt", dir, i), body: strings.Repeat("x", i%50)})
	}
	return files
}
