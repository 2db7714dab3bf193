package apikey_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
)

const (
	keyA = "sk-alpha-7f3c9e2a41d8b6050e1f"
	keyB = "sk-bravo-0b8d2c7e95a14f36d2aa"
	keyC = "sk-charlie-5e6f708192a3b4c5d6e7"
)

func mustSet(t testing.TB, keys ...string) apikey.Set {
	t.Helper()
	hashes := make([]string, len(keys))
	for i, k := range keys {
		hashes[i] = apikey.Hash(k)
	}
	s, err := apikey.ParseSet(strings.Join(hashes, ","))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHashIsLowercaseHexSHA256(t *testing.T) {
	// sha256("abc"), FIPS 180-2 test vector.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := apikey.Hash("abc"); got != want {
		t.Errorf("Hash(abc) = %s, want %s", got, want)
	}
	if got := apikey.KeyID("abc"); got != want[:8] {
		t.Errorf("KeyID(abc) = %s, want %s", got, want[:8])
	}
}

func TestParseSet(t *testing.T) {
	ha, hb := apikey.Hash(keyA), apikey.Hash(keyB)
	cases := []struct {
		name     string
		list     string
		wantLen  int
		accepts  []string // keys the set must contain
		rejects  []string // keys it must not
		wantErr  string   // substring of the error; "" = no error
		notInErr string   // must not appear in the error
	}{
		{name: "empty list is the empty set", list: "", wantLen: 0, rejects: []string{keyA}},
		{name: "whitespace and empty items only", list: " , ,\t,", wantLen: 0},
		{name: "one hash", list: ha, wantLen: 1, accepts: []string{keyA}, rejects: []string{keyB}},
		{name: "two hashes with whitespace and empty items", list: "  " + ha + " ,, \t" + hb + " ,", wantLen: 2, accepts: []string{keyA, keyB}, rejects: []string{keyC}},
		{name: "duplicates collapse", list: ha + "," + ha, wantLen: 1, accepts: []string{keyA}},
		{name: "upper-case hash rejected", list: strings.ToUpper(ha), wantErr: "item 1: upper-case hex digit at position"},
		{name: "error names the item position", list: ha + ",," + hb[:63] + "g", wantErr: "item 3: character at position 64 is not a hex digit"},
		{name: "too short", list: ha[:63], wantErr: "item 1: 63 characters, want the 64"},
		{name: "too long", list: ha + "0", wantErr: "item 1: 65 characters"},
		{name: "sha256: prefix is not the bare form", list: "sha256:" + ha, wantErr: "item 1: 71 characters"},
		{name: "a pasted key is refused without being echoed", list: ha + "," + keyB, wantErr: "item 2:", notInErr: keyB},
		{name: "a 64-character key with a non-hex byte is not echoed", list: strings.Repeat("z", 64), wantErr: "item 1: character at position 1", notInErr: "zzzz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := apikey.ParseSet(c.list)
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, apikey.ErrSyntax) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrSyntax containing %q", err, c.wantErr)
				}
				if c.notInErr != "" && strings.Contains(err.Error(), c.notInErr) {
					t.Errorf("error %q repeats the item", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Len() != c.wantLen {
				t.Errorf("Len = %d, want %d", s.Len(), c.wantLen)
			}
			for _, k := range c.accepts {
				if !s.Contains(k) {
					t.Errorf("set does not contain %s", k)
				}
			}
			for _, k := range c.rejects {
				if s.Contains(k) {
					t.Errorf("set contains %s", k)
				}
			}
		})
	}
}

func TestCheckClassifiesAuthorizationHeaders(t *testing.T) {
	set := mustSet(t, keyA, keyB, keyC)
	idB := apikey.KeyID(keyB)
	cases := []struct {
		name   string
		values []string // nil: no Authorization header
		status apikey.Status
		reason string
		keyID  string // "" = must be empty
	}{
		{"no header is anonymous", nil, apikey.Anonymous, "", ""},
		{"right key among several", []string{"Bearer " + keyB}, apikey.Valid, "", idB},
		{"first configured key", []string{"Bearer " + keyA}, apikey.Valid, "", apikey.KeyID(keyA)},
		{"last configured key", []string{"Bearer " + keyC}, apikey.Valid, "", apikey.KeyID(keyC)},
		{"scheme is case-insensitive", []string{"bEaReR " + keyB}, apikey.Valid, "", idB},
		{"several spaces and a tab before the token", []string{"Bearer  \t " + keyB}, apikey.Valid, "", idB},
		{"surrounding whitespace", []string{" Bearer " + keyB + " \t"}, apikey.Valid, "", idB},
		{"wrong key", []string{"Bearer sk-wrong"}, apikey.Invalid, apikey.ReasonUnknownKey, apikey.UnknownKeyID},
		{"right key with a different case", []string{"Bearer " + strings.ToUpper(keyB)}, apikey.Invalid, apikey.ReasonUnknownKey, apikey.UnknownKeyID},
		{"the configured hash is not the key", []string{"Bearer " + apikey.Hash(keyB)}, apikey.Invalid, apikey.ReasonUnknownKey, apikey.UnknownKeyID},
		{"empty header", []string{""}, apikey.Invalid, apikey.ReasonEmpty, ""},
		{"bare scheme", []string{"Bearer"}, apikey.Invalid, apikey.ReasonEmpty, ""},
		{"scheme and spaces only", []string{"Bearer   "}, apikey.Invalid, apikey.ReasonEmpty, ""},
		{"Basic scheme", []string{"Basic dXNlcjpwYXNz"}, apikey.Invalid, apikey.ReasonNotBearer, ""},
		{"bare key without scheme", []string{keyB}, apikey.Invalid, apikey.ReasonNotBearer, ""},
		{"scheme glued to the token", []string{"Bearer" + keyB}, apikey.Invalid, apikey.ReasonNotBearer, ""},
		{"two tokens", []string{"Bearer " + keyB + " " + keyA}, apikey.Invalid, apikey.ReasonMalformed, ""},
		{"a list of credentials", []string{"Bearer " + keyB + ", Basic x"}, apikey.Invalid, apikey.ReasonMalformed, ""},
		{"non-ASCII token", []string{"Bearer clé"}, apikey.Invalid, apikey.ReasonMalformed, ""},
		{"control byte in token", []string{"Bearer a\x00b"}, apikey.Invalid, apikey.ReasonMalformed, ""},
		{"two Authorization headers", []string{"Bearer " + keyB, "Bearer " + keyB}, apikey.Invalid, apikey.ReasonMultipleHeaders, ""},
		{"over-long header", []string{"Bearer " + strings.Repeat("a", apikey.MaxHeaderBytes)}, apikey.Invalid, apikey.ReasonTooLong, ""},
		{"longest header still checked", []string{"Bearer " + strings.Repeat("a", apikey.MaxHeaderBytes-7)}, apikey.Invalid, apikey.ReasonUnknownKey, apikey.UnknownKeyID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := apikey.Check(c.values, set, time.Now())
			if got.Status != c.status || got.Reason != c.reason || got.KeyID != c.keyID {
				t.Errorf("Check = %+v (%s), want status %s reason %q keyID %q", got, got.Status, c.status, c.reason, c.keyID)
			}
		})
	}
}

func TestCheckWithNoConfiguredKeysRefusesEveryKey(t *testing.T) {
	got := apikey.Check([]string{"Bearer " + keyA}, apikey.Set{}, time.Now())
	if got.Status != apikey.Invalid || got.Reason != apikey.ReasonUnknownKey {
		t.Errorf("Check = %+v, want invalid unknown_key", got)
	}
}

// countingSource counts Hashes calls and answers with set or err.
type countingSource struct {
	set   apikey.Set
	err   error
	calls atomic.Int32
}

func (s *countingSource) Hashes(context.Context) (apikey.Set, error) {
	s.calls.Add(1)
	return s.set, s.err
}

func header(values ...string) http.Header {
	h := http.Header{}
	for _, v := range values {
		h.Add("Authorization", v)
	}
	return h
}

func TestVerifierConsultsTheSourceOnlyForACandidateKey(t *testing.T) {
	down := errors.New("ssm: connection refused")
	cases := []struct {
		name      string
		src       *countingSource
		h         http.Header
		status    apikey.Status
		wantErr   bool
		wantCalls int32
	}{
		{"anonymous while the store is down", &countingSource{err: down}, header(), apikey.Anonymous, false, 0},
		{"malformed while the store is down", &countingSource{err: down}, header("Basic x"), apikey.Invalid, false, 0},
		{"candidate while the store is down fails closed", &countingSource{err: down}, header("Bearer " + keyA), 0, true, 1},
		{"valid key", &countingSource{set: mustSet(t, keyA)}, header("Bearer " + keyA), apikey.Valid, false, 1},
		{"unknown key", &countingSource{set: mustSet(t, keyA)}, header("Bearer " + keyB), apikey.Invalid, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := apikey.NewVerifier(c.src, nil).Verify(context.Background(), c.h)
			if c.wantErr {
				if !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, down) {
					t.Fatalf("err = %v, want ErrUnavailable wrapping the cause", err)
				}
			} else if err != nil || r.Status != c.status {
				t.Fatalf("Verify = %+v, %v; want %s", r, err, c.status)
			}
			if got := c.src.calls.Load(); got != c.wantCalls {
				t.Errorf("source consulted %d times, want %d", got, c.wantCalls)
			}
		})
	}
}

func TestVerifierWithoutSourceAcceptsNoKey(t *testing.T) {
	v := apikey.NewVerifier(nil, nil)
	if r, err := v.Verify(context.Background(), header("Bearer "+keyA)); err != nil || r.Status != apikey.Invalid {
		t.Errorf("Verify = %+v, %v; want invalid", r, err)
	}
	if r, err := v.Verify(context.Background(), header()); err != nil || r.Status != apikey.Anonymous {
		t.Errorf("Verify = %+v, %v; want anonymous", r, err)
	}
}

func TestUnionMergesAndFailsClosed(t *testing.T) {
	ctx := context.Background()
	u := apikey.Union(mustSet(t, keyA), &countingSource{set: mustSet(t, keyB, keyA)})
	s, err := u.Hashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || !s.Contains(keyA) || !s.Contains(keyB) || s.Contains(keyC) {
		t.Errorf("union Len=%d, want exactly keyA and keyB", s.Len())
	}
	down := errors.New("down")
	if _, err := apikey.Union(mustSet(t, keyA), &countingSource{err: down}).Hashes(ctx); !errors.Is(err, down) {
		t.Errorf("err = %v, want the failing member's error", err)
	}
}

// clock is a manual clock for Cached.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// store is a fake key store: a value, an error, and a fetch counter.
type store struct {
	mu      sync.Mutex
	value   string
	err     error
	fetches int
}

func (s *store) fetch(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches++
	return s.value, s.err
}

func (s *store) set(value string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value, s.err = value, err
}

func TestCachedRefreshesAfterTheTTLAndFailsClosed(t *testing.T) {
	ha, hb := apikey.Hash(keyA), apikey.Hash(keyB)
	down := errors.New("ssm unreachable")
	// Each step moves the clock, optionally sets what the store answers,
	// then calls Hashes.
	type answer struct {
		value string
		err   error
	}
	type step struct {
		advance  time.Duration
		store    *answer // nil: the store answers as before
		wantKey  string  // the only key the set must hold
		wantErr  bool
		fetches  int // total fetches after the step
		describe string
	}
	cases := []struct {
		name  string
		opts  apikey.CacheOptions // Now is the test's
		steps []step
	}{
		{
			name: "rotation is seen only once the default TTL has passed",
			steps: []step{
				{store: &answer{value: ha}, wantKey: keyA, fetches: 1, describe: "first use fetches"},
				{advance: 30 * time.Second, store: &answer{value: hb}, wantKey: keyA, fetches: 1, describe: "within the TTL the old set answers"},
				{advance: 29*time.Second + 999*time.Millisecond, wantKey: keyA, fetches: 1, describe: "just before 60s still cached"},
				{advance: time.Millisecond, wantKey: keyB, fetches: 2, describe: "at 60s the new set is fetched"},
				{advance: time.Second, wantKey: keyB, fetches: 2, describe: "and cached again"},
			},
		},
		{
			name: "a failed refresh fails closed and backs off, then recovers",
			opts: apikey.CacheOptions{TTL: 10 * time.Second},
			steps: []step{
				{store: &answer{value: ha}, wantKey: keyA, fetches: 1},
				{advance: 10 * time.Second, store: &answer{err: down}, wantErr: true, fetches: 2, describe: "expired and unreachable: error, not the stale set"},
				{wantErr: true, fetches: 2, describe: "backing off: the failure again, no fetch"},
				{advance: 499 * time.Millisecond, wantErr: true, fetches: 2, describe: "the first wait is at least half a second"},
				{advance: 501 * time.Millisecond, wantErr: true, fetches: 3, describe: "and at most a second: one fetch, failing again"},
				{advance: 999 * time.Millisecond, store: &answer{value: hb}, wantErr: true, fetches: 3, describe: "the second wait is at least a second"},
				{advance: 1001 * time.Millisecond, wantKey: keyB, fetches: 4, describe: "and at most two: back up, a fresh set"},
				{advance: 5 * time.Second, wantKey: keyB, fetches: 4, describe: "cached again"},
				{advance: 5 * time.Second, store: &answer{err: down}, wantErr: true, fetches: 5, describe: "a success resets the backoff"},
				{advance: time.Second, wantErr: true, fetches: 6},
			},
		},
		{
			name: "the backoff doubles up to its cap",
			opts: apikey.CacheOptions{MinBackoff: 2 * time.Second, MaxBackoff: 5 * time.Second},
			steps: []step{
				{store: &answer{err: down}, wantErr: true, fetches: 1},
				{advance: 2 * time.Second, wantErr: true, fetches: 2, describe: "after the first wait (at most 2s)"},
				{advance: 4 * time.Second, wantErr: true, fetches: 3, describe: "after the second (at most 4s)"},
				{advance: 2499 * time.Millisecond, wantErr: true, fetches: 3, describe: "the third is capped at 5s, of which at least half"},
				{advance: 2501 * time.Millisecond, wantErr: true, fetches: 4, describe: "and at most 5s"},
				{advance: 5 * time.Second, wantErr: true, fetches: 5, describe: "and stays capped"},
			},
		},
		{
			name: "an unparsable value fails closed",
			opts: apikey.CacheOptions{TTL: time.Second},
			steps: []step{
				{store: &answer{value: ha}, wantKey: keyA, fetches: 1},
				{advance: time.Second, store: &answer{value: keyB}, wantErr: true, fetches: 2, describe: "a pasted key instead of a hash"},
			},
		},
		{
			name: "a clock that goes backwards forces a refresh",
			steps: []step{
				{store: &answer{value: ha}, wantKey: keyA, fetches: 1},
				{advance: -time.Second, store: &answer{value: hb}, wantKey: keyB, fetches: 2},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			st := &store{}
			opts := c.opts
			opts.Now = clk.Now
			src := apikey.NewCached("test store", st.fetch, opts)
			for i, s := range c.steps {
				clk.Add(s.advance)
				if s.store != nil {
					st.set(s.store.value, s.store.err)
				}
				set, err := src.Hashes(context.Background())
				if s.wantErr {
					if !errors.Is(err, apikey.ErrUnavailable) || !strings.Contains(err.Error(), "test store") {
						t.Fatalf("step %d (%s): err = %v, want ErrUnavailable naming the store", i, s.describe, err)
					}
				} else {
					if err != nil {
						t.Fatalf("step %d (%s): %v", i, s.describe, err)
					}
					if !set.Contains(s.wantKey) || set.Len() != 1 {
						t.Fatalf("step %d (%s): set of %d does not hold exactly %s", i, s.describe, set.Len(), s.wantKey)
					}
				}
				if st.fetches != s.fetches {
					t.Fatalf("step %d (%s): %d fetches, want %d", i, s.describe, st.fetches, s.fetches)
				}
			}
		})
	}
}

func TestCachedSharesOneFetchAmongConcurrentCallers(t *testing.T) {
	release := make(chan struct{})
	var fetches atomic.Int32
	src := apikey.NewCached("slow store", func(ctx context.Context) (string, error) {
		fetches.Add(1)
		<-release
		return apikey.Hash(keyA), nil
	}, apikey.CacheOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := src.Hashes(context.Background())
			if err == nil && !s.Contains(keyA) {
				err = errors.New("set without keyA")
			}
			errs <- err
		}()
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches for 20 concurrent callers, want 1", n)
	}
}

func TestCachedWaiterGivesUpWithItsContext(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	src := apikey.NewCached("stuck store", func(ctx context.Context) (string, error) {
		close(started)
		<-release
		return "", nil
	}, apikey.CacheOptions{})
	done := make(chan struct{})
	go func() { defer close(done); _, _ = src.Hashes(context.Background()) }()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := src.Hashes(ctx)
	close(release)
	<-done
	if !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}

// randomKey is a well-formed key nobody configured.
func randomKey(i int) string { return fmt.Sprintf("sk-random-%d-%x", i, rand.Uint64()) }

// verifyMany presents n random well-formed keys concurrently and returns
// the results and errors.
func verifyMany(v *apikey.Verifier, n int) ([]apikey.Result, []error) {
	results, errs := make([]apikey.Result, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = v.Verify(context.Background(), header("Bearer "+randomKey(i)))
		})
	}
	wg.Wait()
	return results, errs
}

// TestCachedUnderAnOutageBacksOffInsteadOfFetchingPerRequest: while the key
// store fails, 500 concurrent requests with random keys all fail closed
// and cost one fetch; so do the next 500 within the backoff; after the
// backoff, one more.
func TestCachedUnderAnOutageBacksOffInsteadOfFetchingPerRequest(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st := &store{err: errors.New("ThrottlingException: Rate exceeded")}
	v := apikey.NewVerifier(apikey.NewCached("test store", st.fetch, apikey.CacheOptions{Now: clk.Now}), clk.Now)
	for round, want := range []int{1, 1, 2} {
		if round == 2 {
			clk.Add(apikey.DefaultMinBackoff)
		}
		_, errs := verifyMany(v, 500)
		for _, err := range errs {
			if !errors.Is(err, apikey.ErrUnavailable) {
				t.Fatalf("round %d: err = %v, want ErrUnavailable (a 503)", round, err)
			}
		}
		if st.fetches != want {
			t.Fatalf("round %d: %d fetches in all, want %d", round, st.fetches, want)
		}
	}
}

// TestCachedHealthyStoreIsNotFetchedForUnknownKeys: within the TTL, 500
// random unknown keys are refused from the cached set, at one fetch.
func TestCachedHealthyStoreIsNotFetchedForUnknownKeys(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st := &store{value: apikey.Hash(keyA)}
	v := apikey.NewVerifier(apikey.NewCached("test store", st.fetch, apikey.CacheOptions{Now: clk.Now}), clk.Now)
	for _, advance := range []time.Duration{0, apikey.DefaultTTL - time.Millisecond} {
		clk.Add(advance)
		results, errs := verifyMany(v, 500)
		for i := range results {
			if errs[i] != nil || results[i].Status != apikey.Invalid {
				t.Fatalf("Verify = %+v, %v; want invalid", results[i], errs[i])
			}
		}
	}
	if st.fetches != 1 {
		t.Errorf("%d fetches, want 1 within the TTL", st.fetches)
	}
}

// TestCachedFetchOutlivesTheCallerWhoStartedIt: the caller that started a
// fetch gives up; the fetch still completes, its result is cached, and the
// store is not marked as failing.
func TestCachedFetchOutlivesTheCallerWhoStartedIt(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var fetches atomic.Int32
	src := apikey.NewCached("slow store", func(ctx context.Context) (string, error) {
		if fetches.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
			return apikey.Hash(keyA), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, apikey.CacheOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := src.Hashes(ctx); done <- err }()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	close(release)
	set, err := src.Hashes(context.Background())
	if err != nil || !set.Contains(keyA) {
		t.Fatalf("Hashes = %v; want the set the detached fetch read", err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want the one the gone caller started", n)
	}
}

func TestCachedPanickingFetchFailsClosed(t *testing.T) {
	src := apikey.NewCached("broken store", func(context.Context) (string, error) { panic("nil map") }, apikey.CacheOptions{})
	if _, err := src.Hashes(context.Background()); !errors.Is(err, apikey.ErrUnavailable) || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("err = %v, want ErrUnavailable naming the panic", err)
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = keyA + strconv.Itoa(i)
		}
		set := mustSet(b, keys...)
		values, now := []string{"Bearer " + keys[n-1]}, time.Now()
		b.Run(strconv.Itoa(n)+"-hashes", func(b *testing.B) {
			for b.Loop() {
				if apikey.Check(values, set, now).Status != apikey.Valid {
					b.Fatal("not valid")
				}
			}
		})
	}
}

func TestNamedFindsTheHashesOfAKeyIDInTheCurrentSet(t *testing.T) {
	ctx := context.Background()
	src := &countingSource{set: mustSet(t, keyA, keyB)}
	v := apikey.NewVerifier(src, nil)
	got, err := v.Named(ctx, apikey.KeyID(keyA))
	if err != nil || len(got) != 1 || got[0] != apikey.Hash(keyA) {
		t.Errorf("Named(keyA's id) = %q, %v; want keyA's hash", got, err)
	}
	if got, _ := v.Named(ctx, apikey.KeyID(keyC)); len(got) != 0 {
		t.Errorf("Named(an unconfigured key's id) = %q; want none", got)
	}
	src.set = mustSet(t, keyB) // keyA revoked
	if got, _ := v.Named(ctx, apikey.KeyID(keyA)); len(got) != 0 {
		t.Errorf("Named(a revoked key's id) = %q; want none", got)
	}
	down := errors.New("down")
	if _, err := apikey.NewVerifier(&countingSource{err: down}, nil).Named(ctx, apikey.KeyID(keyA)); !errors.Is(err, apikey.ErrUnavailable) {
		t.Errorf("Named over a failing source: %v; want ErrUnavailable", err)
	}
	if got, err := apikey.NewVerifier(nil, nil).Named(ctx, apikey.KeyID(keyA)); err != nil || got != nil {
		t.Errorf("Named without keys = %q, %v", got, err)
	}
}
