package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// tc is one validation case: an archive built in Go, the name it is
// validated under, the limits, and the exact code expected ("" = accepted).
type tc struct {
	name  string
	file  string
	data  func(t testing.TB) []byte
	lim   Limits
	code  string
	entry string // when set, the entry the error must name
}

func runCases(t *testing.T, cases []tc) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.data(t)
			res, err := Validate(data, c.file, c.lim)
			if c.code == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if res.Skill == nil || res.Digest != digest.Of(data) || res.Size != int64(len(data)) {
					t.Fatalf("result incomplete: %+v", res)
				}
				return
			}
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("got %v (%T), want *Error with code %s", err, err, c.code)
			}
			if e.Code != c.code {
				t.Fatalf("code %s (%v), want %s", e.Code, e, c.code)
			}
			if c.entry != "" && e.Entry != c.entry {
				t.Fatalf("entry %q (%v), want %q", e.Entry, e, c.entry)
			}
			if res != nil {
				t.Fatalf("a rejection returned a result")
			}
		})
	}
}

// Shorthands: an archive of a valid SKILL.md plus the entries given.
var skill = skillDoc("x")

func zipWith(recs ...zipRec) func(testing.TB) []byte {
	return zipOptWith(zipOpt{}, recs...)
}

func zipOptWith(opt zipOpt, recs ...zipRec) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		return rawZip(t, append([]zipRec{{name: "SKILL.md", body: skill, method: methodDeflate}}, recs...), opt)
	}
}

func tgzWith(recs ...tarRec) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		return gz(t, rawTar(append([]tarRec{{name: "SKILL.md", body: skill}}, recs...), false, nil))
	}
}

func goZipWith(files ...file) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		return goZip(t, append([]file{{name: "SKILL.md", body: skill}}, files...)...)
	}
}

func goTgzWith(files ...file) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		return goTgz(t, append([]file{{name: "SKILL.md", body: skill}}, files...)...)
	}
}

func TestValidateNames(t *testing.T) {
	long := strings.Repeat("a/", 520) + "x"
	runCases(t, []tc{
		{name: "zip dot-dot", file: "s.zip", data: zipWith(zipRec{name: "../evil.sh", body: "x"}), code: CodePathTraversal, entry: "../evil.sh"},
		{name: "tar dot-dot inside", file: "s.tgz", data: tgzWith(tarRec{name: "a/../../evil", body: "x"}), code: CodePathTraversal},
		{name: "tar dot-dot directory", file: "s.tgz", data: tgzWith(tarRec{name: "../", typ: '5'}), code: CodePathTraversal},
		{name: "zip absolute", file: "s.zip", data: zipWith(zipRec{name: "/etc/cron.d/x", body: "x"}), code: CodeAbsolutePath},
		{name: "tar absolute", file: "s.tar.gz", data: tgzWith(tarRec{name: "/tmp/x", body: "x"}), code: CodeAbsolutePath},
		{name: "zip backslash traversal", file: "s.zip", data: zipWith(zipRec{name: "..\\evil.sh", body: "x"}), code: CodeBackslash},
		{name: "tar backslash", file: "s.tgz", data: tgzWith(tarRec{name: "dir\\file", body: "x"}), code: CodeBackslash},
		{name: "zip drive letter", file: "s.zip", data: zipWith(zipRec{name: "C:evil", body: "x"}), code: CodeInvalidName},
		{name: "zip NTFS stream", file: "s.zip", data: zipWith(zipRec{name: "a.txt:hidden", body: "x"}), code: CodeInvalidName},
		{name: "zip NUL", file: "s.zip", data: zipWith(zipRec{name: "a\x00.md", body: "x"}), code: CodeInvalidName},
		{name: "zip escape sequence", file: "s.zip", data: zipWith(zipRec{name: "\x1b[31mred", body: "x"}), code: CodeInvalidName},
		{name: "zip C1 control", file: "s.zip", data: zipWith(zipRec{name: "a\u0085b", body: "x"}), code: CodeInvalidName},
		{name: "zip DEL", file: "s.zip", data: zipWith(zipRec{name: "a\x7f", body: "x"}), code: CodeInvalidName},
		{name: "tar invalid UTF-8", file: "s.tgz", data: tgzWith(tarRec{name: "\xff\xfe.md", body: "x"}), code: CodeInvalidName},
		{name: "zip empty element", file: "s.zip", data: zipWith(zipRec{name: "a//b", body: "x"}), code: CodeInvalidName},
		{name: "tar dot element", file: "s.tgz", data: tgzWith(tarRec{name: "a/./b", body: "x"}), code: CodeInvalidName},
		{name: "tar file as root", file: "s.tgz", data: tgzWith(tarRec{name: "./", body: "x"}), code: CodeInvalidName},
		{name: "zip element too long", file: "s.zip", data: zipWith(zipRec{name: strings.Repeat("e", 256), body: "x"}), code: CodeNameTooLong},
		{name: "tar PAX path too long", file: "s.tgz", data: tgzWith(tarRec{name: "x", body: "x", pax: map[string]string{"path": long}}), code: CodeNameTooLong},
	})
}

// TestValidateWindowsAndMacNames: names Windows or macOS would merge with
// another, or that display as another, are refused in both formats, as
// entry names and as link targets.
func TestValidateWindowsAndMacNames(t *testing.T) {
	var cases []tc
	refuse := func(label string, names ...string) {
		for _, n := range names {
			cases = append(cases,
				tc{name: label + " in a zip name " + strconv.Quote(n), file: "s.zip", data: zipWith(zipRec{name: n, body: "x", flags: flagUTF8}), code: CodeInvalidName, entry: n},
				tc{name: label + " in a tar name " + strconv.Quote(n), file: "s.tgz", data: tgzWith(tarRec{name: n, body: "x"}), code: CodeInvalidName, entry: n})
			if strings.HasSuffix(n, "/") {
				cases[len(cases)-1].data = tgzWith(tarRec{name: n, typ: '5'})
				cases[len(cases)-2].data = zipWith(zipRec{name: n, flags: flagUTF8})
			} else {
				cases = append(cases, tc{name: label + " in a symlink target " + strconv.Quote(n), file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: n}), code: CodeInvalidName, entry: "l"})
			}
		}
	}
	// Windows drops a trailing dot or space: "SKILL.md." overwrites SKILL.md.
	refuse("trailing dot or space", "SKILL.md.", "SKILL.md ", "docs./x.md", "docs /x.md", "...", "d./", "a. .")
	refuse("a character Windows refuses", "a*b.md", "a?b.md", "a<b.md", "a>b.md", "a|b.md", `a"b.md`)
	refuse("a DOS device", "CON", "con.txt", "Aux.tar.gz", "docs/nul", "NUL/x.md", "COM1.md", "lpt9", "com0", "PRN .txt", "COM\u00b9", "lpt\u00b3.md")
	// Invisible: format characters and other default-ignorable code points.
	refuse("an invisible character", "SKILL\u200b.md", "SKILL\u200c.md", "SKILL\u200d.md", "\u202egpj.md", "a\u2060b", "\ufeffSKILL.md",
		"soft\u00adhyphen.md", "a\u034fb", "\u115f.md", "\u3164.md", "tag\U000e0041.md", "bidi\u200e.md", "a\u2064b")
	cases = append(cases,
		tc{name: "names near the refused ones", file: "s.zip", data: zipWith(
			zipRec{name: "CONSOLE.md", body: "1"}, zipRec{name: "com10", body: "2"}, zipRec{name: "lpt", body: "3"}, zipRec{name: "auxiliary.md", body: "4"},
			zipRec{name: "nul-terminated.md", body: "5"}, zipRec{name: "my notes.md", body: "6"}, zipRec{name: ".hidden", body: "7"},
			zipRec{name: "a.b.c", body: "8"}, zipRec{name: " lead", body: "9"}, zipRec{name: "docs/con-tent.md", body: "10"},
			zipRec{name: "caf\u00e9 \u65e5\u672c.md", body: "11", flags: flagUTF8}, zipRec{name: "\u0645\u0631\u062d\u0628\u0627.md", body: "12", flags: flagUTF8})},
		tc{name: "link targets near the refused ones", file: "s.tgz", data: tgzWith(
			tarRec{name: "a/l1", typ: '2', link: "../SKILL.md"}, tarRec{name: "a/l2", typ: '2', link: "./x/../y"}, tarRec{name: "a/l3", typ: '2', link: "../CONSOLE"})},
	)
	runCases(t, cases)
}

func TestValidateDuplicates(t *testing.T) {
	runCases(t, []tc{
		{name: "exact duplicate SKILL.md", file: "s.zip", data: zipWith(zipRec{name: "SKILL.md", body: skill}), code: CodeDuplicateEntry},
		{name: "case only", file: "s.zip", data: zipWith(zipRec{name: "README.md", body: "a"}, zipRec{name: "readme.md", body: "b"}), code: CodeDuplicateEntry, entry: "readme.md"},
		{name: "NFC against NFD", file: "s.tgz", data: tgzWith(tarRec{name: "caf\u00e9.md", body: "a"}, tarRec{name: "cafe\u0301.md", body: "b"}), code: CodeDuplicateEntry},
		{name: "full case folding", file: "s.tgz", data: tgzWith(tarRec{name: "Stra\u00dfe.md", body: "a"}, tarRec{name: "STRASSE.md", body: "b"}), code: CodeDuplicateEntry},
		{name: "Kelvin sign", file: "s.zip", data: zipWith(zipRec{name: "k.md", body: "a"}, zipRec{name: "\u212a.md", body: "b", flags: flagUTF8}), code: CodeDuplicateEntry},
		{name: "dot-slash spelling", file: "s.tgz", data: tgzWith(tarRec{name: "./SKILL.md", body: skill}), code: CodeDuplicateEntry},
		{name: "directory twice", file: "s.tgz", data: tgzWith(tarRec{name: "d/", typ: '5'}, tarRec{name: "D/", typ: '5'}), code: CodeDuplicateEntry},
		{name: "file then deeper file", file: "s.zip", data: zipWith(zipRec{name: "docs", body: "a"}, zipRec{name: "docs/x.md", body: "b"}), code: CodeFileDirConflict},
		{name: "deeper file then file", file: "s.zip", data: zipWith(zipRec{name: "docs/x.md", body: "b"}, zipRec{name: "Docs", body: "a"}), code: CodeFileDirConflict},
		{name: "directory then file", file: "s.tgz", data: tgzWith(tarRec{name: "a/", typ: '5'}, tarRec{name: "A", body: "x"}), code: CodeFileDirConflict},
		// Folding changes byte lengths: "İ" grows, the ligature "ﬁ" shrinks.
		{name: "folding lengthens the parent", file: "s.zip", data: zipWith(zipRec{name: "İİİİ", body: "a", flags: flagUTF8}, zipRec{name: "İİİİ/a", body: "b", flags: flagUTF8}), code: CodeFileDirConflict, entry: "İİİİ/a"},
		{name: "folding shortens the parent", file: "s.tgz", data: tgzWith(tarRec{name: "ﬁﬁﬁﬁ", body: "a"}, tarRec{name: "ﬁﬁﬁﬁ/a", body: "b"}), code: CodeFileDirConflict},
		{name: "folding lengthens a symlink parent", file: "s.tgz", data: tgzWith(tarRec{name: "ŉŉŉ", typ: '2', link: "real"}, tarRec{name: "ŉŉŉ/x", body: "x"}), code: CodeBeneathSymlink},
	})
}

// TestConflictNamesTheParentAsWritten: the message quotes the parent the
// way the archive spells it, whatever folding did to its length.
func TestConflictNamesTheParentAsWritten(t *testing.T) {
	for _, parent := range []string{"İİİİ", "ﬁﬁﬁﬁ", "a/İİ"} {
		data := zipWith(zipRec{name: parent, body: "a", flags: flagUTF8}, zipRec{name: parent + "/deeper/x", body: "b", flags: flagUTF8})(t)
		_, err := Validate(data, "s.zip", Limits{})
		e, ok := AsError(err)
		if !ok || e.Code != CodeFileDirConflict || !strings.Contains(e.Msg, strconv.Quote(parent)) {
			t.Errorf("parent %q: error %v, want %s quoting the parent", parent, err, CodeFileDirConflict)
		}
	}
}

func TestValidateZipLinksAndModes(t *testing.T) {
	runCases(t, []tc{
		{name: "unix symlink", file: "s.zip", data: zipWith(zipRec{name: "l", body: "/etc/passwd", creator: creatorUnix, extAttr: unixAttr(0o120777)}), code: CodeSymlink, entry: "l"},
		{name: "symlink bits under an MS-DOS creator", file: "s.zip", data: zipWith(zipRec{name: "l", body: "../x", creator: 20, extAttr: unixAttr(0o120777)}), code: CodeSymlink},
		{name: "symlink bits under an NTFS creator", file: "s.zip", data: zipWith(zipRec{name: "l", body: "x", creator: 10<<8 | 20, extAttr: unixAttr(0o120644)}), code: CodeSymlink},
		{name: "windows reparse point", file: "s.zip", data: zipWith(zipRec{name: "j", body: "x", creator: 10<<8 | 20, extAttr: dosReparsePt | 0x20}), code: CodeSymlink},
		{name: "character device", file: "s.zip", data: zipWith(zipRec{name: "tty", creator: creatorUnix, extAttr: unixAttr(0o020644)}), code: CodeSpecialFile},
		{name: "fifo", file: "s.zip", data: zipWith(zipRec{name: "p", creator: creatorUnix, extAttr: unixAttr(0o010644)}), code: CodeSpecialFile},
		{name: "socket", file: "s.zip", data: zipWith(zipRec{name: "s", creator: creatorUnix, extAttr: unixAttr(0o140644)}), code: CodeSpecialFile},
		{name: "directory bits without slash", file: "s.zip", data: zipWith(zipRec{name: "d", creator: creatorUnix, extAttr: unixAttr(0o040755)}), code: CodeMalformed},
	})
}

// TestValidateZipNameEncoding: without general purpose bit 11 a zip name
// is CP437 to Python and others, so names distinct in UTF-8 may meet once
// decoded ("Ä.md" and "Î.md" become "├ä.md" and "├Ä.md", equal after case
// folding); a non-ASCII name must carry the flag.
func TestValidateZipNameEncoding(t *testing.T) {
	runCases(t, []tc{
		{name: "a non-ASCII name without the UTF-8 flag", file: "s.zip", data: zipWith(zipRec{name: "r\u00e9sum\u00e9.md", body: "x"}), code: CodeInvalidName, entry: "r\u00e9sum\u00e9.md"},
		{name: "names that collide as CP437", file: "s.zip", data: zipWith(zipRec{name: "\u00c4.md", body: "1"}, zipRec{name: "\u00ce.md", body: "2"}), code: CodeInvalidName, entry: "\u00c4.md"},
		{name: "a non-ASCII directory without the UTF-8 flag", file: "s.zip", data: zipWith(zipRec{name: "\u65e5\u672c/"}), code: CodeInvalidName},
		{name: "the flag in the central record only", file: "s.zip", data: zipWith(zipRec{name: "\u00e9.md", body: "x", flags: flagUTF8, localFlags: ptr(uint16(0))}), code: CodeHeaderMismatch},
		{name: "non-ASCII names with the UTF-8 flag", file: "s.zip", data: zipWith(zipRec{name: "\u00c4.md", body: "1", flags: flagUTF8}, zipRec{name: "\u00ce.md", body: "2", flags: flagUTF8})},
		{name: "ASCII names with and without the flag", file: "s.zip", data: zipWith(zipRec{name: "a.md", body: "1", flags: flagUTF8}, zipRec{name: "b.md", body: "2"})},
		{name: "Go's writer flags non-ASCII names", file: "s.zip", data: goZipWith(file{name: "\u00c4.md", body: "1"}, file{name: "\u00ce.md", body: "2"})},
	})
}

func TestValidateZipEncryptionAndMethods(t *testing.T) {
	aes := []byte{0x01, 0x99, 7, 0, 2, 0, 'A', 'E', 3, 8, 0}
	runCases(t, []tc{
		{name: "traditional encryption", file: "s.zip", data: zipWith(zipRec{name: "secret", body: "x", method: methodDeflate, flags: flagEncrypted}), code: CodeEncrypted, entry: "secret"},
		{name: "strong encryption", file: "s.zip", data: zipWith(zipRec{name: "secret", body: "x", flags: flagEncrypted | flagStrongEncrypted}), code: CodeEncrypted},
		{name: "masked central directory", file: "s.zip", data: zipWith(zipRec{name: "secret", body: "x", flags: flagMaskedHeaders}), code: CodeEncrypted},
		{name: "AES method 99", file: "s.zip", data: zipWith(zipRec{name: "secret", body: "x", method: methodAES, centralExtra: aes, localExtra: aes}), code: CodeEncrypted},
		{name: "bzip2", file: "s.zip", data: zipWith(zipRec{name: "b", body: "x", method: 12}), code: CodeUnsupportedMethod},
		{name: "LZMA", file: "s.zip", data: zipWith(zipRec{name: "b", body: "x", method: 14}), code: CodeUnsupportedMethod},
		{name: "implode", file: "s.zip", data: zipWith(zipRec{name: "b", body: "x", method: 6}), code: CodeUnsupportedMethod},
	})
}

func TestValidateZipLayout(t *testing.T) {
	skillRec := zipRec{name: "SKILL.md", body: skill, method: methodDeflate}
	fullOverlap := func(t testing.TB) []byte {
		// Fifield's full overlap: many central records, one compressed kernel.
		recs := []zipRec{skillRec, {name: "k0", body: strings.Repeat("A", 1<<16), method: methodDeflate}}
		k := uint32(len(localRecord(t, skillRec)))
		for _, n := range []string{"k1", "k2", "k3"} {
			recs = append(recs, zipRec{name: n, body: strings.Repeat("A", 1<<16), method: methodDeflate, noLocal: true, offset: ptr(k)})
		}
		return rawZip(t, recs, zipOpt{})
	}
	quotedOverlap := func(t testing.TB) []byte {
		// Fifield's quoted overlap: a stored entry whose data quotes the
		// next entry's local header, so both reach the same kernel.
		kernel := zipRec{name: "b", body: strings.Repeat("B", 1<<16), method: methodDeflate}
		quoted := localRecord(t, kernel)
		a := zipRec{name: "a", body: string(quoted), method: methodStore}
		at := uint32(len(localRecord(t, skillRec)) + lenLocal + len("a"))
		kernel.noLocal, kernel.offset = true, ptr(at)
		return rawZip(t, []zipRec{skillRec, a, kernel}, zipOpt{})
	}
	fakeLocal := func(t testing.TB) []byte {
		return rawZip(t, []zipRec{skillRec}, zipOpt{prefix: localRecord(t, zipRec{name: "junk", body: "unlisted"})})
	}
	unicodePath := append([]byte{0x75, 0x70, byte(5 + len("../evil")), 0, 1}, crc32LE("a.txt")...)
	unicodePath = append(unicodePath, "../evil"...)
	runCases(t, []tc{
		{name: "full overlap", file: "s.zip", data: fullOverlap, code: CodeOverlapping},
		{name: "quoted overlap", file: "s.zip", data: quotedOverlap, code: CodeOverlapping, entry: "a"},
		{name: "local header offset inside the central directory", file: "s.zip", data: zipWith(zipRec{name: "a", body: "a", noLocal: true, offset: ptr(uint32(1 << 20))}), code: CodeOverlapping, entry: "a"},
		{name: "data runs into central directory", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", centralCsize: ptr(uint32(40)), declared: ptr(uint32(40))}), code: CodeOverlapping},
		{name: "local name differs", file: "s.zip", data: zipWith(zipRec{name: "a.txt", body: "x", localName: ptr("b.txt")}), code: CodeHeaderMismatch, entry: "a.txt"},
		{name: "local CRC differs", file: "s.zip", data: zipWith(zipRec{name: "a.txt", body: "x", localCRC: ptr(uint32(1))}), code: CodeHeaderMismatch},
		{name: "local flags differ", file: "s.zip", data: zipWith(zipRec{name: "a.txt", body: "x", localFlags: ptr(uint16(0x800))}), code: CodeHeaderMismatch},
		{name: "descriptor disagrees", file: "s.zip", data: zipWith(zipRec{name: "a.txt", body: "x", method: methodDeflate, descriptor: true, descCRC: ptr(uint32(7))}), code: CodeHeaderMismatch},
		{name: "unicode path extra names another file", file: "s.zip", data: zipWith(zipRec{name: "a.txt", body: "x", centralExtra: unicodePath}), code: CodeHeaderMismatch},
		{name: "unlisted local record before the first", file: "s.zip", data: fakeLocal, code: CodeLeadingData},
		{name: "self-extractor stub", file: "s.zip", data: func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec}, zipOpt{prefix: []byte("#!/bin/sh\nexec unzip \"$0\"\n")})
		}, code: CodeFormatMismatch},
		{name: "bytes after end record", file: "s.zip", data: zipOptWith(zipOpt{trailing: []byte("appended payload")}), code: CodeTrailingData},
		{name: "bytes between entries", file: "s.zip", data: func(t testing.TB) []byte {
			r := skillRec
			r.after = []byte("hidden")
			return rawZip(t, []zipRec{r, {name: "b", body: "b"}}, zipOpt{})
		}, code: CodeHiddenData},
		{name: "bytes before central directory", file: "s.zip", data: zipOptWith(zipOpt{beforeCD: []byte("hidden")}), code: CodeHiddenData},
		{name: "bytes after the deflate stream", file: "s.zip", data: func(t testing.TB) []byte {
			c := append(deflate(t, []byte("hello")), "stash"...)
			return rawZip(t, []zipRec{skillRec, {name: "h", body: "hello", method: methodDeflate, compressed: c}}, zipOpt{})
		}, code: CodeHiddenData, entry: "h"},
		{name: "end record undercounts", file: "s.zip", data: zipOptWith(zipOpt{count: ptr(uint16(1))}, zipRec{name: "b", body: "b"}), code: CodeMalformed},
		{name: "two end records", file: "s.zip", data: func(t testing.TB) []byte {
			inner := rawZip(t, []zipRec{skillRec}, zipOpt{})
			end := inner[len(inner)-lenEnd:]
			// A comment that is itself an end record, reaching the end too.
			fake := append(append([]byte(nil), end[:20]...), 0, 0)
			b := append(inner[:len(inner)-2], byte(len(fake)), 0)
			return append(b, fake...)
		}, code: CodeMalformed},
		{name: "an end record hidden in the comment", file: "s.zip", data: func(t testing.TB) []byte {
			// Parsers that take the last signature whose comment fits would
			// read the fake record; this one would read the real one.
			inner := rawZip(t, []zipRec{skillRec}, zipOpt{})
			fake := append(append([]byte(nil), inner[len(inner)-lenEnd:len(inner)-2]...), 0, 0)
			fake = append(fake, "tail"...)
			b := append(inner[:len(inner)-2], byte(len(fake)), 0)
			return append(b, fake...)
		}, code: CodeMalformed},
		{name: "no end record", file: "s.zip", data: func(t testing.TB) []byte {
			b := rawZip(t, []zipRec{skillRec}, zipOpt{})
			return b[:len(b)-lenEnd]
		}, code: CodeMalformed},
	})
}

// TestValidateZipTail: nothing after the central directory but the end
// records chosen, and no record of any kind inside the archive comment,
// where Python, Info-ZIP and bsdtar find a second archive.
func TestValidateZipTail(t *testing.T) {
	skillRec := zipRec{name: "SKILL.md", body: skill, method: methodDeflate}
	// hidden is a complete zip whose end record's comment length runs past
	// the end of whatever holds it: it "does not fit", yet extractors that
	// take the last end record signature read it.
	hidden := func(t testing.TB) string {
		inner := rawZip(t, []zipRec{{name: "SKILL.md", body: skillDoc("other"), method: methodDeflate}, {name: "../../escape.txt", body: "x"}}, zipOpt{})
		return string(put16(inner[:len(inner)-2], 0xffff))
	}
	inComment := func(sig uint32) func(testing.TB) []byte {
		return func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec}, zipOpt{comment: "built " + string(put32(nil, sig)) + " by a tool"})
		}
	}
	runCases(t, []tc{
		{name: "a second zip in the comment", file: "s.zip", data: func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec}, zipOpt{comment: hidden(t)})
		}, code: CodeMalformed},
		{name: "a second zip in the comment of a zip64 archive", file: "s.zip", data: func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec}, zipOpt{zip64End: true, comment: hidden(t)})
		}, code: CodeMalformed},
		{name: "an end record signature in the comment", file: "s.zip", data: inComment(sigEnd), code: CodeMalformed},
		{name: "a zip64 end record signature in the comment", file: "s.zip", data: inComment(sigEnd64), code: CodeMalformed},
		{name: "a zip64 locator signature in the comment", file: "s.zip", data: inComment(sigLoc64), code: CodeMalformed},
		{name: "a local header signature in the comment", file: "s.zip", data: inComment(sigLocal), code: CodeHiddenData},
		{name: "a central record signature in the comment", file: "s.zip", data: inComment(sigCentral), code: CodeHiddenData},
		{name: "a data descriptor signature in the comment", file: "s.zip", data: inComment(sigDesc), code: CodeHiddenData},
		{name: "an end record signature spelt by the comment length", file: "s.zip", data: func(t testing.TB) []byte {
			// A comment of 0x4b50 bytes starting 05 06: "PK\x05\x06" at the
			// comment length field, after the real signature.
			return rawZip(t, []zipRec{skillRec}, zipOpt{comment: "\x05\x06" + strings.Repeat("\x00", 0x4b50-2)})
		}, code: CodeMalformed},
		{name: "a commit id as the comment, as git archive writes", file: "s.zip", data: zipOptWith(zipOpt{comment: "26802768be0f880c8e82cb8a50a46cd2d135ad0c"})},
		{name: "a zip64 archive with a comment", file: "s.zip", data: zipOptWith(zipOpt{zip64End: true, comment: "PK, but no record"}, zipRec{name: "a", body: "a"})},
	})
}

// TestValidateZipStoredDescriptors: a stored entry whose sizes come only
// after its data (flag bit 3) ends, for a streaming reader, at the first
// descriptor signature whose CRC and size fit, or at the next record; data
// holding a record signature reads as other entries. Data without one is
// unambiguous, and Go's archive/zip, bsdtar and a piped Info-ZIP zip write
// every stored file this way.
func TestValidateZipStoredDescriptors(t *testing.T) {
	prefix := "prefix"
	fakeDesc := string(put32(put32(put32(put32(nil, sigDesc), crc32.ChecksumIEEE([]byte(prefix))), uint32(len(prefix))), uint32(len(prefix))))
	evilSkill := string(localRecord(t, zipRec{name: "SKILL.md", body: skillDoc("other")}))
	stored := func(body string) zipRec {
		return zipRec{name: "notes.bin", body: body, method: methodStore, descriptor: true}
	}
	// straddling ends in "PK\x07" and its CRC-32 starts with 08: without its
	// signature, the descriptor completes a descriptor signature.
	straddling := "PK\x07"
	for i := 0; crc32.ChecksumIEEE([]byte(straddling))&0xff != 0x08; i++ {
		straddling = fmt.Sprint(i, "PK\x07")
	}
	runCases(t, []tc{
		{name: "a fake descriptor and a local record in the data", file: "s.zip", data: zipWith(stored(prefix + fakeDesc + evilSkill)), code: CodeHiddenData, entry: "notes.bin"},
		{name: "a local header signature in the data", file: "s.zip", data: zipWith(stored("a" + evilSkill)), code: CodeHiddenData},
		{name: "a descriptor signature in the data", file: "s.zip", data: zipWith(stored(prefix + fakeDesc)), code: CodeHiddenData},
		{name: "a central record signature in the data", file: "s.zip", data: zipWith(stored("x" + string(put32(nil, sigCentral)))), code: CodeHiddenData},
		{name: "a signature at the very end of the data", file: "s.zip", data: zipWith(stored("xyz" + string(put32(nil, sigLocal)))), code: CodeHiddenData},
		{name: "a signature straddling the data's end", file: "s.zip", data: zipWith(zipRec{name: "n", body: straddling, descriptor: true, noDescSig: true}), code: CodeHiddenData},
		{name: "a descriptor without signature after such data", file: "s.zip", data: zipWith(zipRec{name: "n", body: "a" + evilSkill, descriptor: true, noDescSig: true}), code: CodeHiddenData},
		{name: "plain stored data with a descriptor", file: "s.zip", data: zipWith(stored("PK is not a record"), zipRec{name: "e", descriptor: true})},
		{name: "record signatures in deflated data with a descriptor", file: "s.zip", data: zipWith(zipRec{name: "n", body: prefix + fakeDesc + evilSkill, method: methodDeflate, descriptor: true})},
		{name: "record signatures in stored data without a descriptor", file: "s.zip", data: zipWith(zipRec{name: "inner.zip", body: prefix + fakeDesc + evilSkill})},
		{name: "Go's writer storing a file", file: "s.zip", data: goZipWith(file{name: "run.sh", body: "#!/bin/sh\n", store: true})},
	})
}

func crc32LE(s string) []byte { return put32(nil, crc32.ChecksumIEEE([]byte(s))) }

func TestValidateZipIntegrity(t *testing.T) {
	runCases(t, []tc{
		{name: "wrong CRC in both headers", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", method: methodDeflate, localCRC: ptr(uint32(1)), centralCRC: ptr(uint32(1))}), code: CodeChecksumMismatch, entry: "a"},
		{name: "zero CRC is still checked", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", localCRC: ptr(uint32(0)), centralCRC: ptr(uint32(0))}), code: CodeChecksumMismatch},
		{name: "declared smaller than content", file: "s.zip", data: zipWith(zipRec{name: "a", body: strings.Repeat("z", 5000), method: methodDeflate, declared: ptr(uint32(10))}), code: CodeSizeMismatch},
		{name: "declared larger than content", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", method: methodDeflate, declared: ptr(uint32(10))}), code: CodeSizeMismatch},
		{name: "stored sizes differ", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", declared: ptr(uint32(4))}), code: CodeSizeMismatch},
		{name: "corrupt deflate", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", method: methodDeflate, compressed: []byte{0xff, 0xff, 0xff}}), code: CodeMalformed},
		{name: "directory with content", file: "s.zip", data: zipWith(zipRec{name: "d/", body: "abc"}), code: CodeMalformed},
	})
}

func TestValidateTarLinks(t *testing.T) {
	runCases(t, []tc{
		{name: "symlink up and out", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "../../etc/passwd"}), code: CodeSymlinkEscape, entry: "l"},
		{name: "symlink absolute", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "/etc/passwd"}), code: CodeSymlinkEscape},
		{name: "symlink escapes from a subdirectory", file: "s.tgz", data: tgzWith(tarRec{name: "a/b/l", typ: '2', link: "../../../x"}), code: CodeSymlinkEscape},
		{name: "symlink dips out and back", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "../tmp/../x"}), code: CodeSymlinkEscape},
		{name: "symlink backslash target", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "..\\..\\x"}), code: CodeBackslash},
		{name: "symlink empty target", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2'}), code: CodeInvalidName},
		{name: "symlink to symlink", file: "s.tgz", data: tgzWith(tarRec{name: "l1", typ: '2', link: "l2"}, tarRec{name: "l2", typ: '2', link: "SKILL.md"}), code: CodeSymlinkChain, entry: "l1"},
		{name: "symlink through a directory symlink", file: "s.tgz", data: tgzWith(tarRec{name: "real/", typ: '5'}, tarRec{name: "d", typ: '2', link: "real"}, tarRec{name: "l", typ: '2', link: "d/x"}), code: CodeSymlinkChain, entry: "l"},
		{name: "symlink through a later symlink, other case", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "D/../SKILL.md"}, tarRec{name: "d", typ: '2', link: "."}), code: CodeSymlinkChain},
		{name: "symlink to itself", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "l"}), code: CodeSymlinkChain},
		{name: "symlink to the root", file: "s.tgz", data: tgzWith(tarRec{name: "here", typ: '2', link: "."}), code: CodeSymlinkLoop},
		{name: "symlink to its parent", file: "s.tgz", data: tgzWith(tarRec{name: "a/b/up", typ: '2', link: "../"}), code: CodeSymlinkLoop},
		{name: "symlink to its own directory, other case", file: "s.tgz", data: tgzWith(tarRec{name: "a/b/l", typ: '2', link: "../../A/./b"}), code: CodeSymlinkLoop},
		{name: "entry beneath an earlier symlink", file: "s.tgz", data: tgzWith(tarRec{name: "d", typ: '2', link: "real"}, tarRec{name: "d/x", body: "x"}), code: CodeBeneathSymlink, entry: "d/x"},
		{name: "entry beneath a later symlink", file: "s.tgz", data: tgzWith(tarRec{name: "d/x", body: "x"}, tarRec{name: "D", typ: '2', link: "real"}), code: CodeBeneathSymlink},
		{name: "hard link to nothing", file: "s.tgz", data: tgzWith(tarRec{name: "h", typ: '1', link: "missing"}), code: CodeHardlink},
		{name: "hard link to a later file", file: "s.tgz", data: tgzWith(tarRec{name: "h", typ: '1', link: "later"}, tarRec{name: "later", body: "x"}), code: CodeHardlink},
		{name: "hard link to a directory", file: "s.tgz", data: tgzWith(tarRec{name: "d/", typ: '5'}, tarRec{name: "h", typ: '1', link: "d"}), code: CodeHardlink},
		{name: "hard link to a symlink", file: "s.tgz", data: tgzWith(tarRec{name: "l", typ: '2', link: "SKILL.md"}, tarRec{name: "h", typ: '1', link: "l"}), code: CodeHardlink},
		{name: "hard link out of the root", file: "s.tgz", data: tgzWith(tarRec{name: "h", typ: '1', link: "../../etc/shadow"}), code: CodeHardlink},
		{name: "hard link to itself", file: "s.tgz", data: tgzWith(tarRec{name: "h", typ: '1', link: "h"}), code: CodeHardlink},
	})
}

func TestValidateTarSpecialEntries(t *testing.T) {
	runCases(t, []tc{
		{name: "character device", file: "s.tgz", data: tgzWith(tarRec{name: "tty", typ: '3'}), code: CodeSpecialFile, entry: "tty"},
		{name: "block device", file: "s.tgz", data: tgzWith(tarRec{name: "sda", typ: '4'}), code: CodeSpecialFile},
		{name: "fifo", file: "s.tgz", data: tgzWith(tarRec{name: "p", typ: '6'}), code: CodeSpecialFile},
		{name: "old GNU sparse", file: "s.tgz", data: tgzWith(tarRec{name: "big", typ: 'S', body: "data", gnu: true}), code: CodeSparseFile},
		{name: "PAX GNU sparse", file: "s.tgz", data: tgzWith(tarRec{name: "big", body: "data", pax: map[string]string{
			"GNU.sparse.numblocks": "1", "GNU.sparse.map": "0,4", "GNU.sparse.size": "60000000000"}}), code: CodeSparseFile},
		{name: "volume label", file: "s.tgz", data: tgzWith(tarRec{name: "vol", typ: 'V'}), code: CodeUnsupportedEntry},
		{name: "multi-volume continuation", file: "s.tgz", data: tgzWith(tarRec{name: "m", typ: 'M', gnu: true}), code: CodeUnsupportedEntry},
		{name: "contiguous file", file: "s.tgz", data: tgzWith(tarRec{name: "c", typ: '7', body: "x"}), code: CodeUnsupportedEntry},
		{name: "PAX global header", file: "s.tgz", data: tgzWith(tarRec{name: "pax_global_header", typ: 'g', body: string(paxData(map[string]string{"comment": "x"}))}), code: CodeUnsupportedEntry},
	})
}

// TestValidateTarHeaderStacks: archive/tar resolves stacked extension
// headers one way (a GNU long name beats a PAX path; of two alike, the last
// wins), Python, GNU tar and bsdtar others, so an entry may carry one PAX
// header, or one long name and one long link, never more. And an entry
// that has no content (directory, link, device, FIFO) must declare none:
// archive/tar reads none, GNU tar reads the blocks that follow as content.
func TestValidateTarHeaderStacks(t *testing.T) {
	evil := skillDoc("other")
	placeholder := tarRec{name: "placeholder", body: evil}
	path := func(p string) string { return paxRecord("path", p) }
	// hidden is a header and content for SKILL.md, as the content of a
	// file that only extractors reading the blocks as headers see.
	hidden := string(padBlock(append(tarHeader("SKILL.md", '0', int64(len(evil)), "", false), evil...)))
	long := strings.Repeat("long-", 30) + "x.md"
	runCases(t, []tc{
		{name: "PAX header then GNU long name", file: "s.tgz", data: tgzWith(paxHdr(path("SKILL.md")), longName("notes/benign.txt"), placeholder), code: CodeMalformed, entry: "notes/benign.txt"},
		{name: "GNU long name then PAX header", file: "s.tgz", data: tgzWith(longName("notes/benign.txt"), paxHdr(path("SKILL.md")), placeholder), code: CodeMalformed},
		{name: "two PAX headers", file: "s.tgz", data: tgzWith(paxHdr(path("SKILL.md")), paxHdr(path("notes/ok.txt")), placeholder), code: CodeMalformed},
		{name: "two GNU long names", file: "s.tgz", data: tgzWith(longName("SKILL.md"), longName("notes/ok.txt"), placeholder), code: CodeMalformed},
		{name: "two GNU long links", file: "s.tgz", data: tgzWith(longLink("SKILL.md"), longLink("docs/x"), tarRec{name: "l", typ: '2', link: "x"}), code: CodeMalformed},
		{name: "PAX header then GNU long link", file: "s.tgz", data: tgzWith(paxHdr(path("l")), longLink("SKILL.md"), tarRec{name: "l", typ: '2', link: "x"}), code: CodeMalformed},
		{name: "a PAX record given twice", file: "s.tgz", data: tgzWith(paxHdr(path("SKILL.md"), path("notes/ok.txt")), placeholder), code: CodeMalformed},
		{name: "a PAX header before the end", file: "s.tgz", data: tgzWith(paxHdr(path("SKILL.md"))), code: CodeMalformed},
		{name: "a GNU long name before the end", file: "s.tgz", data: tgzWith(longName("SKILL.md")), code: CodeMalformed},
		{name: "directory with a size", file: "s.tgz", data: tgzWith(tarRec{name: "d/", typ: '5', size: tarBlock}, tarRec{name: "pad.txt", body: hidden}), code: CodeMalformed, entry: "d/"},
		{name: "symlink with a size", file: "s.tgz", data: tgzWith(tarRec{name: "lnk", typ: '2', link: "SKILL.md", size: tarBlock}, tarRec{name: "pad.txt", body: hidden}), code: CodeMalformed},
		{name: "hard link with a size", file: "s.tgz", data: tgzWith(tarRec{name: "lnk", typ: '1', link: "SKILL.md", size: tarBlock}, tarRec{name: "pad.txt", body: hidden}), code: CodeMalformed},
		{name: "old-style directory with a size", file: "s.tgz", data: tgzWith(tarRec{name: "d/", nulType: true, size: tarBlock}, tarRec{name: "pad.txt", body: hidden}), code: CodeMalformed},
		{name: "directory with a PAX size", file: "s.tgz", data: tgzWith(paxHdr(paxRecord("size", "512")), tarRec{name: "d/", typ: '5'}, tarRec{name: "pad.txt", body: hidden}), code: CodeMalformed},
		{name: "GNU long name and long link on one symlink", file: "s.tgz", data: tgzWith(longName("links/"+long), longLink("../docs/"+long), tarRec{name: "links/x", typ: '2', link: "x"})},
		{name: "one PAX header with several records", file: "s.tgz", data: tgzWith(paxHdr(path("docs/"+long), paxRecord("mtime", "1700000000.5")), placeholder)},
		{name: "a PAX size overriding the size field", file: "s.tgz", data: tgzWith(paxHdr(paxRecord("size", fmt.Sprint(len(evil)))), tarRec{name: "big", body: evil, sizeField: ptr(int64(0))}, tarRec{name: "after", body: "x"})},
		{name: "an empty PAX size keeps the size field", file: "s.tgz", data: tgzWith(paxHdr(paxRecord("size", "")), tarRec{name: "f", body: evil}, tarRec{name: "after", body: "x"})},
	})
}

func TestValidateGzipStream(t *testing.T) {
	base := []tarRec{{name: "SKILL.md", body: skill}}
	runCases(t, []tc{
		{name: "second gzip member", file: "s.tgz", data: func(t testing.TB) []byte {
			return append(gz(t, rawTar(base, false, nil)), gz(t, []byte("smuggled"))...)
		}, code: CodeMultistreamGzip},
		{name: "bytes after the gzip member", file: "s.tgz", data: func(t testing.TB) []byte {
			return append(gz(t, rawTar(base, false, nil)), "junk"...)
		}, code: CodeTrailingData},
		{name: "non-zero bytes after the tar end", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, rawTar(base, false, append(make([]byte, 600), 'x')))
		}, code: CodeTrailingData},
		{name: "a second tar after the end", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, rawTar(base, false, rawTar([]tarRec{{name: "evil", body: "x"}}, false, nil)))
		}, code: CodeTrailingData},
		{name: "no end marker", file: "s.tgz", data: func(t testing.TB) []byte { return gz(t, rawTar(base, true, nil)) }, code: CodeMalformed},
		{name: "one zero block only", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, append(rawTar(base, true, nil), make([]byte, tarBlock)...))
		}, code: CodeMalformed},
		{name: "truncated content", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, rawTar(base, true, nil)[:tarBlock+10])
		}, code: CodeMalformed},
		{name: "gzip CRC wrong", file: "s.tgz", data: func(t testing.TB) []byte {
			b := gz(t, rawTar(base, false, nil))
			b[len(b)-8] ^= 0xff
			return b
		}, code: CodeMalformed},
		{name: "truncated gzip", file: "s.tgz", data: func(t testing.TB) []byte {
			b := gz(t, rawTar(base, false, nil))
			return b[:len(b)-5]
		}, code: CodeMalformed},
		{name: "gzip of something else", file: "s.tgz", data: func(t testing.TB) []byte { return gz(t, []byte(skill)) }, code: CodeMalformed},
	})
}

func TestValidateFormat(t *testing.T) {
	runCases(t, []tc{
		{name: "zip named tgz", file: "s.tgz", data: goZipWith(), code: CodeFormatMismatch},
		{name: "tgz named zip", file: "s.zip", data: goTgzWith(), code: CodeFormatMismatch},
		{name: "markdown named zip", file: "s.zip", data: func(testing.TB) []byte { return []byte(skill) }, code: CodeFormatMismatch},
		{name: "empty zip", file: "s.zip", data: func(testing.TB) []byte { return []byte("PK\x05\x06" + strings.Repeat("\x00", 18)) }, code: CodeFormatMismatch},
		{name: "empty file", file: "s.tar.gz", data: func(testing.TB) []byte { return nil }, code: CodeFormatMismatch},
		{name: "unknown extension", file: "s.rar", data: goZipWith(), code: CodeUnsupportedFormat},
		{name: "upper-case extension", file: "s.ZIP", data: goZipWith(), code: CodeUnsupportedFormat},
	})
}

func TestValidateBudgets(t *testing.T) {
	blob := strings.Repeat("budget ", 300) // 2100 bytes, compresses well
	paxComment := map[string]string{"comment": strings.Repeat("c", 3000)}
	runCases(t, []tc{
		{name: "1001 entries in tar", file: "s.tgz", data: func(t testing.TB) []byte { return goTgz(t, many(1000, "")...) }, code: CodeTooManyEntries},
		{name: "directories count", file: "s.zip", data: func(t testing.TB) []byte {
			return goZip(t, append(many(998, "d/"), file{name: "d/"}, file{name: "e/"})...)
		}, code: CodeTooManyEntries},
		{name: "declared entry count", file: "s.zip", data: zipOptWith(zipOpt{count: ptr(uint16(1001))}), code: CodeTooManyEntries},
		{name: "per-call entry cap", file: "s.tgz", data: goTgzWith(file{name: "a"}, file{name: "b"}, file{name: "c"}), lim: Limits{MaxEntries: 3}, code: CodeTooManyEntries},
		{name: "per-call expanded cap zip", file: "s.zip", data: goZipWith(file{name: "big", body: blob}), lim: Limits{MaxExpandedBytes: 2000}, code: CodeExpandedTooLarge, entry: "big"},
		{name: "per-call expanded cap tar", file: "s.tgz", data: goTgzWith(file{name: "big", body: blob}), lim: Limits{MaxExpandedBytes: 2000}, code: CodeExpandedTooLarge},
		{name: "per-call ratio zip", file: "s.zip", data: goZipWith(file{name: "big", body: blob}), lim: Limits{MaxRatio: 2}, code: CodeRatioExceeded},
		{name: "per-call ratio tar", file: "s.tgz", data: goTgzWith(file{name: "big", body: blob}), lim: Limits{MaxRatio: 2}, code: CodeRatioExceeded},
		{name: "PAX records beyond metadata budget", file: "s.tgz", data: goTgzWith(file{name: "a", pax: paxComment}), lim: Limits{MaxMetadataBytes: 3000}, code: CodeMetadataTooLarge},
		{name: "zip headers beyond metadata budget", file: "s.zip", data: goZipWith(file{name: strings.Repeat("n", 200)}), lim: Limits{MaxMetadataBytes: 300}, code: CodeMetadataTooLarge},
		{name: "zero bomb after the tar end", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, rawTar([]tarRec{{name: "SKILL.md", body: skill}}, false, make([]byte, 8<<20)))
		}, code: CodeMetadataTooLarge},
		{name: "long-name records beyond the default budget", file: "s.tgz", data: func(t testing.TB) []byte {
			var recs []tarRec
			for i := range 3 {
				recs = append(recs, tarRec{name: fmt.Sprint("x", i), body: "x", pax: map[string]string{"comment": strings.Repeat("c", 900<<10)}})
			}
			return gz(t, rawTar(append([]tarRec{{name: "SKILL.md", body: skill}}, recs...), false, nil))
		}, code: CodeMetadataTooLarge},
		{name: "archive over 4 MiB", file: "s.zip", data: func(testing.TB) []byte { return make([]byte, DefaultMaxArtifactBytes+1) }, code: CodeTooLarge},
		{name: "archive over 4 MiB with an unknown name", file: "s.7z", data: func(testing.TB) []byte { return make([]byte, DefaultMaxArtifactBytes+1) }, code: CodeTooLarge},
		{name: "per-call artifact cap", file: "s.zip", data: goZipWith(), lim: Limits{MaxArtifactBytes: 100}, code: CodeTooLarge},
		{name: "artifact cap cannot be raised", file: "s.zip", data: func(testing.TB) []byte { return make([]byte, DefaultMaxArtifactBytes+1) }, lim: Limits{MaxArtifactBytes: 8 << 20}, code: CodeTooLarge},
		{name: "negative cap", file: "s.zip", data: goZipWith(), lim: Limits{MaxEntries: -1}, code: CodeInvalidLimits},
	})
}

func TestValidateSkillMD(t *testing.T) {
	runCases(t, []tc{
		{name: "none", file: "s.zip", data: func(t testing.TB) []byte { return goZip(t, file{name: "README.md", body: "x"}) }, code: CodeMissingSkillMD},
		{name: "empty archive", file: "s.tgz", data: func(t testing.TB) []byte { return gz(t, rawTar(nil, false, nil)) }, code: CodeMissingSkillMD},
		{name: "wrapped in a folder", file: "s.zip", data: func(t testing.TB) []byte { return goZip(t, file{name: "deploy/SKILL.md", body: skill}) }, code: CodeMissingSkillMD},
		{name: "lower case", file: "s.tgz", data: func(t testing.TB) []byte { return goTgz(t, file{name: "skill.md", body: skill}) }, code: CodeMissingSkillMD},
		{name: "symlink", file: "s.tgz", data: func(t testing.TB) []byte {
			return goTgz(t, file{name: "docs/real.md", body: skill}, file{name: "SKILL.md", typ: tar.TypeSymlink, link: "docs/real.md"})
		}, code: CodeMissingSkillMD},
		{name: "hard link", file: "s.tgz", data: func(t testing.TB) []byte {
			return goTgz(t, file{name: "real.md", body: skill}, file{name: "SKILL.md", typ: tar.TypeLink, link: "real.md"})
		}, code: CodeMissingSkillMD},
		{name: "directory", file: "s.zip", data: func(t testing.TB) []byte {
			return goZip(t, file{name: "SKILL.md/"}, file{name: "SKILL.md/x", body: skill})
		}, code: CodeMissingSkillMD},
		{name: "invalid frontmatter", file: "s.zip", data: func(t testing.TB) []byte { return goZip(t, file{name: "SKILL.md", body: "---\nname: Bad Name\n---\n"}) }, code: skillmd.CodeInvalidFrontmatter, entry: "SKILL.md"},
		{name: "no frontmatter", file: "s.tgz", data: func(t testing.TB) []byte { return goTgz(t, file{name: "SKILL.md", body: "# hello\n"}) }, code: skillmd.CodeInvalidFrontmatter},
		{name: "reserved name", file: "s.tgz", data: func(t testing.TB) []byte { return goTgz(t, file{name: "SKILL.md", body: skillDoc("latest")}) }, code: skillmd.CodeReservedName},
	})
}

func TestSkillErrorsUnwrapToSkillmd(t *testing.T) {
	_, err := Validate(goZip(t, file{name: "SKILL.md", body: "---\nname: a\n---\n"}), "a.zip", Limits{})
	var se *skillmd.Error
	if !errors.As(err, &se) || se.Field != "description" {
		t.Fatalf("error %v does not unwrap to the skillmd error on description", err)
	}
	if e, _ := AsError(err); e == nil || e.Entry != "SKILL.md" {
		t.Fatalf("error %v does not name SKILL.md", err)
	}
}

func TestValidateBenign(t *testing.T) {
	nested := []file{{name: "docs/"}, {name: "docs/guide/"}, {name: "docs/guide/deep/"}, {name: "docs/guide/deep/x.md", body: "deep"}, {name: "scripts/run.sh", body: "#!/bin/sh\n", mode: 0o755}}
	runCases(t, []tc{
		{name: "minimal zip", file: "deploy.zip", data: goZipWith()},
		{name: "minimal tar.gz", file: "deploy.tar.gz", data: goTgzWith()},
		{name: "minimal tgz", file: "deploy.tgz", data: goTgzWith()},
		{name: "999 small files beside SKILL.md, zip", file: "s.zip", data: func(t testing.TB) []byte { return goZip(t, many(999, "")...) }},
		{name: "999 small files beside SKILL.md, tgz", file: "s.tgz", data: func(t testing.TB) []byte { return goTgz(t, many(999, "")...) }},
		{name: "nested directories, zip", file: "s.zip", data: goZipWith(nested...)},
		{name: "nested directories, tgz", file: "s.tgz", data: func(t testing.TB) []byte {
			files := []file{{name: "./", typ: tar.TypeDir}, {name: "./SKILL.md", body: skill}}
			for _, f := range nested {
				f.name = "./" + f.name
				if strings.HasSuffix(f.name, "/") {
					f.typ = tar.TypeDir
				}
				files = append(files, f)
			}
			return goTgz(t, files...)
		}},
		{name: "archive inside an archive", file: "s.tgz", data: func(t testing.TB) []byte {
			inner := goZip(t, file{name: "../evil", body: "only a file to the outer archive"})
			return goTgz(t, file{name: "SKILL.md", body: skill}, file{name: "vendor/inner.zip", body: string(inner)}, file{name: "vendor/inner.tgz", body: string(goTgz(t, file{name: "x"}))})
		}},
		{name: "tar symlinks inside the root", file: "s.tgz", data: goTgzWith(
			file{name: "bin/run", body: "#!/bin/sh\n"},
			file{name: "scripts/run", typ: tar.TypeSymlink, link: "../bin/run"},
			file{name: "docs", typ: tar.TypeSymlink, link: "./bin/"},
			file{name: "bin/sibling", typ: tar.TypeSymlink, link: "../docs-real"},
			file{name: "docs-real/", typ: tar.TypeDir},
			file{name: "dangling", typ: tar.TypeSymlink, link: "not/yet"},
		)},
		{name: "tar hard link to an earlier file", file: "s.tgz", data: goTgzWith(file{name: "a.txt", body: "same"}, file{name: "b.txt", typ: tar.TypeLink, link: "./a.txt"})},
		{name: "unicode names that do not collide", file: "s.zip", data: goZipWith(
			file{name: "caf\u00e9.md", body: "1"}, file{name: "cafe.md", body: "2"}, file{name: "\u65e5\u672c\u8a9e.md", body: "3"},
			file{name: "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac/\u03b1.md", body: "4"}, file{name: "stra\u00dfe.md", body: "5"}, file{name: "strase.md", body: "6"})},
		{name: "unicode names in PAX records", file: "s.tgz", data: goTgzWith(file{name: "r\u00e9sum\u00e9/" + strings.Repeat("long", 40) + ".md", body: "x"})},
		{name: "stored entries with Unix modes", file: "s.zip", data: goZipWith(file{name: "run.sh", body: "#!/bin/sh\n", store: true, mode: 0o755}, file{name: "dir/", mode: fs.ModeDir | 0o755})},
		{name: "zip64 end records", file: "s.zip", data: zipOptWith(zipOpt{zip64End: true}, zipRec{name: "a", body: "a"})},
		{name: "zip64 local sizes with descriptor", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", method: methodDeflate, descriptor: true, zip64Local: true})},
		{name: "descriptor without signature", file: "s.zip", data: zipWith(zipRec{name: "a", body: "abc", method: methodDeflate, descriptor: true, noDescSig: true})},
		{name: "archive comment", file: "s.zip", data: zipOptWith(zipOpt{comment: "built by a test"})},
		{name: "tar padded to a 10 KiB record", file: "s.tgz", data: func(t testing.TB) []byte {
			return gz(t, rawTar([]tarRec{{name: "SKILL.md", body: skill}}, false, make([]byte, 10240-3*tarBlock-tarEnd)))
		}},
		{name: "empty files", file: "s.zip", data: goZipWith(file{name: "empty"}, file{name: "empty-stored", store: true})},
		{name: "exactly 1000 entries with directories", file: "s.tgz", data: func(t testing.TB) []byte {
			return goTgz(t, append(many(998, "d/"), file{name: "d/", typ: tar.TypeDir})...)
		}},
	})
}

func TestResultDescribesTheArchive(t *testing.T) {
	data := goTgz(t, file{name: "./", typ: tar.TypeDir}, file{name: "./SKILL.md", body: skill},
		file{name: "./bin/", typ: tar.TypeDir}, file{name: "./bin/run", body: "run"}, file{name: "./l", typ: tar.TypeSymlink, link: "bin/run"})
	res, err := Validate(data, "x.tgz", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Name: ".", Dir: true, Mode: fs.ModeDir | 0o755},
		{Name: "SKILL.md", Size: int64(len(skill)), Mode: 0o644},
		{Name: "bin", Dir: true, Mode: fs.ModeDir | 0o755},
		{Name: "bin/run", Size: 3, Mode: 0o644},
		{Name: "l", Mode: fs.ModeSymlink | 0o644, Link: "bin/run"},
	}
	if len(res.Entries) != len(want) {
		t.Fatalf("entries %+v, want %+v", res.Entries, want)
	}
	for i := range want {
		if res.Entries[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, res.Entries[i], want[i])
		}
	}
	if res.Format != FormatTarGz || res.Skill.Name != "x" || res.ExpandedBytes != int64(len(skill))+3 || res.MetadataBytes < 5*tarBlock+tarEnd {
		t.Fatalf("result %+v", res)
	}
}

func TestLimitsEffective(t *testing.T) {
	got, err := Limits{MaxEntries: 10, MaxArtifactBytes: 1 << 30, MaxRatio: 5}.Effective()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultLimits()
	want.MaxEntries, want.MaxRatio = 10, 5
	if got != want {
		t.Fatalf("Effective = %+v, want %+v", got, want)
	}
	for _, bad := range []Limits{{MaxArtifactBytes: -1}, {MaxExpandedBytes: -1}, {MaxMetadataBytes: -1}, {MaxRatio: -0.5}, {MaxClockSkewSecs: -1}} {
		if _, err := bad.Effective(); err == nil {
			t.Errorf("Effective(%+v) accepted a negative cap", bad)
		}
	}
}

func TestClockSkewHasNoEffect(t *testing.T) {
	data := goZipWith()(t)
	for _, skew := range []int{0, 1, 60, 1 << 30} {
		if _, err := Validate(data, "s.zip", Limits{MaxClockSkewSecs: skew}); err != nil {
			t.Errorf("skew %d: %v", skew, err)
		}
	}
}

func TestFormatOfAndSniff(t *testing.T) {
	for name, want := range map[string]Format{"a.zip": FormatZip, "a.tar.gz": FormatTarGz, "a.tgz": FormatTarGz, "a.tar": "", "a.gz": "", "zip": ""} {
		if got, _ := FormatOf(name); got != want {
			t.Errorf("FormatOf(%q) = %q, want %q", name, got, want)
		}
	}
	if Sniff([]byte("PK\x03\x04rest")) != FormatZip || Sniff([]byte{0x1f, 0x8b, 8}) != FormatTarGz || Sniff([]byte("PK\x05\x06")) != "" {
		t.Fatal("Sniff misreads magic bytes")
	}
}

func TestErrorString(t *testing.T) {
	e := fail(CodePathTraversal, "../x", "'..' elements are not allowed")
	if got := e.Error(); got != `path_traversal: entry "../x": '..' elements are not allowed` {
		t.Fatalf("Error() = %s", got)
	}
	if got := fail(CodeTrailingData, "", "junk").Error(); got != "trailing_data: junk" {
		t.Fatalf("Error() = %s", got)
	}
	if got := fail(CodeInvalidName, strings.Repeat("n", 500), "x").Entry; len(got) > 210 {
		t.Fatalf("entry not clipped: %d bytes", len(got))
	}
}
