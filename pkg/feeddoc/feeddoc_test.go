package feeddoc

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// TestGzipIsReadByEveryClient: at both levels, the encoding decompresses
// with the standard library's reader (as most clients' do) to the body,
// one gzip member and nothing after it.
func TestGzipIsReadByEveryClient(t *testing.T) {
	body := []byte(strings.Repeat(`{"name":"pdf-tools","description":"Fill & extract PDF forms <fast>."},`, 500))
	for _, level := range []int{RequestLevel, StoredLevel} {
		gz := Gzip(body, level)
		br := bytes.NewReader(gz)
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("level %d: %d bytes back (%v), want the %d of the body", level, len(got), err, len(body))
		}
		if br.Len() != 0 {
			t.Fatalf("level %d: %d bytes after the member", level, br.Len())
		}
		if len(gz) >= len(body) {
			t.Errorf("level %d: %d bytes for a body of %d", level, len(gz), len(body))
		}
	}
}

// TestDocETags: the ETags derive from the body's digest; a body too small
// to be worth compressing has no gzip ETag, and its Gzipped is shared.
func TestDocETags(t *testing.T) {
	small := Render(map[string]string{"a": "b"}, RequestLevel)
	if small.GzETag != "" || !strings.HasPrefix(small.ETag, `"`) || string(small.Body) != "{\"a\":\"b\"}\n" {
		t.Fatalf("small: %+v", small)
	}
	big := FromBytes(bytes.Repeat([]byte("x"), MinGzip), RequestLevel)
	if big.GzETag != strings.TrimSuffix(big.ETag, `"`)+`-gzip"` {
		t.Fatalf("ETags %s and %s", big.ETag, big.GzETag)
	}
	if a, b := big.Gzipped(), big.Gzipped(); &a[0] != &b[0] {
		t.Fatal("the gzip encoding was made twice")
	}
}
