package manifest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/search"
)

// The POST routes of this package (see ParseUpdateQueries and
// Feed.CheckUpdates), as the URL table has them. Resolve answers them
// NotFound: the server routes POST here and answers other methods 405.
// "check-updates" is a reserved name for skills and sub-agents alike, so
// neither path can shadow an entry.
const (
	CheckUpdatesPath         = routes.SkillCheckUpdates
	SubagentCheckUpdatesPath = routes.SubagentCheckUpdates
)

// MaxCheckUpdatesBody is the body size a check-updates request needs at
// most: MaxCheckUpdates items of a 64-character name and a 64-character
// version are about 15 KiB of JSON; the rest is room for whitespace and
// the fields a client may add.
const MaxCheckUpdatesBody = 64 << 10

// Stable error codes of the JSON error bodies.
const (
	CodeNotFound         = "not_found"
	CodeInvalidParameter = "invalid_parameter"
	CodeInvalidBody      = "invalid_body"
	CodeTooManyItems     = "too_many_items"
	CodeInvalidName      = "invalid_name"
	CodeInvalidVersion   = "invalid_version"
	CodeGone             = "gone"
)

// Error is a client error with a stable code and a message fit to show the
// caller; the server renders it as its usual error body,
// {"error": {"code": Code, "message": Message}}.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errNotFound is the one answer for everything the caller cannot see, so
// unknown, hidden and withdrawn are indistinguishable.
var errNotFound = &Error{Code: CodeNotFound, Message: "Not found."}

// ErrNoCatalog is returned by Resolve without a catalog: the server must
// answer 5xx, never 404 or an empty list, which clients take for
// "everything was deleted".
var ErrNoCatalog = errors.New("manifest: no catalog")

// Outcome says what kind of answer a Result is.
type Outcome int

// The outcomes. The zero value is NotFound, so a Result nobody filled in
// hides rather than leaks.
const (
	NotFound   Outcome = iota // 404; Err says so in the same words for every path
	Document                  // 200 with Document as JSON
	Bytes                     // 200 with the version's bytes, under the integrity contract
	BadRequest                // 400; Err says what is wrong
	Gone                      // 410; the version was taken out of service, Err says why (catalog.Gone)
)

// Result is Resolve's answer.
type Result struct {
	Outcome Outcome
	// Document is the value to marshal as JSON, for Document.
	Document any
	// Entry and Version are the artifact to serve, for Bytes: the server
	// reads the blob of Version.Digest, re-hashes it and serves it with
	// Version.Format.ContentType(). Entry.Visibility tells whether the
	// bytes may be cached publicly. For Gone bytes they are the version
	// taken out of service (whether it had a bundle tells a bundle's 410
	// from a 404).
	Entry   *catalog.Entry
	Version *catalog.Version
	// Err is the code and message of the JSON error body, for NotFound,
	// BadRequest and Gone.
	Err *Error
}

func notFound() Result { return Result{Outcome: NotFound, Err: errNotFound} }

// goneError is what a lookup of a version taken out of service returns,
// for Resolve to answer 410 with its reason.
type goneError struct{ g *catalog.Gone }

func (e *goneError) Error() string { return "gone: " + e.g.Reason }

// GoneResult is the answer for version v when it is gone, with ok false
// otherwise.
func GoneResult(v *catalog.Version) (Result, bool) {
	if v == nil || v.Gone == nil {
		return Result{}, false
	}
	return Result{Outcome: Gone, Err: &Error{Code: CodeGone, Message: v.Gone.Reason}}, true
}

// asGone turns a goneError into its Result.
func asGone(err error) (Result, bool) {
	var g *goneError
	if !errors.As(err, &g) {
		return Result{}, false
	}
	return Result{Outcome: Gone, Err: &Error{Code: CodeGone, Message: g.g.Reason}}, true
}

func document(v any) Result { return Result{Outcome: Document, Document: v} }

func badRequest(format string, args ...any) Result {
	return Result{Outcome: BadRequest, Err: &Error{Code: CodeInvalidParameter, Message: fmt.Sprintf(format, args...)}}
}

// Resolve answers a GET or HEAD of path with the default page size; see Feed.Resolve.
func Resolve(ctx context.Context, v *catalog.View, c audience.Caller, base *url.URL, path string, query url.Values) (Result, error) {
	f := Feed{View: v, Caller: c, Base: base}
	return f.Resolve(ctx, path, query)
}

// Resolve answers a GET or HEAD of path, the decoded URL path (url.URL.Path:
// "%2B" and "+" are both a plus) that the server has already cleaned of
// "..", encoded slashes and empty segments. Segments match exactly. The
// query matters only to the search routes; elsewhere it is ignored. The
// error is non-nil only when the feed cannot answer at all (no catalog, no
// base URL, a version history that cannot be read): a 5xx.
func (f *Feed) Resolve(ctx context.Context, path string, query url.Values) (Result, error) {
	if f.View == nil {
		return Result{}, ErrNoCatalog
	}
	if f.Base == nil || f.Base.Scheme == "" || f.Base.Host == "" {
		return Result{}, errors.New("manifest: a base URL with scheme and host is required")
	}
	if path == routes.Manifest {
		return document(f.Root()), nil
	}
	for _, c := range []*collection{skills, subagents} {
		if rest, ok := strings.CutPrefix(path, c.feed+"/"); ok {
			return f.native(ctx, c, strings.Split(rest, "/"))
		}
		if path == c.api {
			return f.api(ctx, c, nil, query)
		}
		if rest, ok := strings.CutPrefix(path, c.api+"/"); ok {
			return f.api(ctx, c, strings.Split(rest, "/"), query)
		}
	}
	return notFound(), nil
}

// native answers the segments after /skills/v1/ or /subagents/v1/.
func (f *Feed) native(ctx context.Context, c *collection, segs []string) (Result, error) {
	found := func(doc any, ok bool, err error) (Result, error) {
		if g, ok := asGone(err); ok {
			return g, nil
		}
		switch {
		case err != nil:
			return Result{}, err
		case ok:
			return document(doc), nil
		}
		return notFound(), nil
	}
	switch len(segs) {
	case 1:
		if segs[0] == "index.json" {
			return document(f.Index(c.kind)), nil
		}
	case 2:
		if segs[0] == "pages" {
			if token, ok := strings.CutSuffix(segs[1], ".json"); ok {
				if r, ok := ParseRange(token); ok {
					return document(f.Page(c.kind, r)), nil
				}
			}
		}
		// A skill named "pages" keeps its identity document: "index" is
		// not a range token.
		if segs[1] == "index.json" {
			return found(f.Identity(ctx, c.kind, segs[0]))
		}
	case 3:
		label, ok := strings.CutSuffix(segs[2], ".json")
		if segs[1] != "versions" || !ok {
			break
		}
		if c == skills {
			return found(f.SkillVersion(ctx, segs[0], label))
		}
		return found(f.SubagentVersion(ctx, segs[0], label))
	}
	return notFound(), nil
}

// api answers the segments after /api/v1/skills or /api/v1/subagents.
func (f *Feed) api(ctx context.Context, c *collection, segs []string, query url.Values) (Result, error) {
	switch len(segs) {
	case 0:
		return f.search(c, query), nil
	case 1:
		doc, ok, err := f.Versions(ctx, c.kind, segs[0])
		if err != nil || ok {
			return document(doc), err
		}
	case 2:
		doc, ok, err := f.VersionSummary(ctx, c.kind, segs[0], segs[1])
		if g, gone := asGone(err); gone {
			return g, nil
		}
		if err != nil || ok {
			return document(doc), err
		}
	case 3:
		e := c.lookup(f.View, segs[0], f.Caller)
		if e == nil || e.ExternalURL != "" {
			break // external bytes are not re-hosted
		}
		v, err := f.View.Version(ctx, e, segs[1])
		if err != nil {
			return Result{}, err
		}
		if v != nil && segs[2] == c.fileName(v) {
			if g, gone := GoneResult(v); gone {
				g.Entry, g.Version = e, v // for the bundle beside the bytes
				return g, nil
			}
			return Result{Outcome: Bytes, Entry: e, Version: v}, nil
		}
	}
	return notFound(), nil
}

func (f *Feed) search(c *collection, query url.Values) Result {
	q, err := single(query, "q")
	if err != nil {
		return badRequest("%s", err)
	}
	if len(q) > search.MaxQueryLen {
		return badRequest("q is %d bytes long, at most %d allowed", len(q), search.MaxQueryLen)
	}
	skip, err := count(query, "skip", 0, 0, MaxSkip)
	if err != nil {
		return badRequest("%s", err)
	}
	take, err := count(query, "take", DefaultTake, 1, MaxTake)
	if err != nil {
		return badRequest("%s", err)
	}
	return document(f.Search(c.kind, q, skip, take))
}

// single returns a parameter given at most once ("" when absent).
func single(query url.Values, name string) (string, error) {
	vals := query[name]
	if len(vals) > 1 {
		return "", fmt.Errorf("%s is given %d times, at most once allowed", name, len(vals))
	}
	if len(vals) == 0 {
		return "", nil
	}
	return vals[0], nil
}

// count parses an optional decimal parameter in [lo, hi].
func count(query url.Values, name string, def, lo, hi int) (int, error) {
	s, err := single(query, name)
	if err != nil {
		return 0, err
	}
	if _, given := query[name]; !given {
		return def, nil
	}
	if strings.HasPrefix(s, "-") && len(s) > 1 && isDigits(s[1:]) {
		return 0, fmt.Errorf("%s=%s is negative: want a whole number from %d to %d", name, clip(s), lo, hi)
	}
	if !isDigits(s) {
		return 0, fmt.Errorf("%s=%q is not a whole number: want one from %d to %d", name, clip(s), lo, hi)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%s is out of range: want a whole number from %d to %d", name, clip(s), lo, hi)
	}
	return n, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// clip bounds hostile input echoed into messages.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
