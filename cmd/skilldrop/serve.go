package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "serve a directory laid out like the bucket, re-indexing it as it changes",
		args:    "[flags]",
		run:     runServe,
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

// runServe indexes DIR, then serves it with the Lambda's handler until the
// context ends (Ctrl-C), printing the URLs to try on stdout and JSON logs
// on stderr.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["serve"].flagSet(stderr)
	dir := fs.String("dir", ".", "the directory to serve, laid out like the bucket (skills/, listings/, subagents/, agent-skills.yaml)")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on")
	baseURL := fs.String("base-url", "", "the public origin to advertise (default: the request's Host)")
	trustFwd := fs.Bool("trust-forwarded", false, "take the origin from X-Forwarded-Host/-Proto (only behind a proxy that sets them)")
	hashes := fs.String("api-key-sha256", os.Getenv(apikey.EnvHashes), "comma-separated SHA-256 hashes of the accepted API keys (default $"+apikey.EnvHashes+")")
	level := fs.String("log-level", os.Getenv(obs.EnvLogLevel), "DEBUG, INFO (default), WARN or ERROR")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	keys, err := apikey.ParseSet(*hashes)
	if err != nil {
		printf(stderr, "skilldrop serve: -api-key-sha256: %v\n", err)
		return exitUsage
	}
	lvl, err := obs.ParseLevel(*level)
	if err != nil {
		printf(stderr, "skilldrop serve: -log-level: %v\n", err)
		return exitUsage
	}
	logger := obs.NewLogger(stderr, lvl)
	auditor := obs.NewAuditor(logger)

	st, err := store.NewDir(*dir)
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitFailure
	}
	defer func() { _ = st.Close() }()
	ix, err := indexer.New(indexer.Config{Store: st, Logger: logger, Auditor: auditor})
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitFailure
	}
	h, err := server.New(server.Config{
		Store:                 st,
		Keys:                  keys,
		Auditor:               auditor,
		Logger:                logger,
		PublicBaseURL:         *baseURL,
		TrustForwardedHeaders: *trustFwd,
		Local:                 true,
		RevalidateEvery:       revalidateEvery,
	})
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitUsage
	}

	// Index before listening, so the first request finds a catalog.
	res, err := ix.Reindex(ctx)
	if err != nil {
		printf(stderr, "skilldrop serve: index %s: %v\n", *dir, err)
		return exitFailure
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		printf(stderr, "skilldrop serve: %v\n", err)
		return exitFailure
	}
	origin := "http://" + l.Addr().String()
	if *baseURL != "" {
		origin = *baseURL
	}
	printf(stdout, "serving %s on http://%s (%s)\n\n", st.Path(), l.Addr(), summary(res))
	printf(stdout, "  RFC index      %s%s\n", origin, discovery.IndexPath)
	printf(stdout, "  native feed    %s/manifest.json\n", origin)
	printf(stdout, "  MCP            POST %s/mcp\n", origin)
	if keys.Len() > 0 {
		printf(stdout, "  with a key     curl -H 'Authorization: Bearer <key>' %s%s\n", origin, discovery.IndexPath)
	}
	printf(stdout, "\nChanges under %s are re-indexed within seconds; Ctrl-C stops.\n", st.Path())

	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = ix.Watch(wctx, watchEvery) // returns when wctx ends; failures are logged and retried
	}()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
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

// summary describes the start-up index in a few words.
func summary(r *indexer.Result) string {
	if r == nil {
		return "indexed"
	}
	return fmt.Sprintf("indexed: %d published, %d rejected, revision %d", len(r.Published), len(r.Rejected), r.Revision)
}
