package archive

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/skilldrop/skilldrop/pkg/safetext"
)

// rootName is the cleaned name of an archive's root directory entry ("./").
const rootName = "."

// cleanName applies the name policy to a raw entry name and returns the
// cleaned name: no leading "./" (tar's usual spelling of "relative to the
// root", kept for compatibility) and, for a directory, no trailing "/". The
// root directory itself cleans to rootName.
func cleanName(raw string, dir bool) (string, *Error) {
	if err := checkChars(raw); err != nil {
		return "", err
	}
	if raw[0] == '/' {
		return "", fail(CodeAbsolutePath, raw, "absolute names are not allowed")
	}
	name := raw
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	if name == "" || name == "." {
		if !dir {
			return "", fail(CodeInvalidName, raw, "a file cannot be the archive root")
		}
		return rootName, nil
	}
	if strings.HasSuffix(name, "/") {
		if !dir {
			return "", fail(CodeInvalidName, raw, "a file name must not end with '/'")
		}
		name = name[:len(name)-1]
	}
	for rest := name; ; {
		elem, tail, more := strings.Cut(rest, "/")
		switch {
		case elem == "..":
			return "", fail(CodePathTraversal, raw, "'..' elements are not allowed")
		case elem == "":
			return "", fail(CodeInvalidName, raw, "empty path element ('//')")
		case elem == ".":
			return "", fail(CodeInvalidName, raw, "'.' elements are not allowed inside a name")
		case len(elem) > MaxElementBytes:
			return "", fail(CodeNameTooLong, raw, "a path element is %d bytes, at most %d allowed", len(elem), MaxElementBytes)
		}
		if err := checkElement(raw, elem); err != nil {
			return "", err
		}
		if !more {
			break
		}
		rest = tail
	}
	return name, nil
}

// checkElement applies the rules for one path element of a name or link
// target other than "." and "..", for what Windows does with it: it drops
// a trailing '.' or ' ' ("SKILL.md." would overwrite SKILL.md) and opens a
// device for a DOS device name, whatever the extension ("con.txt").
func checkElement(entry, elem string) *Error {
	switch last := elem[len(elem)-1]; {
	case last == '.' || last == ' ':
		return fail(CodeInvalidName, entry, "the path element %q ends with %q, which Windows drops", clip(elem), last)
	case isDOSDevice(elem):
		return fail(CodeInvalidName, entry, "the path element %q is a DOS device name, which Windows opens as a device", clip(elem))
	}
	return nil
}

// isDOSDevice reports whether elem names a DOS device: CON, PRN, AUX, NUL,
// COM0-COM9 or LPT0-LPT9 (or COM and LPT with a superscript 1-3), in any
// case, before an extension and trailing spaces.
func isDOSDevice(elem string) bool {
	base, _, _ := strings.Cut(elem, ".")
	base = strings.TrimRight(base, " ")
	switch {
	case len(base) == 3:
		return strings.EqualFold(base, "CON") || strings.EqualFold(base, "PRN") ||
			strings.EqualFold(base, "AUX") || strings.EqualFold(base, "NUL")
	case len(base) < 4 || !strings.EqualFold(base[:3], "COM") && !strings.EqualFold(base[:3], "LPT"):
		return false
	}
	switch d := base[3:]; d {
	case "\u00b9", "\u00b2", "\u00b3":
		return true
	default:
		return len(d) == 1 && d[0] >= '0' && d[0] <= '9'
	}
}

// windowsReserved are the printable ASCII characters Windows refuses in a
// name (':' and '\' have rules of their own).
const windowsReserved = `*?<>|"`

// checkChars applies the rules shared by names and link targets: not empty,
// bounded, valid UTF-8 without control characters, no backslash, no colon,
// none of the other characters Windows refuses, and no invisible characters.
func checkChars(s string) *Error {
	if s == "" {
		return fail(CodeInvalidName, s, "empty name")
	}
	if len(s) > MaxPathBytes {
		return fail(CodeNameTooLong, s, "%d bytes, at most %d allowed", len(s), MaxPathBytes)
	}
	if !utf8.ValidString(s) {
		return fail(CodeInvalidName, s, "not valid UTF-8")
	}
	hidden, _ := safetext.HiddenAt(s)
	for i, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return fail(CodeInvalidName, s, "control character %U at byte %d", r, i)
		case r == '\\':
			// Windows extractors treat it as a separator: "..\x" traverses.
			return fail(CodeBackslash, s, "backslashes are not allowed")
		case r == ':':
			// Drive letters ("C:") and NTFS alternate data streams.
			return fail(CodeInvalidName, s, "':' is not allowed")
		case r < utf8.RuneSelf && strings.IndexByte(windowsReserved, byte(r)) >= 0:
			return fail(CodeInvalidName, s, "%q is not allowed: Windows refuses it in names", r)
		case i == hidden:
			// Invisible, and ignored by some file systems and by people:
			// "SKILL\u200b.md" looks like SKILL.md, U+202E reverses what follows
			// (variation selectors: safetext.HiddenAt).
			return fail(CodeInvalidName, s, "the invisible character %U at byte %d is not allowed", r, i)
		}
	}
	return nil
}

// kind is what a registered (folded) name is.
type kind uint8

const (
	kindImplied  kind = iota + 1 // a directory only implied by a deeper name
	kindDir                      // an explicit directory entry
	kindFile                     // a regular file
	kindHardlink                 // a tar hard link
	kindSymlink                  // a tar symlink
)

func (k kind) isDir() bool { return k == kindImplied || k == kindDir }

// symlink is a tar symlink whose target is checked once every name is known.
type symlink struct {
	name   string // cleaned
	key    string // folded
	target string // raw
}

// registry holds the archive's names folded to keys, so that names an
// extractor on a case-insensitive or normalising file system would merge
// are caught. It is not safe for concurrent use.
type registry struct {
	kinds    map[string]kind
	symlinks []symlink
	fold     cases.Caser // built on the first non-ASCII name
	haveFold bool
}

func newRegistry(capacity int) *registry {
	return &registry{kinds: make(map[string]kind, capacity)}
}

// key folds a cleaned name: NFC of the full case folding of its NFD, so
// that "Straße" meets "STRASSE" and a precomposed "é" meets "e\u0301".
func (r *registry) key(name string) string {
	if isASCII(name) {
		// Folding is lower-casing on ASCII; this path allocates nothing
		// for the usual lower-case names.
		return strings.ToLower(name)
	}
	if !r.haveFold {
		r.fold, r.haveFold = cases.Fold(), true
	}
	return norm.NFC.String(r.fold.String(norm.NFD.String(name)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// add registers a cleaned name of kind k (not kindImplied) and its parents,
// refusing duplicates, file/directory conflicts and names below a symlink.
func (r *registry) add(name, key string, k kind) *Error {
	// Walk the parents from the deepest up; a parent already known as a
	// directory had its own parents checked when it was added.
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		parent := key[:i]
		pk, ok := r.kinds[parent]
		if ok && pk.isDir() {
			break
		}
		switch pk {
		case kindSymlink:
			return fail(CodeBeneathSymlink, name, "lies beneath a symlink (%q)", clip(sameParent(name, parent)))
		case kindFile, kindHardlink:
			return fail(CodeFileDirConflict, name, "%q is a file and also a directory", clip(sameParent(name, parent)))
		}
		r.kinds[parent] = kindImplied
	}
	prev, ok := r.kinds[key]
	switch {
	case !ok:
	case prev == kindImplied && k == kindDir:
	case prev == kindImplied && k == kindSymlink:
		return fail(CodeBeneathSymlink, name, "is a symlink and other entries lie beneath it")
	case prev.isDir() != (k == kindDir):
		return fail(CodeFileDirConflict, name, "is a file and also a directory")
	default:
		return fail(CodeDuplicateEntry, name, "appears more than once (names are compared after Unicode normalisation and case folding)")
	}
	r.kinds[key] = k
	return nil
}

// sameParent returns the leading elements of name that the folded parent
// key stands for. Folding may change an element's length in bytes ("İ" grows,
// "ﬁ" shrinks), never the number of '/', so the parent is found by counting
// elements, not by the key's byte offset.
func sameParent(name, parentKey string) string {
	elems := strings.Count(parentKey, "/") + 1
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			if elems--; elems == 0 {
				return name[:i]
			}
		}
	}
	return name
}

// addSymlink registers a symlink whose target checkTarget has accepted.
func (r *registry) addSymlink(name, key, target string) *Error {
	if err := r.add(name, key, kindSymlink); err != nil {
		return err
	}
	r.symlinks = append(r.symlinks, symlink{name: name, key: key, target: target})
	return nil
}

// checkTarget checks a symlink target's characters and that it stays
// inside the root, lexically, from the directory holding the link.
func checkTarget(name, target string) *Error {
	if err := checkChars(target); err != nil {
		err.Entry = clip(name)
		err.Msg = "symlink target: " + err.Msg
		return err
	}
	if target[0] == '/' {
		return fail(CodeSymlinkEscape, name, "absolute symlink target %q", clip(target))
	}
	depth := strings.Count(name, "/") // elements of the link's directory
	for rest := target; rest != ""; {
		elem, tail, _ := strings.Cut(rest, "/")
		rest = tail
		switch elem {
		case "", ".":
		case "..":
			if depth == 0 {
				return fail(CodeSymlinkEscape, name, "symlink target %q leaves the archive root", clip(target))
			}
			depth--
		default:
			if len(elem) > MaxElementBytes {
				return fail(CodeNameTooLong, name, "a symlink target element is %d bytes, at most %d allowed", len(elem), MaxElementBytes)
			}
			if err := checkElement(name, elem); err != nil {
				err.Msg = "symlink target: " + err.Msg
				return err
			}
			depth++
		}
	}
	return nil
}

// checkChains refuses symlinks whose target passes through (or is) a
// symlink: every directory walked while resolving the target must be a
// plain name; and symlinks to a directory that holds them (loops). It
// runs once every name is known, as links may come in any order.
func (r *registry) checkChains() *Error {
	var buf []byte
	var marks []int
	for _, l := range r.symlinks {
		buf, marks = buf[:0], marks[:0]
		if i := strings.LastIndexByte(l.key, '/'); i > 0 {
			for _, elem := range strings.Split(l.key[:i], "/") {
				marks = append(marks, len(buf))
				buf = appendElem(buf, elem)
			}
		}
		for rest := r.key(l.target); rest != ""; {
			elem, tail, _ := strings.Cut(rest, "/")
			rest = tail
			switch elem {
			case "", ".":
				continue
			case "..":
				if len(marks) == 0 { // checkTarget refuses this already
					return fail(CodeSymlinkEscape, l.name, "symlink target %q leaves the archive root", clip(l.target))
				}
				buf, marks = buf[:marks[len(marks)-1]], marks[:len(marks)-1]
				continue
			}
			marks = append(marks, len(buf))
			buf = appendElem(buf, elem)
			if r.kinds[string(buf)] == kindSymlink {
				return fail(CodeSymlinkChain, l.name, "symlink target %q resolves through the symlink %q", clip(l.target), clip(string(buf)))
			}
		}
		// A link to a directory holding it makes an endless tree for
		// anything that follows links while walking.
		if len(buf) == 0 || strings.HasPrefix(l.key, string(buf)+"/") {
			return fail(CodeSymlinkLoop, l.name, "symlink target %q is a directory that holds the link", clip(l.target))
		}
	}
	return nil
}

func appendElem(buf []byte, elem string) []byte {
	if len(buf) > 0 {
		buf = append(buf, '/')
	}
	return append(buf, elem...)
}
