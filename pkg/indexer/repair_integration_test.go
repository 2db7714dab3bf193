//go:build integration

package indexer

import "testing"

// TestVerifyS3 runs every behaviour of Verify against the emulator's S3:
// its ETags and its conditional writes (If-Match, If-None-Match).
func TestVerifyS3(t *testing.T) {
	for _, s := range verifySuite {
		t.Run(s.name, func(t *testing.T) { s.run(t, newS3Env) })
	}
}
