package archive

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// skillName is the one entry every archive must hold at its root.
const skillName = "SKILL.md"

// copyBufSize is the chunk in which content is read; one buffer serves the
// whole archive.
const copyBufSize = 32 << 10

// validator is the state of one validation.
type validator struct {
	data []byte
	lim  Limits

	// contentCap is the smaller of max_expanded_bytes and
	// max_decompression_ratio × archive size; capCode names the one that
	// binds.
	contentCap int64
	capCode    string

	content  int64 // file content read so far
	meta     int64 // metadata counted so far
	produced int64 // bytes any decompressor has handed out (tests read it)

	entries []Entry
	reg     *registry
	buf     []byte

	files  []File         // the regular files read so far
	byPath map[string]int // index in files by registry key, for hard links

	skill      []byte // the root SKILL.md's content
	foundSkill bool
	// anySkill: the archive is read for its files only (Contents), with
	// or without a valid root SKILL.md.
	anySkill bool
}

func newValidator(data []byte, lim Limits) (*validator, error) {
	lim, err := lim.Effective()
	if err != nil {
		return nil, err
	}
	size := int64(len(data))
	if size > lim.MaxArtifactBytes {
		return nil, tooLarge(size, lim.MaxArtifactBytes)
	}
	v := &validator{data: data, lim: lim, contentCap: lim.MaxExpandedBytes, capCode: CodeExpandedTooLarge}
	if r := lim.MaxRatio * float64(size); r < float64(v.contentCap) {
		v.contentCap, v.capCode = int64(math.Floor(r)), CodeRatioExceeded
	}
	return v, nil
}

func (v *validator) run(want Format) (*Result, error) {
	if got := Sniff(v.data); got != want {
		what := "neither a zip archive nor gzip data"
		switch got {
		case FormatZip:
			what = "a zip archive"
		case FormatTarGz:
			what = "gzip data"
		}
		return nil, fail(CodeFormatMismatch, "", "the name says %s but the bytes are %s", want, what)
	}
	v.buf = make([]byte, copyBufSize)
	v.reg = newRegistry(64)
	v.byPath = map[string]int{}
	var err error
	switch want {
	case FormatZip:
		err = v.zip()
	case FormatTarGz:
		err = v.tarGz()
	default:
		err = fail(CodeUnsupportedFormat, "", "unknown format %q", want)
	}
	if err != nil {
		return nil, err
	}
	if err := v.reg.checkChains(); err != nil {
		return nil, err
	}
	var s *skillmd.Skill
	if !v.anySkill {
		if s, err = v.parseSkill(); err != nil {
			return nil, err
		}
	}
	return &Result{
		Format:        want,
		Digest:        digest.Of(v.data),
		Size:          int64(len(v.data)),
		Skill:         s,
		Entries:       v.entries,
		Files:         v.sortedFiles(),
		ExpandedBytes: v.content,
		MetadataBytes: v.meta,
	}, nil
}

// countEntry enforces max_entries before an entry is looked at further.
func (v *validator) countEntry(raw string) *Error {
	if len(v.entries) >= v.lim.MaxEntries {
		return fail(CodeTooManyEntries, raw, "the archive has more than max_entries (%d) entries", v.lim.MaxEntries)
	}
	return nil
}

// addMeta counts n metadata bytes against max_metadata_bytes.
func (v *validator) addMeta(entry string, n int64) *Error {
	v.meta += n
	if v.meta > v.lim.MaxMetadataBytes {
		return fail(CodeMetadataTooLarge, entry, "archive metadata exceeds max_metadata_bytes (%s)", bytesize.Format(v.lim.MaxMetadataBytes))
	}
	return nil
}

// capError reports content beyond the binding content cap.
func (v *validator) capError(entry string) *Error {
	if v.capCode == CodeRatioExceeded {
		return fail(CodeRatioExceeded, entry, "content exceeds max_decompression_ratio (%g) × the archive's %s", v.lim.MaxRatio, bytesize.Format(int64(len(v.data))))
	}
	return fail(CodeExpandedTooLarge, entry, "content exceeds max_expanded_bytes (%s)", bytesize.Format(v.lim.MaxExpandedBytes))
}

// readContent reads one entry's content to its end, counting every byte
// against the content cap as it arrives and asking r for no more than one
// byte beyond what the cap (and the declared size, when declared >= 0)
// allows, so a bomb is stopped within its budget. It returns the bytes read
// and, when sum is set, their CRC-32; keep, when not nil, receives them as
// they arrive. decompressed says r is a decompressor whose output counts as
// produced.
func (v *validator) readContent(entry string, r io.Reader, declared int64, decompressed, sum bool, keep io.Writer) (int64, uint32, error) {
	var n int64
	var crc uint32
	for {
		want := int64(len(v.buf))
		if rem := v.contentCap - v.content + 1; rem < want {
			want = rem
		}
		if declared >= 0 {
			if rem := declared - n + 1; rem < want {
				want = rem
			}
		}
		m, err := r.Read(v.buf[:want])
		if m > 0 {
			chunk := v.buf[:m]
			n += int64(m)
			v.content += int64(m)
			if decompressed {
				v.produced += int64(m)
			}
			if declared >= 0 && n > declared {
				return n, crc, fail(CodeSizeMismatch, entry, "inflates beyond its declared %d bytes", declared)
			}
			if v.content > v.contentCap {
				return n, crc, v.capError(entry)
			}
			if sum {
				crc = crc32.Update(crc, crc32.IEEETable, chunk)
			}
			if keep != nil {
				_, _ = keep.Write(chunk) // a fileRecord: cannot fail
			}
		}
		if err == io.EOF {
			return n, crc, nil
		}
		if err != nil {
			return n, crc, readError(entry, err)
		}
	}
}

// readError turns a decoder's error into an *Error, keeping one that
// already is (a budget stop raised below the decoder).
func readError(entry string, err error) error {
	if e, ok := AsError(err); ok {
		return e
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Code: CodeMalformed, Entry: clip(entry), Msg: "truncated data", Err: err}
	}
	return &Error{Code: CodeMalformed, Entry: clip(entry), Msg: fmt.Sprintf("corrupt data: %v", err), Err: err}
}

// addEntry applies the name policy and records an accepted entry. raw is
// the name as stored; k is kindDir, kindFile, kindHardlink or kindSymlink.
func (v *validator) addEntry(raw string, k kind, e Entry, target string) (string, *Error) {
	name, err := cleanName(raw, k == kindDir)
	if err != nil {
		return "", err
	}
	e.Name = name
	if name != rootName {
		key := v.reg.key(name)
		switch k {
		case kindSymlink:
			if err := checkTarget(name, target); err != nil {
				return "", err
			}
			err = v.reg.addSymlink(name, key, target)
		case kindHardlink:
			err = v.checkHardlink(name, target)
			if err == nil {
				err = v.reg.add(name, key, k)
			}
		default:
			err = v.reg.add(name, key, k)
		}
		if err != nil {
			return "", err
		}
	}
	v.entries = append(v.entries, e)
	return name, nil
}

// checkHardlink requires a hard link to name an earlier regular file.
func (v *validator) checkHardlink(name, target string) *Error {
	if target == "" {
		return fail(CodeHardlink, name, "hard link without a target")
	}
	t, err := cleanName(target, false)
	if err != nil {
		err.Entry, err.Code = clip(name), CodeHardlink
		err.Msg = "hard link target: " + err.Msg
		return err
	}
	if v.reg.kinds[v.reg.key(t)] != kindFile {
		return fail(CodeHardlink, name, "hard link target %q is not an earlier regular file", clip(target))
	}
	return nil
}

// parseSkill parses the root SKILL.md, or explains why there is none.
func (v *validator) parseSkill() (*skillmd.Skill, error) {
	if !v.foundSkill {
		msg := "no regular file named SKILL.md at the archive root"
		if k, ok := v.reg.kinds[strings.ToLower(skillName)]; ok {
			msg = "the root SKILL.md must be a regular file named exactly SKILL.md"
			if k == kindSymlink || k == kindHardlink {
				msg = "the root SKILL.md must be a regular file, not a link"
			}
		} else {
			for _, e := range v.entries {
				if strings.HasSuffix(e.Name, "/"+skillName) {
					msg = fmt.Sprintf("found %q, but SKILL.md must be at the archive root", clip(e.Name))
					break
				}
			}
		}
		return nil, fail(CodeMissingSkillMD, skillName, "%s", msg)
	}
	s, err := skillmd.ParseSkill(v.skill)
	if err != nil {
		if se, ok := skillmd.AsError(err); ok {
			msg := se.Msg
			if se.Field != "" {
				msg = se.Field + ": " + msg
			}
			return nil, &Error{Code: se.Code, Entry: skillName, Msg: msg, Err: se}
		}
		return nil, &Error{Code: skillmd.CodeInvalidFrontmatter, Entry: skillName, Msg: err.Error(), Err: err}
	}
	return s, nil
}
