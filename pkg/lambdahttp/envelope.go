package lambdahttp

import (
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/pkg/responselimit"
)

// eventResponse is a recorded response as the event response carries it:
// the body stays the handler's bytes until the envelope is written, once,
// by appendJSON (a megabyte document is never copied into a string, nor
// passed through encoding/json's reflection).
type eventResponse struct {
	status  int
	headers map[string]string
	cookies []string
	body    []byte
	base64  bool // the body travels base64-encoded (isBase64Encoded)
}

// encodedSize bounds the size of the response as a JSON document: the
// encoded body (a text body is valid UTF-8, which JSONStringLen counts
// exactly), the headers and cookies as written, and the framing.
func (r eventResponse) encodedSize() int {
	n := 256
	if r.base64 {
		n += base64.StdEncoding.EncodedLen(len(r.body)) + 2
	} else {
		n += responselimit.JSONStringLen(r.body)
	}
	for k, v := range r.headers {
		n += jsonLen(k) + jsonLen(v) + 2
	}
	for _, c := range r.cookies {
		n += jsonLen(c) + 1
	}
	return n
}

// jsonLen is the length of s as appendJSONString writes it (a header may
// hold bytes that are not UTF-8, each written as a six-byte escape).
func jsonLen(s string) int { return len(appendJSONString(nil, []byte(s))) }

// typed is r as aws-lambda-go's event response type.
func (r eventResponse) typed() events.APIGatewayV2HTTPResponse {
	ev := events.APIGatewayV2HTTPResponse{StatusCode: r.status, Headers: r.headers, Cookies: r.cookies, IsBase64Encoded: r.base64}
	if len(r.body) > 0 {
		if r.base64 {
			ev.Body = base64.StdEncoding.EncodeToString(r.body)
		} else {
			ev.Body = string(r.body)
		}
	}
	return ev
}

// appendJSON appends r as the JSON document API Gateway reads (payload
// format 2.0): the fields of events.APIGatewayV2HTTPResponse that carry
// something, headers in sorted order, the body escaped as encoding/json
// escapes it without HTML escaping, which is what JSONStringLen counts.
func (r eventResponse) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"statusCode":`...)
	dst = strconv.AppendInt(dst, int64(r.status), 10)
	dst = append(dst, `,"headers":{`...)
	for i, k := range slices.Sorted(maps.Keys(r.headers)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, []byte(k))
		dst = append(dst, ':')
		dst = appendJSONString(dst, []byte(r.headers[k]))
	}
	dst = append(dst, '}')
	if len(r.cookies) > 0 {
		dst = append(dst, `,"cookies":[`...)
		for i, c := range r.cookies {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, []byte(c))
		}
		dst = append(dst, ']')
	}
	if r.base64 {
		dst = append(dst, `,"isBase64Encoded":true,"body":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.body)
		dst = append(dst, `"}`...)
		return dst
	}
	dst = append(dst, `,"body":`...)
	dst = appendJSONString(dst, r.body)
	return append(dst, '}')
}

// plainByte marks the bytes a JSON string carries as they are, one byte
// standing for itself: printable ASCII other than the quote and backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control bytes escaped (\n, \r, \t short, the others \u00XX), U+2028 and
// U+2029 escaped, and each byte of invalid UTF-8 replaced by \ufffd, as
// encoding/json does. Runs of plain bytes are copied whole.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
