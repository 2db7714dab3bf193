package server

import (
	"encoding/base64"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mcpPageBytes bounds the encoded items of one page of skills/list,
// resources/list or resources/directory/read. The function's response
// carries the answer JSON as a JSON string, which at most doubles it, so a
// page stays far below the 6 MB response limit; a page holds at least one
// item, and the largest skill entry (512 files with 1 KiB paths, 64 KiB of
// frontmatter) is about 1.1 MB.
const mcpPageBytes = 1 << 20

// maxCursorBytes bounds a cursor a client hands back.
const maxCursorBytes = 4096

// errBadCursor answers a cursor this server did not issue.
var errBadCursor = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "The cursor is not one this server issued."}

// encodeCursor is the opaque cursor after the item named uri. Naming the
// last item returned, rather than a position, keeps a cursor valid across
// a publish: the next page is answered from the catalog current then,
// starting after that URI whether or not it still exists.
func encodeCursor(uri string) string { return base64.RawURLEncoding.EncodeToString([]byte(uri)) }

// decodeCursor returns the URI a cursor names ("" for no cursor).
func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	if len(c) > maxCursorBytes {
		return "", errBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !utf8.Valid(b) || !strings.HasPrefix(string(b), skillPrefix) {
		return "", errBadCursor
	}
	return string(b), nil
}

// pageOf returns the page of a URI-ordered list that follows the cursor:
// the items in [from, to) that keep holds (every item when keep is nil),
// count of them, as many as fit mcpPageBytes (at least one), and the
// cursor of the next page ("" after the last kept item). uri and size
// describe item i.
func pageOf(n int, uri func(i int) string, size func(i int) int, keep func(i int) bool, cursor string) (from, to, count int, next string, err error) {
	after, err := decodeCursor(cursor)
	if err != nil {
		return 0, 0, 0, "", err
	}
	if after != "" {
		from = sort.Search(n, func(i int) bool { return uri(i) > after })
	}
	used, last := 0, -1
	for to = from; to < n; to++ {
		if keep != nil && !keep(to) {
			continue
		}
		if count > 0 && used+size(to) > mcpPageBytes {
			return from, to, count, encodeCursor(uri(last)), nil
		}
		used += size(to)
		count++
		last = to
	}
	return from, to, count, "", nil
}
