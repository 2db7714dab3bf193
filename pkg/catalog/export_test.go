package catalog

import (
	"encoding/json"
	"testing"
)

// WithStandardDecoder makes the codec decode with encoding/json for the
// rest of the test, so a test can compare the two decoders.
func WithStandardDecoder(t *testing.T) {
	decodeJSON = json.Unmarshal
	t.Cleanup(func() { decodeJSON = fastDecoder })
}

var fastDecoder = decodeJSON
