package responselimit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONStringLenIsEncodingJSONs: the length counted is what
// encoding/json writes without HTML escaping, as aws-lambda-go encodes the
// event response, for every byte that takes an escape and some that do not
// (text bodies only: the adapter sends anything but valid UTF-8 in base64).
func TestJSONStringLenIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "tab\tnew\nline\r", "\x00\x01\x1f", "<html>&amp;",
		"line\u2028para\u2029", "café ☕"} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := b.Len() - 1 // the newline Encode adds
		if got := JSONStringLen(s); got != want {
			t.Errorf("JSONStringLen(%q) = %d, encoding/json writes %d", s, got, want)
		}
	}
}
