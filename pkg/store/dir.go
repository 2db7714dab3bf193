package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// Dir is a Store over a local directory laid out like the bucket: the key
// "skills/x.md" is the file <root>/skills/x.md.
//
// It promises what S3 promises. Writes are atomic (a reader sees the old
// bytes or the new, never a mix): they go to a temporary file that is synced
// and renamed into place. Conditional writes are race-free between
// goroutines and between processes sharing the directory: every write and
// delete holds an exclusive lock on a lock file (flock on Unix, LockFileEx on
// Windows). ETags are derived from the
// file's identity (device, inode, size, modification time) rather than its
// content, so Get, Head and List never read a file twice: every Put renames
// a new file into place, so the ETag changes with every write (even of the
// same bytes, which S3 with SSE-KMS also does), and an in-place edit by an
// operator changes the modification time.
//
// Paths never leave the root: every access goes through an os.Root, so a
// symlink inside the directory that points outside it reads as a missing
// key. Symlinks that stay inside the root are followed. Only regular files
// are objects; directories, FIFOs and devices read as missing.
//
// Names beginning with "." (at any level) belong to the store, not to the
// bucket layout: its temporary files and lock live in ".skilldrop/", List
// skips dot-files and dot-directories, and such keys are invalid.
type Dir struct {
	root *os.Root
	// tracked are the keys whose files, once written here, leave a witness
	// under dirExisted (DirTracks).
	tracked map[string]bool
	// mu queues this process's writers, so only one of them at a time
	// waits on the flock, which serializes the processes.
	mu sync.Mutex
}

var _ Store = (*Dir)(nil)

const (
	// dirMeta holds the store's own files, invisible to List.
	dirMeta = ".skilldrop"
	dirTemp = dirMeta + "/tmp"
	dirLock = dirMeta + "/lock"
	// dirExisted holds an empty file for each tracked key ever written here.
	dirExisted = dirMeta + "/existed"
	maxKey     = 1024 // S3's limit, in bytes
	fileMode   = 0o644
	dirMode    = 0o755
)

// DirOption configures NewDir.
type DirOption func(*Dir)

// DirTracks makes keys read as a versioned bucket reads them once deleted:
// a key written here (by Put, or found present when the store is opened)
// whose file is gone is ErrRemoved to Head, which is ErrDeleted, as S3's
// delete marker is, rather than a key that never existed. A directory has
// no versions, so this is what tells "deleted" (rm -r catalog/) from "never
// written" (a new directory). The witness is an empty file under
// .skilldrop/existed/; deleting it starts over on purpose.
func DirTracks(keys ...string) DirOption {
	return func(d *Dir) {
		for _, k := range keys {
			d.tracked[k] = true
		}
	}
}

// ErrRemoved is what Head of a key DirTracks names returns when the key's
// file is gone but was written here once. It is ErrDeleted (and so
// ErrNotFound).
var ErrRemoved error = removedError{}

type removedError struct{}

func (removedError) Error() string {
	return "store: the file is gone, and " + dirExisted + "/ records that it was written here (a deletion, not a new directory)"
}

func (removedError) Is(target error) bool { return target == ErrDeleted || target == ErrNotFound }

// NewDir opens the store over the existing directory root. Close releases it.
func NewDir(root string, opts ...DirOption) (*Dir, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open store directory: %w", err)
	}
	d := &Dir{root: r, tracked: map[string]bool{}}
	for _, o := range opts {
		o(d)
	}
	// A tracked key present now (written before it was tracked) is witnessed
	// from here on, where the directory can be written: a reader of a
	// read-only directory opens it all the same (Put witnesses, or fails).
	for key := range d.tracked {
		if _, err := d.head(key); err == nil {
			_ = d.witness(key)
		}
	}
	return d, nil
}

// witness records that the tracked key was written here.
func (d *Dir) witness(key string) error {
	w := dirExisted + "/" + key
	if _, err := d.root.Stat(w); err == nil {
		return nil
	}
	if err := d.root.MkdirAll(path.Dir(w), dirMode); err != nil {
		return err
	}
	f, err := d.root.OpenFile(w, os.O_WRONLY|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	return f.Close()
}

// Path is the directory the store was opened on.
func (d *Dir) Path() string { return d.root.Name() }

// Close releases the directory; the store must not be used afterwards.
func (d *Dir) Close() error { return d.root.Close() }

// Get implements Store.
func (d *Dir) Get(ctx context.Context, key string, opts GetOptions) (*Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	f, info, err := d.open(key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if err := checkGet(key, info, opts); err != nil {
		_ = f.Close()
		return nil, err
	}
	// The open file keeps the bytes its ETag describes: writers replace the
	// name with a rename, never rewrite a file in place.
	if opts.Length <= 0 {
		return &Object{Info: info, Body: f}, nil
	}
	lo, hi := byteRange(info.Size, opts)
	return &Object{Info: info, Body: &section{SectionReader: io.NewSectionReader(f, lo, hi-lo), f: f}}, nil
}

// Head implements Store.
func (d *Dir) Head(ctx context.Context, key string) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if err := checkKey(key); err != nil {
		return Info{}, fmt.Errorf("head %s: %w", key, err)
	}
	info, err := d.head(key)
	if errors.Is(err, ErrNotFound) && d.tracked[key] {
		if _, werr := d.root.Stat(dirExisted + "/" + key); werr == nil {
			err = ErrRemoved
		}
	}
	if err != nil {
		return Info{}, fmt.Errorf("head %s: %w", key, err)
	}
	return info, nil
}

// Put implements Store. The bytes are written and synced before the lock is
// taken, so the lock is held only to check the condition and rename.
func (d *Dir) Put(ctx context.Context, key string, body []byte, opts PutOptions) (info Info, err error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if err := checkKey(key); err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	if err := checkPutOptions(opts); err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	tmp, tmpName, err := d.writeTemp(body)
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer func() {
		_ = tmp.Close()
		if tmpName != "" {
			_ = d.root.Remove(tmpName)
		}
	}()
	unlock, err := d.lock()
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer unlock()

	if opts.IfMatch != "" || opts.IfNoneMatch != "" {
		cur, err := d.head(key)
		switch {
		case errors.Is(err, ErrNotFound):
			if opts.IfMatch != "" {
				return Info{}, fmt.Errorf("put %s if-match %s: %w", key, opts.IfMatch, err)
			}
		case err != nil:
			return Info{}, fmt.Errorf("put %s: %w", key, err)
		case opts.IfNoneMatch != "":
			return Info{}, fmt.Errorf("put %s if-none-match *: %w: the key exists", key, ErrPreconditionFailed)
		case !sameETag(cur.ETag, opts.IfMatch):
			return Info{}, fmt.Errorf("put %s if-match %s: %w: the ETag is now %s", key, opts.IfMatch, ErrPreconditionFailed, cur.ETag)
		}
	}
	if parent := path.Dir(key); parent != "." {
		if err := d.root.MkdirAll(parent, dirMode); err != nil {
			return Info{}, fmt.Errorf("put %s: %w", key, layoutError(err))
		}
	}
	if d.tracked[key] {
		// Before the file: a failure after this reads as a deletion, never
		// as a key that was never written.
		if err := d.witness(key); err != nil {
			return Info{}, fmt.Errorf("put %s: %w", key, err)
		}
	}
	if err := d.root.Rename(tmpName, key); err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, layoutError(err))
	}
	tmpName = ""
	// Still holding the lock: the file at key is the one just renamed.
	fi, err := d.root.Stat(key)
	if err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	return describe(key, fi), nil
}

// List implements Store. It walks only the directories that can hold keys
// with the prefix, and lists regular files (and symlinks to regular files
// inside the root) whose names are valid keys.
func (d *Dir) List(ctx context.Context, prefix string) ([]Info, error) {
	var infos []Info
	err := fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return err
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if !strings.HasPrefix(prefix, p+"/") && !strings.HasPrefix(p+"/", prefix) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(p, prefix) || !validKey(p) {
			return nil // Get could not read it either
		}
		if !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		info, err := d.head(p)
		if errors.Is(err, ErrNotFound) {
			return nil // a symlink to a directory or out of the root, or removed meanwhile
		}
		if err != nil {
			return err
		}
		infos = append(infos, info)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	// Walk order is per directory ("a/b" before "a.md"); keys sort as bytes.
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	return infos, nil
}

// Delete implements Store. It removes the directories the deletion leaves
// empty, up to (never including) the root, so the tree mirrors the keys.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	unlock, err := d.lock()
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	defer unlock()
	fi, err := d.root.Lstat(key)
	if err != nil {
		if errors.Is(classify(err), ErrNotFound) {
			return nil
		}
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if fi.IsDir() {
		return nil // a directory is not an object
	}
	if err := d.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		// Lstat first: Remove would unlink a symlink to a directory.
		if fi, err := d.root.Lstat(dir); err != nil || !fi.IsDir() {
			break
		}
		if d.root.Remove(dir) != nil {
			break // not empty
		}
	}
	return nil
}

// open opens key's regular file and describes it.
func (d *Dir) open(key string) (*os.File, Info, error) {
	// O_NONBLOCK: opening a FIFO planted in the directory must not hang; it
	// changes nothing for regular files.
	f, err := d.root.OpenFile(key, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, Info{}, classify(err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, Info{}, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, Info{}, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotFound, key, fi.Mode().Type())
	}
	return f, describe(key, fi), nil
}

// section is a range of an open file, closed with it.
type section struct {
	*io.SectionReader
	f *os.File
}

func (s *section) Close() error { return s.f.Close() }

// describe builds an object's Info from its file's metadata.
func describe(key string, fi fs.FileInfo) Info {
	var id [32]byte
	fileIdentity(fi, id[:16])
	binary.LittleEndian.PutUint64(id[16:], uint64(fi.Size()))
	binary.LittleEndian.PutUint64(id[24:], uint64(fi.ModTime().UnixNano()))
	sum := sha256.Sum256(id[:])
	return Info{
		Key:          key,
		ETag:         `"` + hex.EncodeToString(sum[:16]) + `"`,
		Size:         fi.Size(),
		LastModified: fi.ModTime().UTC(),
	}
}

func (d *Dir) head(key string) (Info, error) {
	f, info, err := d.open(key)
	if err != nil {
		return Info{}, err
	}
	_ = f.Close()
	return info, nil
}

// writeTemp writes body to a new synced file under dirTemp and returns it
// open, with its name.
func (d *Dir) writeTemp(body []byte) (*os.File, string, error) {
	if err := d.root.MkdirAll(dirTemp, dirMode); err != nil {
		return nil, "", fmt.Errorf("create temporary directory: %w", err)
	}
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	name := dirTemp + "/" + hex.EncodeToString(rnd[:])
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return nil, "", fmt.Errorf("create temporary file: %w", err)
	}
	fail := func(err error) (*os.File, string, error) {
		_ = f.Close()
		_ = d.root.Remove(name)
		return nil, "", fmt.Errorf("write temporary file: %w", err)
	}
	if _, err := f.Write(body); err != nil {
		return fail(err)
	}
	// Synced before the rename, so a crash never leaves a renamed but empty file.
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return f, name, nil
}

// lock takes the store's write lock: the in-process mutex, then an
// exclusive flock on the lock file. The returned function releases both.
func (d *Dir) lock() (func(), error) {
	d.mu.Lock()
	if err := d.root.MkdirAll(dirMeta, dirMode); err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("lock: %w", err)
	}
	f, err := d.root.OpenFile(dirLock, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		d.mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", dirLock, err)
	}
	return func() {
		// Closing the file releases the flock too; unlocking first makes
		// the order explicit.
		_ = unlockFile(f)
		_ = f.Close()
		d.mu.Unlock()
	}, nil
}

// classify turns the errors that mean "no object at this key" into
// ErrNotFound (keeping the cause in the chain).
func classify(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist),
		errors.Is(err, syscall.ENOTDIR), // a parent is a file
		errors.Is(err, syscall.ELOOP),   // a symlink cycle
		isEscape(err):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %w", ErrAccessDenied, err)
	}
	return err
}

// isEscape reports os.Root's refusal to follow a path out of the root. Go
// exports no sentinel for it; TestDirSymlinkEscape pins the classification.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
}

// layoutError explains a key the directory layout cannot hold: a file where
// a directory is needed, or the reverse. S3 has no such limit; bucket
// layouts skilldrop uses never need it.
func layoutError(err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) ||
		errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) {
		return fmt.Errorf("%w: a key cannot be both an object and a prefix of another in a directory store: %w", ErrInvalidKey, err)
	}
	return classify(err)
}

func validKey(key string) bool { return checkKey(key) == nil }

// checkKey accepts clean relative slash-separated paths: no empty, "." or
// ".." element (so no leading or trailing slash), no element starting with
// "." (the store's own), no backslash, no NUL, valid UTF-8, at most 1024
// bytes. Other control bytes are accepted, as S3 accepts them: a key is the
// operator's, and the bucket contract, not the store, decides what it
// means, so the indexer can see such a key and say why it refuses it
// rather than never learn it exists.
func checkKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > maxKey:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidKey, len(key), maxKey)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w %q: not UTF-8", ErrInvalidKey, key)
	case strings.HasPrefix(key, "/"):
		return fmt.Errorf("%w %q: absolute", ErrInvalidKey, key)
	}
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case 0:
			return fmt.Errorf("%w %q: NUL at %d", ErrInvalidKey, key, i)
		case '\\':
			return fmt.Errorf("%w %q: backslash at %d", ErrInvalidKey, key, i)
		}
	}
	for elem := range strings.SplitSeq(key, "/") {
		switch {
		case elem == "":
			return fmt.Errorf("%w %q: empty path element", ErrInvalidKey, key)
		case elem == "." || elem == "..":
			return fmt.Errorf("%w %q: %q element", ErrInvalidKey, key, elem)
		case strings.HasPrefix(elem, "."):
			return fmt.Errorf("%w %q: element %q starts with a dot (reserved, hidden from List)", ErrInvalidKey, key, elem)
		}
	}
	return nil
}
