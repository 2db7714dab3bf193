package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"regexp"
	"testing"
)

var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// fuzzLimits keep each run cheap; the properties do not depend on them.
var fuzzLimits = Limits{MaxExpandedBytes: 1 << 20, MaxEntries: 64}

// checkInvariants holds for every outcome: a rejection is an *Error with a
// stable-looking code; an acceptance respects every cap, has a root
// SKILL.md and only names the policy allows, each once.
func checkInvariants(t *testing.T, res *Result, err error) {
	t.Helper()
	if err != nil {
		e, ok := AsError(err)
		if !ok || !codePattern.MatchString(e.Code) {
			t.Fatalf("rejection %v (%T) is not an *Error with a code", err, err)
		}
		if e.Code == CodeValidatorFault {
			t.Fatalf("the validator panicked: %v", e)
		}
		return
	}
	lim, _ := fuzzLimits.Effective()
	if len(res.Entries) > lim.MaxEntries || res.ExpandedBytes > lim.MaxExpandedBytes ||
		float64(res.ExpandedBytes) > lim.MaxRatio*float64(res.Size) || res.MetadataBytes > lim.MaxMetadataBytes {
		t.Fatalf("accepted beyond a cap: %d entries, %d content bytes, %d metadata bytes, %d archive bytes",
			len(res.Entries), res.ExpandedBytes, res.MetadataBytes, res.Size)
	}
	if res.Skill == nil {
		t.Fatal("accepted without SKILL.md")
	}
	reg := newRegistry(len(res.Entries))
	for _, e := range res.Entries {
		if e.Name == rootName {
			continue
		}
		if again, err := cleanName(e.Name, e.Dir); err != nil || again != e.Name {
			t.Fatalf("accepted name %q fails the name policy: %v", e.Name, err)
		}
		key := reg.key(e.Name)
		if _, dup := reg.kinds[key]; dup {
			t.Fatalf("accepted %q twice", e.Name)
		}
		reg.kinds[key] = kindFile
	}
}

func FuzzZip(f *testing.F) {
	f.Add(goZip(f, file{name: "SKILL.md", body: skill}))
	f.Add(goZip(f, file{name: "SKILL.md", body: skill, store: true}, file{name: "d/"}, file{name: "d/x", body: "x"}))
	f.Add(rawZip(f, []zipRec{{name: "SKILL.md", body: skill, method: methodDeflate, descriptor: true, zip64Local: true}}, zipOpt{zip64End: true}))
	f.Add(rawZip(f, []zipRec{{name: "SKILL.md", body: skill}, {name: "l", body: "x", creator: creatorUnix, extAttr: unixAttr(0o120777)}}, zipOpt{comment: "c"}))
	f.Add(rawZip(f, []zipRec{{name: "SKILL.md", body: skill}, {name: "a", body: "x", noLocal: true, offset: ptr(uint32(0))}}, zipOpt{}))
	// Names whose case folding changes their length, in a file/directory conflict.
	f.Add(goZip(f, file{name: "SKILL.md", body: skill}, file{name: "\u0130\u0130", body: "a"}, file{name: "\u0130\u0130/a", body: "b"}))
	// A second archive in the comment, its end record's comment running past the end.
	inner := rawZip(f, []zipRec{{name: "SKILL.md", body: skill}, {name: "../x", body: "x"}}, zipOpt{})
	f.Add(rawZip(f, []zipRec{{name: "SKILL.md", body: skill}}, zipOpt{comment: string(put16(inner[:len(inner)-2], 0xffff))}))
	// A stored entry with a descriptor whose data holds a fake descriptor and a local record.
	stream := "prefix" + string(put32(put32(put32(put32(nil, sigDesc), crc32.ChecksumIEEE([]byte("prefix"))), 6), 6)) + string(localRecord(f, zipRec{name: "SKILL.md", body: skill}))
	f.Add(rawZip(f, []zipRec{{name: "SKILL.md", body: skill}, {name: "n", body: stream, descriptor: true}}, zipOpt{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Validate(data, "f.zip", fuzzLimits)
		checkInvariants(t, res, err)
		if err != nil {
			return
		}
		// Differential: what this package accepts, archive/zip reads the
		// same way, entry for entry, without error.
		zr, zerr := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if zerr != nil {
			t.Fatalf("accepted, but archive/zip refuses it: %v", zerr)
		}
		if len(zr.File) != len(res.Entries) {
			t.Fatalf("accepted %d entries, archive/zip sees %d", len(res.Entries), len(zr.File))
		}
		var total int64
		for _, zf := range zr.File {
			rc, err := zf.Open()
			if err != nil {
				t.Fatalf("archive/zip cannot open accepted entry %q: %v", zf.Name, err)
			}
			n, err := io.Copy(io.Discard, rc)
			if err != nil {
				t.Fatalf("archive/zip cannot read accepted entry %q: %v", zf.Name, err)
			}
			total += n
		}
		if total != res.ExpandedBytes {
			t.Fatalf("accepted %d content bytes, archive/zip reads %d", res.ExpandedBytes, total)
		}
	})
}

func FuzzTarGz(f *testing.F) {
	f.Add(goTgz(f, file{name: "SKILL.md", body: skill}))
	f.Add(goTgz(f, file{name: "./", typ: tar.TypeDir}, file{name: "./SKILL.md", body: skill}, file{name: "./l", typ: tar.TypeSymlink, link: "SKILL.md"},
		file{name: "./h", typ: tar.TypeLink, link: "SKILL.md"}, file{name: "r\u00e9sum\u00e9.md", body: "x"}))
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}, {name: "big", body: "data", pax: map[string]string{"GNU.sparse.map": "0,4", "GNU.sparse.numblocks": "1"}}}, false, nil)))
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}, {name: "s", typ: 'S', body: "data", gnu: true}}, false, make([]byte, 100))))
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}}, true, nil)))
	f.Add(goTgz(f, file{name: "SKILL.md", body: skill}, file{name: "\ufb01\u0149", typ: tar.TypeSymlink, link: "SKILL.md"}, file{name: "\ufb01\u0149/x", body: "x"}))
	// Names Windows merges or hides, as a name and as a link target.
	f.Add(goTgz(f, file{name: "SKILL.md", body: skill}, file{name: "SKILL.md.", body: "x"}, file{name: "l", typ: tar.TypeSymlink, link: "con.txt"}, file{name: "a\u200bb", body: "x"}))
	// Stacked extension headers, a PAX size, and a directory declaring content.
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}, paxHdr(paxRecord("path", "SKILL.md")), longName("a/b"), {name: "p", body: "x"}}, false, nil)))
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}, longName("l"), longLink("SKILL.md"), {name: "x", typ: '2', link: "x"},
		paxHdr(paxRecord("size", "3")), {name: "s", body: "abc", sizeField: ptr(int64(0))}}, false, nil)))
	f.Add(gz(f, rawTar([]tarRec{{name: "SKILL.md", body: skill}, {name: "d/", typ: '5', size: tarBlock}, {name: "pad", body: string(tarHeader("x", '0', 0, "", false))}}, false, nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Validate(data, "f.tgz", fuzzLimits)
		checkInvariants(t, res, err)
		if err != nil {
			return
		}
		// Differential: archive/tar lists the same entries.
		zr, zerr := gzip.NewReader(bytes.NewReader(data))
		if zerr != nil {
			t.Fatalf("accepted, but compress/gzip refuses it: %v", zerr)
		}
		tr := tar.NewReader(zr)
		n := 0
		for {
			_, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("accepted, but archive/tar fails after %d entries: %v", n, err)
			}
			n++
		}
		if n != len(res.Entries) {
			t.Fatalf("accepted %d entries, archive/tar sees %d", len(res.Entries), n)
		}
	})
}
