// Package responselimit is how much a Lambda function can answer, and how
// a body counts towards it as the API Gateway adapter (pkg/lambdahttp)
// encodes it. It is the one place the limit is written down: the adapter
// enforces it, the indexer sizes what it admits to MCP against it, and the
// API's wiring tells the request path, which redirects documents that
// would not fit. It depends on nothing, so none of them needs another.
package responselimit

// MaxBytes is the function's response limit: Lambda refuses a buffered
// response payload above 6 MB, and the JSON envelope (headers, base64)
// counts towards it.
const MaxBytes = 6_000_000

// EnvelopeReserve is what the bound keeps back for the status, headers and
// JSON framing of the event response.
const EnvelopeReserve = 64 << 10

// MaxEncodedBody is the most an encoded body may take in an event response
// of MaxBytes: a text body as a JSON string (JSONStringLen), any other as
// base64. Its headers count towards it as well.
const MaxEncodedBody = MaxBytes - EnvelopeReserve

// JSONStringLen is the length a text body s takes in the event response,
// as the adapter counts it: s encoded as a JSON string by encoding/json
// without HTML escaping (aws-lambda-go's setting), every control byte
// counted as a six-byte escape. It reads s once, a table lookup a byte: it
// runs over every document of megabytes a cold start answers.
func JSONStringLen[T string | []byte](s T) int {
	n := 2 + len(s)
	for i := 0; i < len(s); i++ {
		switch e := escapeExtra[s[i]]; e {
		case 0:
		case lineSeparatorLead:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				n += 3 // U+2028, U+2029: three bytes written as six
				i += 2
			}
		default:
			n += int(e)
		}
	}
	return n
}

// lineSeparatorLead marks 0xe2 in escapeExtra: the first byte of U+2028
// and U+2029, which encoding/json escapes.
const lineSeparatorLead = 0xff

// escapeExtra is how many bytes more than one a byte takes in a JSON string.
var escapeExtra = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 5 // \u00XX
	}
	for _, c := range []byte{'"', '\\', '\n', '\r', '\t'} {
		t[c] = 1
	}
	t[0xe2] = lineSeparatorLead
	return t
}()
