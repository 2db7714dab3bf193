package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/store/storetest"
)

// helperEnv makes the test binary a second process incrementing a counter
// in a Dir store (see TestDirCrossProcessIncrements).
const helperEnv = "SKILLDROP_STORE_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		if err := helper(spec); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newDir(t testing.TB, root string) *store.Dir {
	t.Helper()
	d, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestDirContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newDir(t, t.TempDir()) })
}

func TestDirLayoutOnDisk(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root)
	ctx := t.Context()
	body := []byte("---\nname: x\n---\n")
	put, err := d.Put(ctx, "skills/x/SKILL.md", body, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(root, "skills", "x", "SKILL.md"))
	if err != nil || !bytes.Equal(onDisk, body) {
		t.Fatalf("file on disk = %q, %v; want the bytes put", onDisk, err)
	}
	head, err := d.Head(ctx, "skills/x/SKILL.md")
	if err != nil || head.ETag != put.ETag || put.ETag == "" {
		t.Fatalf("Head ETag = %s (%v), Put ETag = %s: they must agree", head.ETag, err, put.ETag)
	}
	// An operator editing the file in place (same size, later time) changes the ETag.
	path := filepath.Join(root, "skills", "x", "SKILL.md")
	if err := os.WriteFile(path, []byte("---\nname: y\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if edited, err := d.Head(ctx, "skills/x/SKILL.md"); err != nil || edited.ETag == put.ETag {
		t.Errorf("ETag after an in-place edit = %s (%v), unchanged from %s", edited.ETag, err, put.ETag)
	}

	// A file dropped by hand is an object, with the file's modification time.
	dropped := filepath.Join(root, "skills", "dropped.md")
	if err := os.WriteFile(dropped, []byte("by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(dropped, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	info, err := d.Head(ctx, "skills/dropped.md")
	if err != nil {
		t.Fatal(err)
	}
	if !info.LastModified.Equal(mtime) || info.Size != 7 {
		t.Errorf("Head(dropped) = %+v, want size 7 and LastModified %v", info, mtime)
	}

	// No temporary file is left behind, after a success or a refusal.
	if _, err := d.Put(ctx, "skills/x/SKILL.md", []byte("y"), store.PutOptions{IfNoneMatch: "*"}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("create over an existing key = %v", err)
	}
	tmp, err := os.ReadDir(filepath.Join(root, ".skilldrop", "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tmp) != 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

func TestDirRejectsHostileKeys(t *testing.T) {
	root := t.TempDir()
	parent := filepath.Dir(root)
	d := newDir(t, root)
	ctx := t.Context()
	keys := []struct {
		name, key string
	}{
		{"empty", ""},
		{"absolute", "/etc/passwd"},
		{"parent element", "../escape"},
		{"parent element inside", "skills/../../escape"},
		{"dot element", "skills/./x.md"},
		{"empty element", "skills//x.md"},
		{"trailing slash", "skills/"},
		{"backslash", `skills\..\x.md`},
		{"NUL", "skills/x\x00.md"},
		{"invalid UTF-8", "skills/\xff.md"},
		{"dot-file", "skills/.hidden.md"},
		{"store's own directory", ".skilldrop/lock"},
		{"too long", strings.Repeat("a/", 600) + "x"},
	}
	for _, tc := range keys {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := d.Put(ctx, tc.key, []byte("x"), store.PutOptions{}); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Put(%q) = %v, want ErrInvalidKey", tc.key, err)
			}
			if _, err := d.Get(ctx, tc.key, store.GetOptions{}); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Get(%q) = %v, want ErrInvalidKey", tc.key, err)
			}
			if _, err := d.Head(ctx, tc.key); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Head(%q) = %v, want ErrInvalidKey", tc.key, err)
			}
			if err := d.Delete(ctx, tc.key); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Delete(%q) = %v, want ErrInvalidKey", tc.key, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(parent, "escape")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file appeared outside the root: %v", err)
	}
}

func TestDirNeverLeavesTheRoot(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mustMkdir(t, filepath.Join(root, "skills"))
	links := map[string]string{
		"skills/passwd.md":   "/etc/passwd",                                               // absolute, out
		"skills/secret.md":   filepath.Join("..", "..", filepath.Base(outside), "secret"), // relative, out
		"skills/escape":      outside,                                                     // a directory, out
		"skills/alias.md":    "real.md",                                                   // inside: followed
		"skills/aliasdir":    "realdir",                                                   // inside, a directory: not an object
		"skills/dangling.md": "nowhere.md",
		"skills/loop.md":     "loop.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "skills", "real.md"), []byte("real"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(root, "skills", "realdir"))
	if err := syscall.Mkfifo(filepath.Join(root, "skills", "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDir(t, root)
	ctx := t.Context()

	for _, key := range []string{
		"skills/passwd.md", "skills/secret.md", "skills/escape/secret", "skills/aliasdir",
		"skills/dangling.md", "skills/loop.md", "skills/fifo.md",
	} {
		obj, err := d.Get(ctx, key, store.GetOptions{})
		if !errors.Is(err, store.ErrNotFound) {
			if obj != nil {
				b, _ := io.ReadAll(obj.Body)
				_ = obj.Body.Close()
				t.Errorf("Get(%s) served %d bytes (%q...)", key, len(b), b[:min(len(b), 20)])
			}
			t.Errorf("Get(%s) = %v, want ErrNotFound", key, err)
		}
		if _, err := d.Head(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Head(%s) = %v, want ErrNotFound", key, err)
		}
	}
	if b, _, err := store.ReadAll(ctx, d, "skills/alias.md", 0); err != nil || string(b) != "real" {
		t.Errorf("a symlink inside the root reads %q, %v; want %q", b, err, "real")
	}

	infos, err := d.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, in := range infos {
		keys = append(keys, in.Key)
	}
	if want := []string{"skills/alias.md", "skills/real.md"}; !slices.Equal(keys, want) {
		t.Errorf("List = %q, want %q", keys, want)
	}

	// Writes and deletes through the escaping directory link touch nothing outside.
	if _, err := d.Put(ctx, "skills/escape/planted", []byte("x"), store.PutOptions{}); err == nil {
		t.Error("Put through a symlink out of the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Put wrote outside the root: %v", err)
	}
	if err := d.Delete(ctx, "skills/escape/secret"); err != nil {
		t.Errorf("Delete through a symlink out of the root = %v, want nil (nothing there)", err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("Delete removed a file outside the root: %v", err)
	}
	// Deleting the link key removes the link, never its target.
	if err := d.Delete(ctx, "skills/passwd.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "skills", "passwd.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("/etc/passwd: %v", err)
	}
}

func TestDirListSkipsDotEntries(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{
		".DS_Store", ".git/config", "skills/.hidden.md", "skills/.cache/x.md",
		".skilldrop/tmp/0123", "skills/visible.md", "skills/bad\\name.md", "skills/\x1bescape.md",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		mustMkdir(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := newDir(t, root)
	infos, err := d.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	// A control byte is an odd key, not the store's: it is listed (as S3
	// lists it) for the indexer to refuse with a reason.
	var got []string
	for _, in := range infos {
		got = append(got, in.Key)
	}
	if want := []string{"skills/\x1bescape.md", "skills/visible.md"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
}

func TestDirDeletePrunesEmptyDirectories(t *testing.T) {
	root := t.TempDir()
	d := newDir(t, root)
	ctx := t.Context()
	for _, k := range []string{"listings/p/skills/a/SKILL.md", "listings/p/other.md", "top.md"} {
		if _, err := d.Put(ctx, k, []byte(k), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// An operator's symlink to a directory must survive even when it empties.
	mustMkdir(t, filepath.Join(root, "real"))
	if err := os.Symlink("real", filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, "linked/x.md", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		del     string
		gone    []string
		present []string
	}{
		{"listings/p/skills/a/SKILL.md", []string{"listings/p/skills/a", "listings/p/skills"}, []string{"listings/p", "listings/p/other.md"}},
		{"listings/p/other.md", []string{"listings/p", "listings"}, []string{"top.md"}},
		{"top.md", []string{"top.md"}, []string{"."}},
		{"linked/x.md", []string{"real/x.md"}, []string{"linked", "real"}},
	}
	for _, st := range steps {
		if err := d.Delete(ctx, st.del); err != nil {
			t.Fatalf("Delete(%s): %v", st.del, err)
		}
		for _, p := range st.gone {
			if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Delete(%s), %s remains (%v)", st.del, p, err)
			}
		}
		for _, p := range st.present {
			if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
				t.Errorf("after Delete(%s), %s is gone: %v", st.del, p, err)
			}
		}
	}
}

func TestDirKeyThatIsAlsoAPrefix(t *testing.T) {
	cases := []struct {
		name, first, second string
	}{
		{"file then a key below it", "skills/a", "skills/a/SKILL.md"},
		{"directory then a key equal to it", "skills/a/SKILL.md", "skills/a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t, t.TempDir())
			if _, err := d.Put(t.Context(), tc.first, []byte("1"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Put(t.Context(), tc.second, []byte("2"), store.PutOptions{}); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Put(%s) = %v, want ErrInvalidKey", tc.second, err)
			}
			if b, _, err := store.ReadAll(t.Context(), d, tc.first, 0); err != nil || string(b) != "1" {
				t.Errorf("%s reads %q, %v after the refused Put", tc.first, b, err)
			}
		})
	}
}

func TestNewDirNeedsADirectory(t *testing.T) {
	if _, err := store.NewDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("NewDir(missing) succeeded")
	}
}

// TestDirCrossProcessIncrements runs the lost-update check across
// processes: helper processes (this test binary, re-executed) and two Dir
// values in this process increment one counter at the same time.
func TestDirCrossProcessIncrements(t *testing.T) {
	const (
		procs      = 3
		goroutines = 4
		increments = 15
	)
	root := t.TempDir()
	d := newDir(t, root)
	if _, err := d.Put(t.Context(), "counter", []byte("0"), store.PutOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf("%s|%d|%d", root, goroutines, increments)
	var cmds []*exec.Cmd
	var outputs []*bytes.Buffer
	for range procs {
		cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+spec)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outputs = append(cmds, cmd), append(outputs, out)
	}
	// A second Dir on the same root has its own lock file descriptor, so it
	// is serialized with the first by the flock, not the mutex.
	local := []store.Store{d, newDir(t, root)}
	var wg sync.WaitGroup
	errs := make(chan error, len(local)*goroutines)
	for _, s := range local {
		for range goroutines {
			wg.Go(func() {
				if err := increment(context.Background(), s, increments); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outputs[i])
		}
	}
	want := (procs + len(local)) * goroutines * increments
	b, _, err := store.ReadAll(t.Context(), d, "counter", 64)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != strconv.Itoa(want) {
		t.Errorf("counter = %s, want %d: updates were lost between processes", b, want)
	}
}

// helper is the second process's side of TestDirCrossProcessIncrements.
func helper(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	goroutines, err1 := strconv.Atoi(parts[1])
	increments, err2 := strconv.Atoi(parts[2])
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	d, err := store.NewDir(parts[0])
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			if err := increment(context.Background(), d, increments); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// increment lands n increments on "counter" with IfMatch, retrying lost races.
func increment(ctx context.Context, s store.Store, n int) error {
	for range n {
		for {
			b, info, err := store.ReadAll(ctx, s, "counter", 64)
			if err != nil {
				return err
			}
			v, err := strconv.Atoi(string(b))
			if err != nil {
				return fmt.Errorf("counter holds %q: %w", b, err)
			}
			_, err = s.Put(ctx, "counter", []byte(strconv.Itoa(v+1)), store.PutOptions{IfMatch: info.ETag})
			if errors.Is(err, store.ErrPreconditionFailed) {
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	return nil
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkDirPut4KiB(b *testing.B) {
	d := newDir(b, b.TempDir())
	body := bytes.Repeat([]byte("x"), 4<<10)
	b.SetBytes(int64(len(body)))
	for i := 0; b.Loop(); i++ {
		if _, err := d.Put(b.Context(), "skills/k"+strconv.Itoa(i%100)+".md", body, store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirGet1MiB(b *testing.B) {
	d := newDir(b, b.TempDir())
	body := bytes.Repeat([]byte("x"), 1<<20)
	if _, err := d.Put(b.Context(), "blobs/sha256/x", body, store.PutOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, err := store.ReadAll(b.Context(), d, "blobs/sha256/x", 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirList1000(b *testing.B) {
	d := newDir(b, b.TempDir())
	for i := range 1000 {
		if _, err := d.Put(b.Context(), fmt.Sprintf("skills/s%04d.md", i), []byte("---\nname: x\n---\n"), store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		infos, err := d.List(b.Context(), "skills/")
		if err != nil || len(infos) != 1000 {
			b.Fatal(len(infos), err)
		}
	}
}

// TestDirTracksDeletions: a tracked key written here and then gone (its
// file removed behind the store's back, its folder too, or deleted through
// the store) is ErrRemoved to Head, which is ErrDeleted, as a versioned
// bucket's delete marker; a tracked key never written is plain
// ErrNotFound, as is an untracked key that is gone. A key present before
// it was tracked is witnessed when the store opens; removing the witness
// starts over.
func TestDirTracksDeletions(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	open := func() *store.Dir {
		d, err := store.NewDir(root, store.DirTracks("catalog/catalog.json"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	d := open()
	if _, err := d.Head(ctx, "catalog/catalog.json"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrDeleted) {
		t.Fatalf("a tracked key never written: %v, want not found and not deleted", err)
	}
	for _, key := range []string{"catalog/catalog.json", "catalog/status.json"} {
		if _, err := d.Put(ctx, key, []byte("{}"), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, "catalog")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Head(ctx, "catalog/catalog.json"); !errors.Is(err, store.ErrRemoved) || !errors.Is(err, store.ErrDeleted) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a tracked key removed behind the store's back: %v, want ErrRemoved (deleted, not found)", err)
	}
	if _, err := d.Head(ctx, "catalog/status.json"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrDeleted) {
		t.Fatalf("an untracked key removed: %v, want not found only", err)
	}
	if _, err := open().Head(ctx, "catalog/catalog.json"); !errors.Is(err, store.ErrRemoved) {
		t.Fatalf("a store opened again forgot the deletion: %v", err)
	}
	if keys, err := d.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("the witness is listed: %v %v", keys, err)
	}
	if _, err := d.Put(ctx, "catalog/catalog.json", []byte("{}"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "catalog/catalog.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Head(ctx, "catalog/catalog.json"); !errors.Is(err, store.ErrRemoved) {
		t.Fatalf("a tracked key deleted through the store: %v, want ErrRemoved", err)
	}
	// Starting over on purpose: the witness removed.
	if err := os.RemoveAll(filepath.Join(root, ".skilldrop", "existed")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Head(ctx, "catalog/catalog.json"); errors.Is(err, store.ErrDeleted) {
		t.Fatalf("with the witness removed: %v, want not found only", err)
	}
	// A key written before it was tracked is witnessed once a store tracks it.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "catalog", "catalog.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := store.NewDir(other, store.DirTracks("catalog/catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = o.Close() }()
	if err := os.Remove(filepath.Join(other, "catalog", "catalog.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Head(ctx, "catalog/catalog.json"); !errors.Is(err, store.ErrRemoved) {
		t.Fatalf("a key present when the store opened, then removed: %v, want ErrRemoved", err)
	}
}
