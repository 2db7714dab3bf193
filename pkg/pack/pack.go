// Package pack packs a skill folder into one zip archive, the form in which
// a multi-file skill reaches the bucket: uploaded as one object, it is never
// seen half-written.
//
// The archive is deterministic: the same files give the same bytes (entries
// sorted by name, one fixed modification time, permissions reduced to
// 0644/0755, no directory entries), so re-publishing an unchanged folder is
// a no-op for the indexer rather than a version_exists rejection.
//
// Dot-files and dot-directories (.env, .npmrc, .git, …) are never packed:
// the archive is served publicly, and a skill folder that is also a working
// copy holds credentials there more often than anything a skill needs. They
// are left out rather than refused, so a checkout publishes as it is, and
// Folder names them so the operator can see what was not shipped.
package pack

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// Epoch is the modification time of every entry: the earliest time a zip
// header can hold, so no clock or time zone leaks into the bytes.
var Epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrUnsupported is wrapped by the error for a symlink or special file,
// which a skill archive may not hold (a *FileError).
var ErrUnsupported = errors.New("pack: unsupported file")

// FileError is a file of the folder Zip refuses to pack. It wraps
// ErrUnsupported.
type FileError struct {
	Name string // slash-separated, relative to the folder
	// Symlink is set for a symlink; otherwise the file is special (a
	// device, FIFO or socket).
	Symlink bool
}

func (e *FileError) Error() string {
	if e.Symlink {
		return "pack: " + e.Name + " is a symlink; an archive holds regular files only"
	}
	return "pack: " + e.Name + " is not a regular file; an archive holds regular files only"
}

// Unwrap returns ErrUnsupported.
func (e *FileError) Unwrap() error { return ErrUnsupported }

// ErrTooLarge is wrapped when the files hold more than the allowed bytes.
var ErrTooLarge = errors.New("pack: folder too large")

// Packed is a packed folder.
type Packed struct {
	Zip []byte
	// LeftOut are the dot-files and dot-directories not packed, sorted,
	// slash-separated and relative to the folder; a directory ends in "/"
	// and stands for everything below it.
	LeftOut []string
}

// Zip is Folder's archive alone.
func Zip(fsys fs.FS, maxContent int64) ([]byte, error) {
	p, err := Folder(fsys, maxContent)
	if err != nil {
		return nil, err
	}
	return p.Zip, nil
}

// Folder packs every regular file of fsys (os.DirFS of the folder) into a
// zip archive, reading at most maxContent bytes of file content (<= 0: no
// limit). Symlinks and special files are refused (a *FileError); dot-files
// and dot-directories are left out and listed in LeftOut. It does not
// validate the skill: callers run the result through the same rules as the
// indexer.
func Folder(fsys fs.FS, maxContent int64) (*Packed, error) {
	type file struct {
		name string
		mode fs.FileMode
	}
	var files []file
	var leftOut []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				leftOut = append(leftOut, p+"/")
				return fs.SkipDir
			}
			leftOut = append(leftOut, p)
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return &FileError{Name: p, Symlink: true}
		case !d.Type().IsRegular():
			return &FileError{Name: p}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, file{name: p, mode: info.Mode()})
		return nil
	})
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		return nil, fe // already says "pack:"
	case err != nil:
		return nil, fmt.Errorf("pack: %w", err)
	}
	slices.Sort(leftOut)
	slices.SortFunc(files, func(a, b file) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var total int64
	for _, f := range files {
		h := &zip.FileHeader{Name: path.Clean(f.name), Method: zip.Deflate, Modified: Epoch}
		mode := fs.FileMode(0o644)
		if f.mode&0o111 != 0 {
			mode = 0o755
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", f.name, err)
		}
		n, err := copyFile(w, fsys, f.name, maxContent-total, maxContent > 0)
		total += n
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("%w: the files hold more than %d bytes (at %s)", ErrTooLarge, maxContent, f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	return &Packed{Zip: buf.Bytes(), LeftOut: leftOut}, nil
}

func copyFile(w io.Writer, fsys fs.FS, name string, budget int64, bounded bool) (int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, fmt.Errorf("pack: %w", err)
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if bounded {
		r = io.LimitReader(f, budget+1)
	}
	n, err := io.Copy(w, r)
	if err != nil {
		return n, fmt.Errorf("pack %s: %w", name, err)
	}
	if bounded && n > budget {
		return n, ErrTooLarge
	}
	return n, nil
}
