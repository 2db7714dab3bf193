// Package feeddoc is a feed document as it goes over the wire: its JSON
// (compact, URLs unescaped, a final newline), a strong ETag derived from
// its SHA-256, and its gzip encoding with an ETag of its own. The request
// path renders the documents it answers itself with it, and the indexer
// the large ones it stores in the bucket, so both produce the same bytes
// and the same ETags: a client's conditional request stays valid whichever
// of the two answered it before.
package feeddoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// MinGzip is the smallest body worth compressing.
const MinGzip = 1024

// Gzip levels (of github.com/klauspost/compress/gzip, which is several
// times faster than compress/gzip at the same level). A document the
// request path renders is compressed there too, Huffman coding alone,
// which costs a fraction of the render (BenchmarkRenderAgainstGzip: a
// quarter to two fifths) where any level with matching costs about as much
// as the render or more; the documents large enough for that to matter are
// the indexer's, rendered into the bucket once per publish and fetched many
// times, at the fastest level with matching, which leaves them about 40%
// smaller than Huffman coding does.
const (
	RequestLevel = gzip.HuffmanOnly
	StoredLevel  = gzip.BestSpeed
)

// Doc is a rendered document. Its gzip encoding is made on first demand
// and kept; concurrent callers share one compression.
type Doc struct {
	Body   []byte
	Digest digest.Digest
	ETag   string
	// GzETag is "" when the body is too small to be worth compressing.
	GzETag string

	level  int
	gzOnce sync.Once
	gz     []byte
}

// Render encodes v (a value of skilldrop's own document types) at gzip
// level level.
func Render(v any, level int) *Doc {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only documents built from our own types reach here.
		panic(fmt.Sprintf("feeddoc: encode document: %v", err))
	}
	return FromBytes(buf.Bytes(), level)
}

// FromBytes is the document whose JSON is body (as Render wrote it).
func FromBytes(body []byte, level int) *Doc {
	d := &Doc{Body: body, Digest: digest.Of(body), level: level}
	d.ETag, d.GzETag = ETags(d.Digest, len(body))
	return d
}

// ETags are the strong ETags of a document with digest d and size n, as
// JSON and gzip-encoded ("" for gzip below MinGzip).
func ETags(d digest.Digest, n int) (etag, gzETag string) {
	tag := d.Hex()[:32]
	etag = `"` + tag + `"`
	if n >= MinGzip {
		gzETag = `"` + tag + `-gzip"`
	}
	return etag, gzETag
}

// Gzipped returns the gzip encoding of the body; only for a Doc with a GzETag.
func (d *Doc) Gzipped() []byte {
	d.gzOnce.Do(func() { d.gz = Gzip(d.Body, d.level) })
	return d.gz
}

// Gzip compresses b at level (a valid gzip level).
func Gzip(b []byte, level int) []byte {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, level) // valid levels only: no error
	_, _ = zw.Write(b)                       // writes to a bytes.Buffer cannot fail
	_ = zw.Close()
	return gz.Bytes()
}
