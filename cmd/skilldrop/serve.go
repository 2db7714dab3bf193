package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "serve a directory laid out like the bucket with the Lambda's handler, re-indexing it as it changes",
		args:    "[--dir DIR] [--addr HOST:PORT] [--base-url URL] [--trust-forwarded] [--keys FILE [--keys-refresh D]] [--api-key-sha256 HASHES] [--default-visibility V] [--signing-key FILE] [--log-level L]",
		about: `It listens first (a taken port fails before anything is read or written), then indexes what changed in
DIR since its catalog was written (everything the first time; reindex --dir re-reads all) and serves it,
re-indexing changes within about two seconds, until Ctrl-C. It prints the URLs to try on stdout and JSON
logs on stderr. A changed agent-skills.yaml is read once it has been left alone for a second, so a save still
in progress is never read half-written; replace it in one step all the same (write a copy, then rename it).

It writes into DIR, as the indexer writes into the bucket: catalog/ (catalog.json, status.json), blobs/sha256/
(the validated bytes) and .skilldrop/ (the directory store's temporary files and lock). Serve a copy of a folder
you keep in version control (make run serves .run/example-bucket, a copy of examples/bucket).

With --signing-key it signs what it publishes for its origin (--base-url, else http://ADDR): each version's
Sigstore bundle beside its artifact, the AI Catalog at /.well-known/ai-catalog.json, the key at
/.well-known/skilldrop/signing-key.pem and /.well-known/did.json; skilldrop verify checks them. A directory
once served with a key is indexed only with one (the same, or a new one that takes over).

exit status: 0 after Ctrl-C, 1 when it cannot listen, index or serve, 2 on usage errors`,
		run: runServe,
	})
}

// Local re-indexing: the filesystem reports changes to the watcher (which
// lists the directory every watchEvery only where it cannot be watched)
// and the handler revalidates the catalog every revalidateEvery, so a
// change shows within the indexing itself plus revalidateEvery.
const (
	watchEvery      = 500 * time.Millisecond
	revalidateEvery = 250 * time.Millisecond
	shutdownGrace   = 5 * time.Second
)

// httpTimeouts bound how long a connection may take over each part of a
// request, so a client that trickles its headers or body, or never reads
// the answer, cannot hold a connection (and its goroutine) for good.
type httpTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// serveTimeouts are serve's; tests shorten them. Read covers headers and
// body: a POST body capped at 1 MiB arrives well within it.
var serveTimeouts = httpTimeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 120 * time.Second}

// runServe binds the address, indexes DIR, then serves it with the Lambda's
// handler until the context ends (Ctrl-C), printing the URLs to try on
// stdout and JSON logs on stderr.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["serve"].flagSet(stderr)
	dir := fs.String("dir", ".", "the directory to serve, laid out like the bucket (skills/, listings/, subagents/, files/, agent-skills.yaml)")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	baseURL := fs.String("base-url", "", "the public origin to advertise (default: the request's Host)")
	trustFwd := fs.Bool("trust-forwarded", false, "take the origin from X-Forwarded-Host/-Proto (only behind a proxy that sets them)")
	hashes := fs.String("api-key-sha256", "", "comma-separated SHA-256 hashes of the accepted API keys, keys of every audience (default: $"+apikey.EnvHashes+")")
	keysFile := fs.String("keys", "", "the key store: a JSON file of named keys with audiences, expiry and path use (default: $"+apikey.EnvFile+"), read again every --keys-refresh")
	refresh := fs.String("keys-refresh", "", "how often the key store is read again: the longest a revoked key keeps working, 1s to 60s (default: $"+apikey.EnvRefresh+", else 60s)")
	defaultVis := defaultVisibilityFlag(fs)
	signingKey := signingKeyFlag(fs)
	level := logLevelFlag(fs, "INFO")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	vis, err := defaultVis()
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitUsage
	}
	signer, err := signingKey()
	if err != nil {
		printf(stderr, "skilldrop serve: --signing-key: %v\n", err)
		return exitUsage
	}
	if *hashes == "" {
		*hashes = os.Getenv(apikey.EnvHashes)
	}
	keys, err := serveKeys(*hashes, *keysFile, *refresh)
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitUsage
	}
	lv, err := level()
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitUsage
	}
	lvl, _ := obs.ParseLevel(lv)
	if *baseURL != "" {
		if _, err := server.ParseBaseURL(*baseURL); err != nil {
			printf(stderr, "skilldrop serve: --base-url: %v\n", err)
			return exitUsage
		}
	}
	if st, err := os.Stat(*dir); errors.Is(err, os.ErrNotExist) || (err == nil && !st.IsDir()) {
		printf(stderr, "skilldrop serve: --dir %s: no such directory\n", printable(*dir))
		return exitUsage
	}
	if _, port, err := net.SplitHostPort(*addr); err != nil || port == "" {
		printf(stderr, "skilldrop serve: --addr %s: want HOST:PORT, such as 127.0.0.1:8080\n", printable(*addr))
		return exitUsage
	}
	// Listen before anything is read or written: a second serve on a taken
	// port must fail without touching the directory.
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		printf(stderr, "skilldrop serve: %s\n", listenError(*addr, err))
		return exitFailure
	}
	defer func() { _ = l.Close() }()
	logger := obs.NewLogger(stderr, lvl)
	auditor := obs.NewAuditor(logger)

	st, err := store.NewDir(*dir, store.DirTracks(catalog.Key))
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitFailure
	}
	defer func() { _ = st.Close() }()
	origin := "http://" + l.Addr().String()
	if *baseURL != "" {
		origin = *baseURL
	}
	icfg := indexer.Config{Store: st, Logger: logger, Auditor: auditor, DefaultVisibility: vis, ConfigSettle: localSettle}
	if signer != nil {
		// What is signed names its origin: the one this serve advertises.
		u, err := indexer.ParseOrigin(origin)
		if err != nil {
			printf(stderr, "skilldrop serve: %v\n", err)
			return exitUsage
		}
		icfg.Signer, icfg.Origins = signer, []*url.URL{u}
	}
	ix, err := indexer.New(icfg)
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitFailure
	}
	// Sessions need a secret only this process holds: they end when it stops.
	secret := make([]byte, websession.MinSecretBytes)
	_, _ = rand.Read(secret) // never fails (crypto/rand panics instead)
	h, err := server.New(server.Config{
		Store:                 st,
		Keys:                  keys,
		Auditor:               auditor,
		Logger:                logger,
		PublicBaseURL:         *baseURL,
		TrustForwardedHeaders: *trustFwd,
		Local:                 true,
		RevalidateEvery:       revalidateEvery,
		Version:               buildinfo.Version(),
		SessionSecret:         secret,
	})
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitUsage
	}

	// Index before serving, so the first request finds a catalog: what
	// changed since serve last ran, everything the first time.
	res, err := ix.CatchUp(ctx)
	if err != nil {
		printf(stderr, "skilldrop serve: index %s: %v\n", *dir, err)
		return exitFailure
	}
	printf(stdout, "serving %s on http://%s (%s)\n", st.Path(), l.Addr(), summary(res))
	if n := configWarnings(ctx, st); n > 0 {
		printf(stdout, "warning: %s has %d %s (entries that name nothing published, whose settings apply to nothing, or allows of no rule): "+
			"skilldrop status --dir %s lists them\n", skillsconfig.Key, n, plural(n, "warning", "warnings"), printable(st.Path()))
	}
	printf(stdout, "\n")
	printf(stdout, "  web catalog    %s%s\n", origin, routes.Catalog)
	printf(stdout, "  RFC index      %s%s\n", origin, routes.RFCIndex)
	printf(stdout, "  native feed    %s%s\n", origin, routes.Manifest)
	printf(stdout, "  MCP            POST %s%s\n", origin, routes.MCP)
	if signer != nil {
		printf(stdout, "  AI Catalog     %s%s (signed; skilldrop verify %s)\n", origin, routes.AICatalog, origin)
	}
	if set, err := keys.Hashes(ctx); err == nil && set.Len() > 0 {
		printf(stdout, "  with a key     curl -H 'Authorization: Bearer <key>' %s%s (or sign in at %s%s)\n", origin, routes.RFCIndex, origin, routes.CatalogSignIn)
		printf(stdout, "  path keys      skills add %s%s<key>\n", origin, routes.CapabilityPrefix)
	}
	printf(stdout, "\nChanges under %s are re-indexed within seconds (catalog/, blobs/ and .skilldrop/ there are written by serve); Ctrl-C stops.\n", st.Path())

	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = ix.Watch(wctx, watchEvery) // returns when wctx ends; failures are logged and retried
	}()
	srv := newHTTPServer(h, logger, serveTimeouts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	status := exitOK
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		if err := srv.Shutdown(sctx); err != nil {
			printf(stderr, "skilldrop serve: shutdown: %v\n", err)
		}
		cancel()
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			printf(stderr, "skilldrop serve: %v\n", err)
			status = exitFailure
		}
	}
	stopWatch()
	<-watched
	return status
}

// serveKeys is serve's key store: the comma-separated hashes (flag, else
// the environment), and the key file (flag, else the environment), read
// again every refresh. A key file that cannot be read or parsed at start
// is a usage error; later, it fails closed (503 for requests with a key).
func serveKeys(hashes, file, refresh string) (apikey.Source, error) {
	if hashes == "" {
		hashes = os.Getenv(apikey.EnvHashes)
	}
	set, err := apikey.ParseSet(hashes)
	if err != nil {
		return nil, fmt.Errorf("--api-key-sha256: %w", err)
	}
	if file == "" {
		file = os.Getenv(apikey.EnvFile)
	}
	if refresh == "" {
		refresh = os.Getenv(apikey.EnvRefresh)
	}
	ttl, err := apikey.ParseRefresh(refresh)
	if err != nil {
		return nil, fmt.Errorf("--keys-refresh: %w", err)
	}
	if file == "" {
		return set, nil
	}
	fetch := apikey.FileFetch(file)
	raw, err := fetch(context.Background())
	if err == nil {
		_, err = apikey.Parse(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("--keys %s: %w", printable(file), err)
	}
	return apikey.Union(apikey.NewCached("key file "+file, fetch, apikey.CacheOptions{TTL: ttl}), set), nil
}

// newHTTPServer is serve's http.Server: h behind bounded request handling.
func newHTTPServer(h http.Handler, logger *slog.Logger, t httpTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// listenError says why addr cannot be listened on and what to do.
func listenError(addr string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Sprintf("cannot listen on %s: the address is already in use (another skilldrop serve?); "+
			"choose another with --addr HOST:PORT (make run: RUN_ADDR=HOST:PORT)", addr)
	}
	return fmt.Sprintf("cannot listen on %s: %v; choose another address with --addr HOST:PORT", addr, err)
}

// summary describes the start-up index in a few words.
// configWarnings counts the warnings the status document holds on
// agent-skills.yaml (0 when it cannot be read: the banner only points at
// status, which says more).
func configWarnings(ctx context.Context, st store.Store) int {
	s, err := loadStatus(ctx, st)
	if err != nil || s == nil {
		return 0
	}
	return len(s.Warnings[skillsconfig.Key])
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func summary(r *indexer.Result) string {
	if r == nil {
		return "indexed"
	}
	return fmt.Sprintf("indexed: %d published, %d rejected, revision %d", len(r.Published), len(r.Rejected), r.Revision)
}
