package archive

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"sort"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// File is one regular file of an accepted archive, as the validator read
// it: its cleaned path, the SHA-256 digest and size of its content, the
// media type its name (or, without a known extension, its content)
// implies, and the content itself, so that a caller can store each file
// without reading the archive again. A tar hard link is a file of its own,
// with its target's content; symlinks are not files.
type File struct {
	Path      string
	Digest    digest.Digest
	Size      int64
	MediaType string
	Data      []byte
}

// fileRecord collects one file's content and digest while readContent
// reads it.
type fileRecord struct {
	path string
	buf  bytes.Buffer
	sum  hash.Hash
}

// newRecord starts the record of the file at path, sized for the bytes it
// declares, within what the content cap still allows.
func (v *validator) newRecord(path string, declared int64) *fileRecord {
	r := &fileRecord{path: path, sum: sha256.New()}
	if room := v.contentCap - v.content; declared > 0 && room > 0 {
		r.buf.Grow(int(min(declared, room)))
	}
	return r
}

// Write receives the content as it is read.
func (r *fileRecord) Write(p []byte) (int, error) {
	r.sum.Write(p)
	return r.buf.Write(p)
}

// keepFile adds a completely read file.
func (v *validator) keepFile(r *fileRecord) {
	var sum [sha256.Size]byte
	r.sum.Sum(sum[:0])
	data := r.buf.Bytes()
	v.files = append(v.files, File{
		Path:      r.path,
		Digest:    digest.FromSum(sum),
		Size:      int64(len(data)),
		MediaType: MediaType(r.path, data),
		Data:      data,
	})
	v.byPath[v.reg.key(r.path)] = len(v.files) - 1
}

// keepLink adds a tar hard link as a file with its target's content (the
// target is an earlier regular file: checkHardlink made sure).
func (v *validator) keepLink(path, target string) {
	t, err := cleanName(target, false)
	if err != nil {
		return
	}
	i, ok := v.byPath[v.reg.key(t)]
	if !ok {
		return
	}
	f := v.files[i]
	f.Path, f.MediaType = path, MediaType(path, f.Data)
	v.files = append(v.files, f)
	v.byPath[v.reg.key(path)] = len(v.files) - 1
}

// sortedFiles returns the files in path order.
func (v *validator) sortedFiles() []File {
	sort.Slice(v.files, func(i, j int) bool { return v.files[i].Path < v.files[j].Path })
	return v.files
}
