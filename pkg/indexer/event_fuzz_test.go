package indexer

import (
	"errors"
	"net/url"
	"testing"
)

// FuzzDecodePayload feeds arbitrary invocation payloads to the decoder: it
// must never panic, must fail only with ErrPayload, and must return only
// non-empty keys that survive escaping again.
func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(ReindexPayload))
	f.Add([]byte(`{"Service":"Amazon S3","Event":"s3:TestEvent"}`))
	f.Add(motoRecord("b", "skills/x y+z.md", "ObjectCreated:Put"))
	f.Add(deleteMarkerRecord("b", "listings/l/skills/x.zip"))
	f.Add([]byte(`{"Records":[{"eventSource":"aws:sqs","body":"{\"Records\":[{\"eventSource\":\"aws:s3\",\"eventName\":\"ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"skills%2Fq.md\"}}}]}"}]}`))
	f.Add([]byte(`{"Records":[{"eventSource":"aws:sqs","body":"{\"Records\":[{\"eventSource\":\"aws:sqs\",\"body\":\"{}\"}]}"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := DecodePayload(raw)
		if err != nil {
			if !errors.Is(err, ErrPayload) {
				t.Fatalf("error %v is not ErrPayload", err)
			}
			return
		}
		keys, _ := p.Keys("")
		for _, k := range keys {
			if k == "" {
				t.Fatal("an empty key")
			}
			if _, err := url.QueryUnescape(url.QueryEscape(k)); err != nil {
				t.Fatalf("key %q does not round-trip: %v", k, err)
			}
		}
	})
}
