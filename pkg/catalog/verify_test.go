package catalog

import (
	"fmt"
	"testing"
)

// TestSetVerifyBoundsTheProblems: the status document names at most
// MaxVerifyProblems blobs; the counts stay exact.
func TestSetVerifyBoundsTheProblems(t *testing.T) {
	v := Verify{Blobs: MaxVerifyProblems + 5, Unrecoverable: MaxVerifyProblems + 5}
	for i := range MaxVerifyProblems + 5 {
		v.Problems = append(v.Problems, BlobProblem{State: BlobUnrecoverable, Entry: fmt.Sprint(i)})
	}
	s := NewStatus()
	s.SetVerify(v)
	if got := s.Verify; len(got.Problems) != MaxVerifyProblems || got.Unrecoverable != MaxVerifyProblems+5 || got.Problems[0].Entry != "0" {
		t.Fatalf("%d problems, %d unrecoverable", len(got.Problems), got.Unrecoverable)
	}
	s.SetVerify(Verify{Blobs: 3, Verified: 3})
	if s.Verify.Problems == nil || len(s.Verify.Problems) != 0 {
		t.Fatalf("problems %#v, want an empty list", s.Verify.Problems)
	}
}
