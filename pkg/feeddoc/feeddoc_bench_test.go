package feeddoc_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/url"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
)

// BenchmarkRenderAgainstGzip puts the gzip of a document beside the render
// it compresses: the RFC index of a generated catalog, rendered, then
// compressed at RequestLevel (the request path's: it must cost less than
// the render, issue 11), at StoredLevel (the indexer's), and, for
// reference, with compress/gzip at BestSpeed (what the request path used
// before). ratio is the compressed size over the document's.
//
//	go test -run '^$' -bench RenderAgainstGzip -count 3 ./pkg/feeddoc/
func BenchmarkRenderAgainstGzip(b *testing.B) {
	base, _ := url.Parse("https://skills.example.com")
	for _, n := range []int{1000, 10000, 50000} {
		v := catalogtest.Generate(catalogtest.Default(n)).View(b)
		doc := feeddoc.Render(discovery.TopLevel(v, audience.Anonymous, base), feeddoc.RequestLevel)
		b.Run(fmt.Sprintf("render/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc.Body)))
			for b.Loop() {
				feeddoc.Render(discovery.TopLevel(v, audience.Anonymous, base), feeddoc.RequestLevel)
			}
		})
		for _, l := range []struct {
			name string
			gzip func([]byte) []byte
		}{
			{"request-level", func(b []byte) []byte { return feeddoc.Gzip(b, feeddoc.RequestLevel) }},
			{"stored-level", func(b []byte) []byte { return feeddoc.Gzip(b, feeddoc.StoredLevel) }},
			{"stdlib-best-speed", func(b []byte) []byte {
				var out bytes.Buffer
				w, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
				_, _ = w.Write(b)
				_ = w.Close()
				return out.Bytes()
			}},
		} {
			b.Run(fmt.Sprintf("gzip-%s/%d", l.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(doc.Body)))
				var out []byte
				for b.Loop() {
					out = l.gzip(doc.Body)
				}
				b.ReportMetric(float64(len(out))/float64(len(doc.Body)), "ratio")
			})
		}
	}
}
