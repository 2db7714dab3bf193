package catalog

import (
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// MaxVerifyProblems bounds the blobs a Verify record names; its counts
// stay exact beyond it.
const MaxVerifyProblems = 100

// The states of a blob a verify could not vouch for (BlobProblem.State).
const (
	// BlobUnrecoverable: the blob is missing or holds other bytes, and no
	// source of it validates to the pinned digest any more. An operator
	// must act (upload the pinned bytes again).
	BlobUnrecoverable = "unrecoverable"
	// BlobFailed: the blob or its source could not be read or written, or
	// the blob changed between the check and the repair: run verify again.
	BlobFailed = "failed"
)

// Verify is what the last verify of the blobs (`skilldrop reindex
// --verify`) found: every blob the catalog pins for a live entry, each
// artifact and each file, re-hashed, and those that no longer matched
// rewritten from their source where it still validates to the same digest.
type Verify struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Blobs is how many distinct blobs were checked, each counted once in
	// Verified (intact), Repaired, Unrecoverable or Failed.
	Blobs         int `json:"blobs"`
	Verified      int `json:"verified"`
	Repaired      int `json:"repaired"`
	Unrecoverable int `json:"unrecoverable"`
	Failed        int `json:"failed"`
	// Skipped counts the versions that have no blob to check: external
	// entries' and withdrawn entries' (served nowhere).
	Skipped int `json:"skipped"`
	// Problems are the blobs counted in Unrecoverable and Failed, at most
	// MaxVerifyProblems of them.
	Problems []BlobProblem `json:"problems"`
}

// BlobProblem is one blob a verify could not vouch for, named by the first
// version (or file of a version) that pins it.
type BlobProblem struct {
	Digest digest.Digest `json:"digest"`
	State  string        `json:"state"`
	// Code is stable (source_missing, source_changed, …); Message says why.
	Code    string `json:"code"`
	Message string `json:"message"`
	Kind    Kind   `json:"kind"`
	Entry   string `json:"entry"` // the entry's ID
	Version string `json:"version"`
	// File is the file's path for a file's blob, "" for the artifact's.
	File string `json:"file,omitempty"`
	// Others is how many more versions and files pin the same blob.
	Others int `json:"others,omitempty"`
}

// SetVerify records v as the last verify, keeping at most
// MaxVerifyProblems of its problems.
func (s *Status) SetVerify(v Verify) {
	if len(v.Problems) > MaxVerifyProblems {
		v.Problems = v.Problems[:MaxVerifyProblems]
	}
	if v.Problems == nil {
		v.Problems = []BlobProblem{}
	}
	s.Verify = &v
}
