package lambdahttp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/pkg/responselimit"
)

// TestJSONStringIsEncodingJSONs: what appendJSONString writes decodes to
// what encoding/json's encoding of the same bytes decodes to, and for valid
// UTF-8 it is exactly as long as responselimit.JSONStringLen counts.
func TestJSONStringIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "tab\tnew\nline\r", "\x00\x01\x08\x0c\x1f\x7f", "<html>&amp;",
		"line\u2028para\u2029", "café ☕ 𝄞", "\xff\xfe", "a\xe2\x80", "\xed\xa0\x80", "\xc0\xaf"} {
		checkJSONString(t, []byte(s))
	}
}

func checkJSONString(t *testing.T, s []byte) {
	t.Helper()
	got := appendJSONString([]byte("x"), s)
	if got[0] != 'x' {
		t.Fatalf("%q: the destination's bytes were overwritten", s)
	}
	got = got[1:]
	var fromOurs, fromStd string
	if err := json.Unmarshal(got, &fromOurs); err != nil {
		t.Fatalf("%q: %s is not a JSON string: %v", s, got, err)
	}
	std, err := json.Marshal(string(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(std, &fromStd); err != nil {
		t.Fatal(err)
	}
	if fromOurs != fromStd {
		t.Errorf("%q: decodes to %q, encoding/json's to %q", s, fromOurs, fromStd)
	}
	if utf8.Valid(s) && len(got) != responselimit.JSONStringLen(s) {
		t.Errorf("%q: %d bytes written, JSONStringLen counts %d", s, len(got), responselimit.JSONStringLen(s))
	}
}

// FuzzEnvelopeIsTheTypedResponse: for any answer a handler gives, the
// envelope Invoke writes is JSON that decodes to the response Handle
// returns as aws-lambda-go's type, and is no longer than encodedSize, which
// the response bound is checked against.
func FuzzEnvelopeIsTheTypedResponse(f *testing.F) {
	f.Add(200, "application/json", "", "v", "c=1", []byte(`{"a":"é"}`), false)
	f.Add(404, "text/markdown", "gzip", "\"q\"\n", "", []byte("---\nname: x\x00\u2028\n---\n"), false)
	f.Add(200, "application/zip", "", "", "a=b, c", []byte("PK\x03\x04\xff"), false)
	f.Add(200, "text/plain", "", "\xff", "\xfe", []byte("a\xffb"), true)
	f.Fuzz(func(t *testing.T, status int, contentType, encoding, header, cookie string, body []byte, head bool) {
		if status < 100 || status > 999 {
			status = 200
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if contentType != "" {
				w.Header()["Content-Type"] = []string{contentType}
			}
			if encoding != "" {
				w.Header()["Content-Encoding"] = []string{encoding}
			}
			w.Header()["X-Value"] = []string{header, header}
			if cookie != "" {
				w.Header()["Set-Cookie"] = []string{cookie}
			}
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		payload := event(func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = method })
		a := New(h)
		out, err := a.Invoke(context.Background(), payload)
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		resp, err := a.serve(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > resp.encodedSize() {
			t.Errorf("the envelope takes %d bytes, encodedSize counts %d", len(out), resp.encodedSize())
		}
		var got events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("the envelope is not JSON: %v\n%s", err, out)
		}
		// What encoding/json makes of the typed response, read back.
		std, err := json.Marshal(resp.typed())
		if err != nil {
			t.Fatal(err)
		}
		var want events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if len(want.Headers) == 0 {
			want.Headers = got.Headers // {} and null carry the same: no header
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the envelope reads as\n%+v\nthe typed response as\n%+v", got, want)
		}
		if !want.IsBase64Encoded && len(body) > 0 && !head && want.StatusCode == status && !bytes.Equal([]byte(got.Body), body) {
			t.Errorf("a text body arrives as %q, was %q", got.Body, body)
		}
		if got.StatusCode != status && got.StatusCode != http.StatusBadGateway {
			t.Errorf("status %d, want %s", got.StatusCode, strconv.Itoa(status))
		}
	})
}
