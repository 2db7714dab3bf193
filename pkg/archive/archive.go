// Package archive validates skill archives (.zip, .tar.gz, .tgz) held in
// memory, without extracting anything.
//
// Go's archive/zip, archive/tar and compress/gzip enforce no path policy and
// accept several hostile shapes silently; this package owns the policy
// instead. It reads every entry to the end, verifying checksums and counting
// the bytes it actually decompresses against per-archive budgets, and refuses
// path traversal, links that escape the root, special files, duplicate names
// after Unicode normalisation and case folding, names Windows or macOS would
// merge or hide, encrypted or overlapping zip entries, zip headers that
// disagree, and bytes hidden before, between or after the parts of an
// archive. Where extractors read the same bytes differently (a second zip in
// the comment, stored data a streaming reader would end early, stacked tar
// extension headers, CP437 names), it refuses the archive rather than pick
// one reading. Every refusal is an *Error with a stable code that names the
// entry concerned.
//
// An accepted archive has a valid SKILL.md at its root; Validate returns its
// parsed frontmatter, the entry list, every regular file with its digest,
// size, media type and content (read once, while validating), and the
// digest of the archive's bytes.
package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Format is the container format of an archive. Its values equal the
// artifact formats of the same name (pkg/artifact maps them).
type Format string

// The archive formats.
const (
	FormatZip   Format = "zip"
	FormatTarGz Format = "tar.gz"
)

// FormatOf returns the format a file name's extension declares: .zip, or
// .tar.gz / .tgz. Extensions are matched exactly (lower case), as the
// bucket contract spells them.
func FormatOf(filename string) (Format, bool) {
	switch {
	case strings.HasSuffix(filename, ".zip"):
		return FormatZip, true
	case strings.HasSuffix(filename, ".tar.gz"), strings.HasSuffix(filename, ".tgz"):
		return FormatTarGz, true
	}
	return "", false
}

// Sniff returns the format the magic bytes announce: a zip local file header
// ("PK\x03\x04") or a gzip member (1f 8b) at offset 0. It returns "" for
// anything else, including an empty zip (which starts with its end record).
func Sniff(data []byte) Format {
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return FormatZip
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return FormatTarGz
	}
	return ""
}

// Defaults of the per-archive limits.
const (
	// DefaultMaxArtifactBytes is also a ceiling: a buffered Lambda response
	// carries about 4.4 MiB of binary, so no configuration may raise it.
	DefaultMaxArtifactBytes = 4 << 20
	DefaultMaxExpandedBytes = 10 << 20
	DefaultMaxMetadataBytes = 2 << 20
	DefaultMaxEntries       = 1000
	DefaultMaxRatio         = 100
	DefaultMaxClockSkewSecs = 60
)

// Limits are the caps one validation applies. A zero field means its
// default; a negative one is refused (CodeInvalidLimits). MaxArtifactBytes
// may lower the 4 MiB default but never raise it: a larger value is clamped.
type Limits struct {
	// MaxArtifactBytes caps the archive's own size.
	MaxArtifactBytes int64
	// MaxExpandedBytes caps the file content decompressed from the archive.
	MaxExpandedBytes int64
	// MaxMetadataBytes caps every decompressed byte that is not file
	// content: tar headers, PAX and GNU long-name records, the end-of-archive
	// blocks and whatever follows them (the zero padding after each file's
	// content is not counted: it is bounded by the entry count). For zip it
	// caps the local and central headers, descriptors and end records.
	MaxMetadataBytes int64
	// MaxEntries caps the entries, directories and links included.
	MaxEntries int
	// MaxRatio caps content bytes ÷ archive bytes, checked while reading.
	MaxRatio float64
	// MaxClockSkewSecs is accepted for configuration compatibility and has
	// no effect.
	MaxClockSkewSecs int
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxArtifactBytes: DefaultMaxArtifactBytes,
		MaxExpandedBytes: DefaultMaxExpandedBytes,
		MaxMetadataBytes: DefaultMaxMetadataBytes,
		MaxEntries:       DefaultMaxEntries,
		MaxRatio:         DefaultMaxRatio,
		MaxClockSkewSecs: DefaultMaxClockSkewSecs,
	}
}

// Effective returns l with defaults filled in and MaxArtifactBytes clamped
// to its ceiling, or an *Error (CodeInvalidLimits) for a negative or NaN cap.
func (l Limits) Effective() (Limits, error) {
	if l.MaxArtifactBytes < 0 || l.MaxExpandedBytes < 0 || l.MaxMetadataBytes < 0 ||
		l.MaxEntries < 0 || l.MaxRatio < 0 || math.IsNaN(l.MaxRatio) || l.MaxClockSkewSecs < 0 {
		return l, fail(CodeInvalidLimits, "", "limits must not be negative: %+v", l)
	}
	d := DefaultLimits()
	if l.MaxArtifactBytes == 0 || l.MaxArtifactBytes > d.MaxArtifactBytes {
		l.MaxArtifactBytes = d.MaxArtifactBytes
	}
	if l.MaxExpandedBytes == 0 {
		l.MaxExpandedBytes = d.MaxExpandedBytes
	}
	if l.MaxMetadataBytes == 0 {
		l.MaxMetadataBytes = d.MaxMetadataBytes
	}
	if l.MaxEntries == 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxRatio == 0 {
		l.MaxRatio = d.MaxRatio
	}
	if l.MaxClockSkewSecs == 0 {
		l.MaxClockSkewSecs = d.MaxClockSkewSecs
	}
	return l, nil
}

// Name limits. Real skills use short names; these stop pathological ones.
const (
	MaxPathBytes    = 1024 // a whole entry name or link target
	MaxElementBytes = 255  // one path element, as most file systems allow
)

// Entry is one accepted archive entry.
type Entry struct {
	// Name is the cleaned name: relative, forward slashes, no leading "./"
	// and no trailing "/". The archive's root directory entry ("./") is ".".
	Name string
	// Size is the number of content bytes actually read (0 for non-files).
	Size int64
	Dir  bool
	// Mode carries the type (fs.ModeDir, fs.ModeSymlink) and permission bits.
	Mode fs.FileMode
	// Link is a symlink's target as stored, or the name of the earlier file a
	// tar hard link refers to (then Mode is a regular file's).
	Link string
}

// Result describes an accepted archive.
type Result struct {
	Format Format
	Digest digest.Digest // of the archive's bytes
	Size   int64         // of the archive
	Skill  *skillmd.Skill
	// Entries in archive order.
	Entries []Entry
	// Files are the regular files (tar hard links included), in path
	// order, with their digests, media types and content.
	Files []File
	// ExpandedBytes is the file content read; MetadataBytes the metadata
	// counted against MaxMetadataBytes.
	ExpandedBytes int64
	MetadataBytes int64
}

// Validate validates an archive whose name (a bucket key or a file path)
// declares its format by extension; the magic bytes must agree. It returns
// an *Error for every rejection.
func Validate(data []byte, filename string, lim Limits) (*Result, error) {
	return readNamed(data, filename, lim, false)
}

// Contents reads an archive's files as Validate does, with every bound and
// every check on entries and paths, but asks nothing of its SKILL.md: for
// a scanner to report what an archive refused for its layout (its files
// under a top folder, a broken frontmatter) holds. The Result has no Skill.
func Contents(data []byte, filename string, lim Limits) (*Result, error) {
	return readNamed(data, filename, lim, true)
}

// readNamed is Validate, or with anySkill Contents.
func readNamed(data []byte, filename string, lim Limits, anySkill bool) (*Result, error) {
	f, _ := FormatOf(filename)
	v, err := newValidator(data, lim)
	if err != nil {
		return nil, err
	}
	if f == "" {
		return nil, fail(CodeUnsupportedFormat, "", "%q is not a .zip, .tar.gz or .tgz name", clip(filename))
	}
	v.anySkill = anySkill
	return v.runGuarded(f)
}

// ValidateFormat validates an archive expected to be in format want.
func ValidateFormat(data []byte, want Format, lim Limits) (*Result, error) {
	v, err := newValidator(data, lim)
	if err != nil {
		return nil, err
	}
	return v.runGuarded(want)
}

// runGuarded is run with a last line of defence: hostile input must never
// take down the process that validates it (an indexer invocation, `skilldrop
// serve`), so a panic in the validator becomes a rejection with its own code,
// which the fuzz targets treat as a failure.
func (v *validator) runGuarded(f Format) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fail(CodeValidatorFault, "", "the validator failed on this archive (%v); it is refused", p)
		}
	}()
	return v.run(f)
}

func tooLarge(size, limit int64) *Error {
	return fail(CodeTooLarge, "", "the archive is larger than max_artifact_bytes: %s", bytesize.Exceeds(size, limit))
}

// Stable error codes. Errors from the root SKILL.md carry pkg/skillmd's codes
// (invalid_frontmatter, invalid_body, invalid_version, reserved_name,
// reserved_version) unchanged.
const (
	CodeInvalidLimits     = "invalid_limits"     // a negative cap was passed
	CodeTooLarge          = "artifact_too_large" // the archive exceeds max_artifact_bytes
	CodeUnsupportedFormat = "unsupported_format" // the name is not .zip, .tar.gz or .tgz
	CodeFormatMismatch    = "format_mismatch"    // the magic bytes disagree with the extension
	CodeMalformed         = "malformed"          // the container structure is broken or ambiguous
	CodeValidatorFault    = "validator_fault"    // the validator itself failed (a bug); the archive is refused

	CodePathTraversal   = "path_traversal"    // a ".." element
	CodeAbsolutePath    = "absolute_path"     // a leading "/"
	CodeBackslash       = "backslash"         // a "\" anywhere in a name
	CodeInvalidName     = "invalid_name"      // empty, ".", "//", ":", control bytes, invalid UTF-8, what Windows refuses or drops, invisible characters, CP437 zip names
	CodeNameTooLong     = "name_too_long"     // over MaxPathBytes or MaxElementBytes
	CodeDuplicateEntry  = "duplicate_entry"   // equal after NFC and case folding
	CodeFileDirConflict = "file_dir_conflict" // a name that is both a file and a directory

	CodeSymlink          = "symlink"           // any symlink in a zip
	CodeSymlinkEscape    = "symlink_escape"    // a tar symlink resolving outside the root
	CodeSymlinkChain     = "symlink_chain"     // a tar symlink resolving through a symlink
	CodeSymlinkLoop      = "symlink_loop"      // a tar symlink to a directory holding it ("." or "..")
	CodeBeneathSymlink   = "beneath_symlink"   // an entry below a tar symlink
	CodeHardlink         = "hardlink"          // a hard link not naming an earlier regular file
	CodeSpecialFile      = "special_file"      // device, FIFO, socket
	CodeSparseFile       = "sparse_file"       // GNU sparse entries, old or PAX style
	CodeUnsupportedEntry = "unsupported_entry" // PAX global header, volume label, other tar types

	CodeTooManyEntries    = "too_many_entries"    // more than max_entries
	CodeExpandedTooLarge  = "expanded_too_large"  // content beyond max_expanded_bytes
	CodeRatioExceeded     = "ratio_exceeded"      // content beyond max_decompression_ratio × archive size
	CodeMetadataTooLarge  = "metadata_too_large"  // headers beyond max_metadata_bytes
	CodeEncrypted         = "encrypted"           // a zip entry or directory is encrypted
	CodeUnsupportedMethod = "unsupported_method"  // a zip method other than store or deflate
	CodeOverlapping       = "overlapping_entries" // zip entries share bytes (Fifield-style bombs)
	CodeHeaderMismatch    = "header_mismatch"     // a zip local header disagrees with the central directory
	CodeLeadingData       = "leading_data"        // bytes before the first zip local header
	CodeHiddenData        = "hidden_data"         // bytes no zip entry accounts for; zip records in the comment or in stored data before a descriptor
	CodeTrailingData      = "trailing_data"       // bytes after the zip end record or the tar end
	CodeMultistreamGzip   = "multistream_gzip"    // a second gzip member
	CodeChecksumMismatch  = "checksum_mismatch"   // an entry's CRC-32 is wrong
	CodeSizeMismatch      = "size_mismatch"       // an entry inflates to another size than declared
	CodeMissingSkillMD    = "missing_skill_md"    // no regular file named exactly SKILL.md at the root
)

// Error is a rejection: a stable code, the entry concerned ("" for the
// archive as a whole) and a message for people. Err is the underlying cause
// when there is one (a *skillmd.Error for an invalid SKILL.md).
type Error struct {
	Code  string
	Entry string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return e.Code + ": " + e.Msg
	}
	return fmt.Sprintf("%s: entry %q: %s", e.Code, e.Entry, e.Msg)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError unwraps err to an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func fail(code, entry, format string, args ...any) *Error {
	return &Error{Code: code, Entry: clip(entry), Msg: fmt.Sprintf(format, args...)}
}

// clip bounds hostile names echoed into errors and logs.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
