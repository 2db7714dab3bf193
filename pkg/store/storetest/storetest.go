// Package storetest is the contract every store.Store implementation passes:
// one suite, run against S3 (in the emulator), the local directory and the
// in-memory store, so they behave the same to the code built on them.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// Options tune the suite for an implementation.
type Options struct {
	// Workers is how many goroutines the concurrency tests run (default 24).
	Workers int
	// Increments is how many increments each worker lands on the shared
	// counter (default 4).
	Increments int
}

// Run runs the contract suite. newStore returns an empty store for one
// subtest (a fresh bucket or directory); subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	RunWith(t, newStore, Options{})
}

// RunWith is Run with options.
func RunWith(t *testing.T, newStore func(t *testing.T) store.Store, o Options) {
	if o.Workers <= 0 {
		o.Workers = 24
	}
	if o.Increments <= 0 {
		o.Increments = 4
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"MissingKeyIsNotFound", testMissing},
		{"PutGetRoundTrip", testRoundTrip},
		{"ETagChangesOnlyWithTheBytes", testETag},
		{"GetIfNoneMatch", testGetIfNoneMatch},
		{"GetIfMatch", testGetIfMatch},
		{"GetRange", testGetRange},
		{"GetVersion", testGetVersion},
		{"PutIfNoneMatchStar", testPutIfNoneMatch},
		{"PutIfMatch", testPutIfMatch},
		{"PutRejectsContradictoryOptions", testPutOptions},
		{"ListByPrefixInKeyOrder", testList},
		{"ListPaginatesPast1000Keys", testListMany},
		{"ListReturnsKeysAsStored", testListOddKeys},
		{"DeleteIsIdempotent", testDelete},
		{"ReadAllLimit", testReadAll},
		{"ConcurrentIncrementsAllLand", func(t *testing.T, s store.Store) { testIncrements(t, s, o) }},
		{"ConcurrentCreateHasOneWinner", func(t *testing.T, s store.Store) { testCreateRace(t, s, o) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

func testMissing(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "skills/missing.md"
	if _, err := s.Head(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head(missing) = %v, want ErrNotFound", err)
	}
	if obj, err := s.Get(ctx, key, store.GetOptions{}); !errors.Is(err, store.ErrNotFound) {
		closeObj(obj)
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
	if obj, err := s.Get(ctx, key, store.GetOptions{IfNoneMatch: `"0123456789abcdef0123456789abcdef"`}); !errors.Is(err, store.ErrNotFound) {
		closeObj(obj)
		t.Errorf("Get(missing, IfNoneMatch) = %v, want ErrNotFound", err)
	}
	// A prefix of an existing key is not an object.
	mustPut(t, s, "skills/dir/SKILL.md", []byte("x"), store.PutOptions{})
	if _, err := s.Head(ctx, "skills/dir"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head(prefix of a key) = %v, want ErrNotFound", err)
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	binary := make([]byte, 256*3)
	for i := range binary {
		binary[i] = byte(i)
	}
	large := make([]byte, 1<<20+7)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range large {
		large[i] = byte(r.Uint32())
	}
	cases := []struct {
		name, key string
		body      []byte
	}{
		{"text", "skills/deploy-via-pr.md", []byte("---\nname: deploy-via-pr\n---\nbody\n")},
		{"empty body", "files/empty", []byte{}},
		{"every byte value", "blobs/sha256/binary", binary},
		{"one MiB and a bit", "skills/large.zip", large},
		{"space plus and non-ASCII in the key", "skills/my skill+1 é.md", []byte("spaces")},
		// moto cannot route a key with a line break; S3 takes any byte but NUL.
		{"control bytes in the key", "skills/\x1bbad\t\x7f.md", []byte("control")},
		{"top-level key", "agent-skills.yaml", []byte("version: 1\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			put := mustPut(t, s, tc.key, tc.body, store.PutOptions{ContentType: "application/octet-stream"})
			t.Cleanup(func() { _ = s.Delete(context.Background(), tc.key) }) // see testListOddKeys
			if put.Key != tc.key || put.Size != int64(len(tc.body)) || put.ETag == "" {
				t.Errorf("Put returned %+v, want key %q, size %d and an ETag", put, tc.key, len(tc.body))
			}
			got, info := mustGet(t, s, tc.key)
			if !bytes.Equal(got, tc.body) {
				t.Errorf("Get returned %d bytes, want the %d put", len(got), len(tc.body))
			}
			if info.Key != tc.key || info.Size != int64(len(tc.body)) || info.ETag != put.ETag {
				t.Errorf("Get info %+v, want key %q size %d ETag %s", info, tc.key, len(tc.body), put.ETag)
			}
			if info.LastModified.IsZero() {
				t.Error("Get: LastModified is zero")
			}
			head, err := s.Head(ctx, tc.key)
			if err != nil {
				t.Fatalf("Head: %v", err)
			}
			if head.Key != tc.key || head.Size != info.Size || head.ETag != info.ETag || !head.LastModified.Equal(info.LastModified) {
				t.Errorf("Head %+v differs from Get %+v", head, info)
			}
		})
	}
}

func testETag(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "catalog/catalog.json"
	first := mustPut(t, s, key, []byte("one"), store.PutOptions{})
	for range 2 {
		h, err := s.Head(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if h.ETag != first.ETag {
			t.Fatalf("ETag moved without a write: %s then %s", first.ETag, h.ETag)
		}
	}
	if !quoted(first.ETag) {
		t.Errorf("ETag %s is not quoted, as S3 returns it", first.ETag)
	}
	seen := map[string]string{first.ETag: "one"}
	for _, body := range []string{"two", "one!", "", "owt"} {
		p := mustPut(t, s, key, []byte(body), store.PutOptions{})
		if prev, dup := seen[p.ETag]; dup {
			t.Errorf("bytes %q got ETag %s, already given to %q", body, p.ETag, prev)
		}
		seen[p.ETag] = body
		if h, err := s.Head(ctx, key); err != nil || h.ETag != p.ETag {
			t.Errorf("Head after Put(%q) = %+v, %v; want ETag %s", body, h, err, p.ETag)
		}
	}
}

func testGetIfNoneMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "catalog/catalog.json"
	v1 := mustPut(t, s, key, []byte("v1"), store.PutOptions{})
	for _, etag := range []string{v1.ETag, unquote(v1.ETag)} {
		obj, err := s.Get(ctx, key, store.GetOptions{IfNoneMatch: etag})
		if !errors.Is(err, store.ErrNotModified) {
			closeObj(obj)
			t.Errorf("Get IfNoneMatch %s (current) = %v, want ErrNotModified", etag, err)
		}
	}
	v2 := mustPut(t, s, key, []byte("v2"), store.PutOptions{})
	obj, err := s.Get(ctx, key, store.GetOptions{IfNoneMatch: v1.ETag})
	if err != nil {
		t.Fatalf("Get IfNoneMatch stale ETag: %v, want the new body", err)
	}
	defer closeObj(obj)
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "v2" || obj.ETag != v2.ETag {
		t.Errorf("Get IfNoneMatch stale ETag returned %q with ETag %s, want %q with %s", b, obj.ETag, "v2", v2.ETag)
	}
}

func testGetIfMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "catalog/catalog.json"
	if _, err := s.Get(ctx, key, store.GetOptions{IfMatch: `"0123456789abcdef0123456789abcdef"`}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(missing, IfMatch) = %v, want ErrNotFound", err)
	}
	v1 := mustPut(t, s, key, []byte("v1"), store.PutOptions{})
	for _, etag := range []string{v1.ETag, unquote(v1.ETag)} {
		obj, err := s.Get(ctx, key, store.GetOptions{IfMatch: etag})
		if err != nil {
			t.Fatalf("Get IfMatch %s (current) = %v", etag, err)
		}
		b, _ := io.ReadAll(obj.Body)
		closeObj(obj)
		if string(b) != "v1" {
			t.Errorf("Get IfMatch current = %q, want v1", b)
		}
	}
	mustPut(t, s, key, []byte("v2"), store.PutOptions{})
	if obj, err := s.Get(ctx, key, store.GetOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPreconditionFailed) {
		closeObj(obj)
		t.Errorf("Get IfMatch stale ETag = %v, want ErrPreconditionFailed", err)
	}
}

func testGetRange(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "catalog/catalog.json"
	body := make([]byte, 100)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	info := mustPut(t, s, key, body, store.PutOptions{})
	cases := []struct {
		name           string
		offset, length int64
		want           []byte
	}{
		{"inside", 10, 20, body[10:30]},
		{"first byte", 0, 1, body[:1]},
		{"to the end", 90, 10, body[90:]},
		{"clipped at the end", 95, 50, body[95:]},
		{"whole", 0, 100, body},
	}
	for _, c := range cases {
		obj, err := s.Get(ctx, key, store.GetOptions{Offset: c.offset, Length: c.length, IfMatch: info.ETag})
		if err != nil {
			t.Fatalf("%s: Get range %d+%d: %v", c.name, c.offset, c.length, err)
		}
		b, err := io.ReadAll(obj.Body)
		closeObj(obj)
		if err != nil || !bytes.Equal(b, c.want) {
			t.Errorf("%s: Get range %d+%d = %q, %v; want %q", c.name, c.offset, c.length, b, err, c.want)
		}
		if obj.Size != 100 || !sameTag(obj.ETag, info.ETag) {
			t.Errorf("%s: Get range reports size %d, ETag %s; want the whole object's: 100, %s", c.name, obj.Size, obj.ETag, info.ETag)
		}
	}
	if obj, err := s.Get(ctx, key, store.GetOptions{Offset: 100, Length: 1}); !errors.Is(err, store.ErrInvalidRange) {
		closeObj(obj)
		t.Errorf("Get range past the end = %v, want ErrInvalidRange", err)
	}
	mustPut(t, s, key, []byte("replaced"), store.PutOptions{})
	if obj, err := s.Get(ctx, key, store.GetOptions{Offset: 0, Length: 4, IfMatch: info.ETag}); !errors.Is(err, store.ErrPreconditionFailed) {
		closeObj(obj)
		t.Errorf("Get range of a replaced object IfMatch its old ETag = %v, want ErrPreconditionFailed", err)
	}
}

// testGetVersion: the version id a Put reports reads that version. Stores
// without versioning report none and know no other; a version the key
// never had is ErrNoSuchVersion (so ErrNotFound) in either kind of store.
func testGetVersion(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "rendered/doc.json"
	v1 := mustPut(t, s, key, []byte("one"), store.PutOptions{})
	if head, err := s.Head(ctx, key); err != nil || head.VersionID != v1.VersionID {
		t.Errorf("Head version = %q, %v; Put reported %q", head.VersionID, err, v1.VersionID)
	}
	// The example version id of S3's documentation: a catalog written in
	// another bucket pins ids like it.
	if obj, err := s.Get(ctx, key, store.GetOptions{VersionID: "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"}); !errors.Is(err, store.ErrNoSuchVersion) || !errors.Is(err, store.ErrNotFound) {
		closeObj(obj)
		t.Errorf("Get of a version the key never had = %v, want ErrNoSuchVersion and ErrNotFound", err)
	}
	if v1.VersionID == "" {
		return
	}
	mustPut(t, s, key, []byte("two"), store.PutOptions{})
	obj, err := s.Get(ctx, key, store.GetOptions{VersionID: v1.VersionID})
	if err != nil {
		t.Fatalf("Get version %s: %v", v1.VersionID, err)
	}
	b, _ := io.ReadAll(obj.Body)
	closeObj(obj)
	if string(b) != "one" || obj.VersionID != v1.VersionID {
		t.Errorf("Get version %s = %q (version %q), want the first bytes", v1.VersionID, b, obj.VersionID)
	}
	// A delete hides the key, not its versions.
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head after Delete = %v, want ErrNotFound", err)
	}
	obj, err = s.Get(ctx, key, store.GetOptions{VersionID: v1.VersionID, Length: 2})
	if err != nil {
		t.Fatalf("Get version %s after Delete: %v", v1.VersionID, err)
	}
	b, _ = io.ReadAll(obj.Body)
	closeObj(obj)
	if string(b) != "on" || obj.Size != 3 {
		t.Errorf("Get 2 bytes of version %s after Delete = %q (size %d)", v1.VersionID, b, obj.Size)
	}
}

func sameTag(a, b string) bool { return unquote(a) == unquote(b) }

func testPutIfNoneMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "blobs/sha256/abc"
	created := mustPut(t, s, key, []byte("first"), store.PutOptions{IfNoneMatch: "*"})
	_, err := s.Put(ctx, key, []byte("second"), store.PutOptions{IfNoneMatch: "*"})
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("second create = %v, want ErrPreconditionFailed", err)
	}
	got, info := mustGet(t, s, key)
	if string(got) != "first" || info.ETag != created.ETag {
		t.Errorf("after a refused create the object is %q (%s), want %q (%s)", got, info.ETag, "first", created.ETag)
	}
}

func testPutIfMatch(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "catalog/catalog.json"
	v1 := mustPut(t, s, key, []byte("v1"), store.PutOptions{})
	v2, err := s.Put(ctx, key, []byte("v2"), store.PutOptions{IfMatch: v1.ETag})
	if err != nil {
		t.Fatalf("Put IfMatch current ETag: %v", err)
	}
	if v2.ETag == v1.ETag {
		t.Errorf("conditional overwrite kept ETag %s", v2.ETag)
	}
	if _, err := s.Put(ctx, key, []byte("v3"), store.PutOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("Put IfMatch stale ETag = %v, want ErrPreconditionFailed", err)
	}
	if got, info := mustGet(t, s, key); string(got) != "v2" || info.ETag != v2.ETag {
		t.Errorf("after a refused Put the object is %q (%s), want %q (%s)", got, info.ETag, "v2", v2.ETag)
	}
	if _, err := s.Put(ctx, key, []byte("v3"), store.PutOptions{IfMatch: unquote(v2.ETag)}); err != nil {
		t.Errorf("Put IfMatch with the unquoted current ETag: %v", err)
	}

	const missing = "catalog/missing.json"
	if _, err := s.Put(ctx, missing, []byte("x"), store.PutOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Put IfMatch on a missing key = %v, want ErrNotFound", err)
	}
	if _, err := s.Head(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused IfMatch Put created the key: Head = %v", err)
	}
}

func testPutOptions(t *testing.T, s store.Store) {
	ctx := t.Context()
	cases := []struct {
		name string
		opts store.PutOptions
	}{
		{"IfMatch and IfNoneMatch together", store.PutOptions{IfMatch: `"abc"`, IfNoneMatch: "*"}},
		{"IfNoneMatch other than *", store.PutOptions{IfNoneMatch: `"abc"`}},
	}
	for _, tc := range cases {
		const key = "skills/options.md"
		if _, err := s.Put(ctx, key, []byte("x"), tc.opts); err == nil {
			t.Errorf("%s: Put succeeded, want an error", tc.name)
		}
		if _, err := s.Head(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the refused Put wrote the key (Head = %v)", tc.name, err)
		}
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := t.Context()
	keys := []string{
		"skills/a/SKILL.md", "skills/ab.md", "skills/a.md", "skills/b.md",
		"skillsz", "subagents/x.md", "agent-skills.yaml", "listings/p/skills/a.md",
	}
	etags := map[string]string{}
	for i, k := range keys {
		etags[k] = mustPut(t, s, k, []byte(k+strconv.Itoa(i)), store.PutOptions{}).ETag
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"agent-skills.yaml", "listings/p/skills/a.md", "skills/a.md", "skills/a/SKILL.md", "skills/ab.md", "skills/b.md", "skillsz", "subagents/x.md"}},
		{"skills/", []string{"skills/a.md", "skills/a/SKILL.md", "skills/ab.md", "skills/b.md"}},
		{"skills/a", []string{"skills/a.md", "skills/a/SKILL.md", "skills/ab.md"}},
		{"skills/a/", []string{"skills/a/SKILL.md"}},
		{"skills/ab", []string{"skills/ab.md"}},
		{"skills", []string{"skills/a.md", "skills/a/SKILL.md", "skills/ab.md", "skills/b.md", "skillsz"}},
		{"skills/b.md", []string{"skills/b.md"}},
		{"listings/p/", []string{"listings/p/skills/a.md"}},
		{"nothing/", nil},
		{"skills/c", nil},
	}
	for _, tc := range cases {
		infos, err := s.List(ctx, tc.prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		var got []string
		for _, in := range infos {
			got = append(got, in.Key)
			if in.ETag != etags[in.Key] || in.Size != int64(len(in.Key)+1) || in.LastModified.IsZero() {
				t.Errorf("List(%q) entry %+v: want ETag %s, size %d, a LastModified", tc.prefix, in, etags[in.Key], len(in.Key)+1)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// testListOddKeys stores keys S3 accepts but XML 1.0 cannot carry raw (an
// ESC byte), or that URL encodings disagree about (space, '+', '%'), and
// checks List names each exactly as it was stored, and that the name it
// returns reads the object back.
func testListOddKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	keys := []string{
		"skills/\x1bbad.md",
		"skills/a b+c%2Fd%zz.md",
		"skills/tab\there\x7f.md",
		"skills/é ü+.md",
		"skills/plain.md",
	}
	for _, k := range keys {
		mustPut(t, s, k, []byte(k), store.PutOptions{})
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	for _, prefix := range []string{"", "skills/", "skills/\x1b"} {
		infos, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		var got []string
		for _, in := range infos {
			got = append(got, in.Key)
		}
		exp := want
		if prefix == "skills/\x1b" {
			exp = []string{"skills/\x1bbad.md"}
		}
		if !slices.Equal(got, exp) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, exp)
		}
	}
	infos, err := s.List(ctx, "skills/")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if b, _ := mustGet(t, s, in.Key); string(b) != in.Key {
			t.Errorf("Get(%q) read %q", in.Key, b)
		}
	}
}

func testListMany(t *testing.T, s store.Store) {
	const n = 1100
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("many/k%04d", i)
	}
	parallel(t, 16, len(keys), func(i int) error {
		_, err := s.Put(t.Context(), keys[i], []byte{byte(i)}, store.PutOptions{})
		return err
	})
	mustPut(t, s, "manz", []byte("outside"), store.PutOptions{})
	infos, err := s.List(t.Context(), "many/")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(infos))
	for i, in := range infos {
		got[i] = in.Key
	}
	if !slices.Equal(got, keys) {
		t.Errorf("List(many/) returned %d keys (first %q), want the %d put, in order", len(got), head(got), n)
	}
	infos, err = s.List(t.Context(), "many/k1")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 100 || infos[0].Key != "many/k1000" || infos[99].Key != "many/k1099" {
		t.Errorf("List(many/k1) returned %d keys, want many/k1000..many/k1099", len(infos))
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustPut(t, s, "skills/x/SKILL.md", []byte("x"), store.PutOptions{})
	mustPut(t, s, "skills/y.md", []byte("y"), store.PutOptions{})
	for i := range 2 {
		if err := s.Delete(ctx, "skills/x/SKILL.md"); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	if err := s.Delete(ctx, "never/was.md"); err != nil {
		t.Errorf("Delete(never existed) = %v, want nil", err)
	}
	if _, err := s.Head(ctx, "skills/x/SKILL.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head after Delete = %v, want ErrNotFound", err)
	}
	infos, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Key != "skills/y.md" {
		t.Errorf("List after Delete = %v, want only skills/y.md", infos)
	}
	// The key can be created again, also conditionally.
	mustPut(t, s, "skills/x/SKILL.md", []byte("again"), store.PutOptions{IfNoneMatch: "*"})
	if got, _ := mustGet(t, s, "skills/x/SKILL.md"); string(got) != "again" {
		t.Errorf("re-created key reads %q", got)
	}
}

func testReadAll(t *testing.T, s store.Store) {
	ctx := t.Context()
	const key = "files/ten"
	mustPut(t, s, key, []byte("0123456789"), store.PutOptions{})
	cases := []struct {
		name    string
		limit   int64
		wantErr error
	}{
		{"under the limit", 11, nil},
		{"exactly the limit", 10, nil},
		{"one byte over", 9, store.ErrTooLarge},
		{"far over", 1, store.ErrTooLarge},
		{"no limit", 0, nil},
	}
	for _, tc := range cases {
		b, info, err := store.ReadAll(ctx, s, key, tc.limit)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: ReadAll(limit %d) = %v, want %v", tc.name, tc.limit, err, tc.wantErr)
			continue
		}
		if tc.wantErr == nil && (string(b) != "0123456789" || info.Size != 10) {
			t.Errorf("%s: ReadAll = %q (%+v)", tc.name, b, info)
		}
		if tc.wantErr != nil && b != nil {
			t.Errorf("%s: ReadAll returned %d bytes with its error", tc.name, len(b))
		}
	}
	if _, _, err := store.ReadAll(ctx, s, "files/missing", 10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadAll(missing) = %v, want ErrNotFound", err)
	}
}

// testIncrements is the lost-update check: every worker increments one
// counter with read-modify-write under IfMatch, retrying on
// ErrPreconditionFailed. Every successful write must have read the value
// the previous successful write produced, so the final value is exact.
func testIncrements(t *testing.T, s store.Store, o Options) {
	const key = "catalog/counter"
	mustPut(t, s, key, []byte("0"), store.PutOptions{IfNoneMatch: "*"})
	var (
		mu        sync.Mutex
		from      = map[int]int{} // value read -> how many successful writes started from it
		conflicts atomic.Int64
	)
	parallel(t, o.Workers, o.Workers, func(int) error {
		for range o.Increments {
			for attempt := 0; ; attempt++ {
				if attempt == 10000 {
					return errors.New("no increment landed in 10000 attempts")
				}
				b, info, err := store.ReadAll(t.Context(), s, key, 64)
				if err != nil {
					return err
				}
				n, err := strconv.Atoi(string(b))
				if err != nil {
					return fmt.Errorf("counter holds %q: %w", b, err)
				}
				_, err = s.Put(t.Context(), key, []byte(strconv.Itoa(n+1)), store.PutOptions{IfMatch: info.ETag})
				if errors.Is(err, store.ErrPreconditionFailed) {
					conflicts.Add(1)
					continue
				}
				if err != nil {
					return err
				}
				mu.Lock()
				from[n]++
				mu.Unlock()
				break
			}
		}
		return nil
	})
	got, _ := mustGet(t, s, key)
	want := o.Workers * o.Increments
	if string(got) == strconv.Itoa(want) {
		return
	}
	var dups []string
	for n, c := range from {
		if c > 1 {
			dups = append(dups, fmt.Sprintf("%d writes read %d", c, n))
		}
	}
	slices.Sort(dups)
	msg := fmt.Sprintf("counter = %s after %d increments: lost updates (IfMatch writes that all succeeded from the same value: %v; %d stale writes were refused)",
		got, want, dups, conflicts.Load())
	t.Error(msg)
}

// testCreateRace starts many IfNoneMatch "*" creates of one key at once:
// exactly one must win, and the object must hold the winner's bytes.
func testCreateRace(t *testing.T, s store.Store, o Options) {
	const key = "blobs/sha256/race"
	var (
		mu      sync.Mutex
		winners []int
	)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, o.Workers)
	for i := range o.Workers {
		wg.Go(func() {
			<-start
			_, err := s.Put(t.Context(), key, []byte("writer "+strconv.Itoa(i)), store.PutOptions{IfNoneMatch: "*"})
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, i)
				mu.Unlock()
			case !errors.Is(err, store.ErrPreconditionFailed):
				errs <- fmt.Errorf("writer %d: %w", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(winners) == 0 {
		t.Fatalf("none of %d concurrent creates succeeded", o.Workers)
	}
	got, _ := mustGet(t, s, key)
	if len(winners) == 1 {
		if string(got) != "writer "+strconv.Itoa(winners[0]) {
			t.Errorf("object holds %q, but writer %d won", got, winners[0])
		}
		return
	}
	msg := fmt.Sprintf("%d of %d concurrent creates succeeded (writers %v), want exactly 1", len(winners), o.Workers, winners)
	t.Error(msg)
}

func mustPut(t *testing.T, s store.Store, key string, body []byte, opts store.PutOptions) store.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, body, opts)
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

func mustGet(t *testing.T, s store.Store, key string) ([]byte, store.Info) {
	t.Helper()
	obj, err := s.Get(t.Context(), key, store.GetOptions{})
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer closeObj(obj)
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return b, obj.Info
}

func closeObj(obj *store.Object) {
	if obj != nil && obj.Body != nil {
		_ = obj.Body.Close()
	}
}

// parallel runs fn(0..n-1) on workers goroutines and fails the test with
// the first error.
func parallel(t *testing.T, workers, n int, fn func(i int) error) {
	t.Helper()
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	ctx := t.Context()
feed:
	for i := range n {
		select {
		case jobs <- i:
		case err := <-errs:
			errs <- err
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func quoted(etag string) bool {
	return len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"'
}

func unquote(etag string) string {
	if quoted(etag) {
		return etag[1 : len(etag)-1]
	}
	return etag
}

func head(keys []string) []string {
	return keys[:min(len(keys), 3)]
}
