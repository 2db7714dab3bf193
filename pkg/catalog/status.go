package catalog

import (
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// MaxRejections bounds the rejection history kept in the status document.
const MaxRejections = 200

// Status is the operator-facing status document (StatusKey): recent
// rejections with their reasons, warnings about accepted keys, and what
// the last verify of the blobs found.
type Status struct {
	Schema    int       `json:"schema"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Rejections, newest first, at most MaxRejections.
	Rejections []Rejection `json:"rejections"`
	// Warnings by bucket key, replaced whenever the key is indexed again.
	Warnings map[string][]string `json:"warnings,omitempty"`
	// Jobs are the re-indexes and reconciles fed through the queue, newest
	// first, at most MaxJobs.
	Jobs []Job `json:"jobs,omitempty"`
	// Verify is what the last verify of the blobs found (nil: none yet).
	Verify *Verify `json:"verify,omitempty"`
}

// MaxJobs bounds the jobs kept in the status document.
const MaxJobs = 10

// Job is a re-index or reconcile whose keys were fed to the indexer's
// queue in chunks, and how far the batches that took them got.
type Job struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"` // "reindex" or "reconcile"
	Started time.Time `json:"started"`
	Keys    int       `json:"keys"`
	Done    int       `json:"done"`
	// Finished is when the last of its keys was reconciled.
	Finished *time.Time `json:"finished,omitempty"`
}

// StartJob records a new job, newest first.
func (s *Status) StartJob(j Job) {
	s.Jobs = append([]Job{j}, s.Jobs...)
	if len(s.Jobs) > MaxJobs {
		s.Jobs = s.Jobs[:MaxJobs]
	}
}

// Job returns the job with the id, or nil.
func (s *Status) Job(id string) *Job {
	for i := range s.Jobs {
		if s.Jobs[i].ID == id {
			return &s.Jobs[i]
		}
	}
	return nil
}

// Rejection records one refused upload or config.
type Rejection struct {
	Key     string    `json:"key"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
	// Name is the skill or sub-agent name the key implies, when known.
	Name string `json:"name,omitempty"`
	// Digest identifies the refused bytes, and ETag the object when its
	// bytes could not be hashed (too large to read): a redelivered event
	// for the same bytes is recognised and not recorded twice.
	Digest digest.Digest `json:"digest,omitzero"`
	ETag   string        `json:"etag,omitempty"`
	// Findings are the findings that blocked a scan_blocked rejection's
	// bytes (at most scan.MaxFindings).
	Findings []scan.Blocker `json:"findings,omitempty"`
	// Closed is when the version a revoked or scan_blocked rejection kept
	// out of service was put back (zero: it was not).
	Closed time.Time `json:"closed,omitzero"`
}

// LatestRejection returns the newest rejection recorded for key and name
// (one key can hold several entries: agent-skills.yaml), or nil.
func (s *Status) LatestRejection(key, name string) *Rejection {
	for i := range s.Rejections {
		if s.Rejections[i].Key == key && s.Rejections[i].Name == name {
			return &s.Rejections[i]
		}
	}
	return nil
}

// CloseRejections marks closed, at at, each key's newest rejection that
// is revoked or scan_blocked for the bytes d of name (the version back in
// service) and not closed yet. It reports whether it closed any.
func (s *Status) CloseRejections(name string, d digest.Digest, at time.Time) bool {
	type keyName struct{ key, name string }
	seen := map[keyName]bool{}
	closed := false
	for i := range s.Rejections {
		r := &s.Rejections[i]
		k := keyName{r.Key, r.Name}
		if seen[k] {
			continue // superseded by a newer rejection of the key
		}
		seen[k] = true
		if (r.Code == GoneRevoked || r.Code == GoneScanBlocked) && r.Closed.IsZero() && (r.Name == name || r.Name == "") &&
			!r.Digest.IsZero() && r.Digest.Equal(d) {
			r.Closed, closed = at, true
		}
	}
	return closed
}

// NewStatus returns an empty status document.
func NewStatus() *Status { return &Status{Schema: SchemaVersion, Warnings: map[string][]string{}} }

// Reject records a rejection, newest first, dropping the oldest beyond MaxRejections.
func (s *Status) Reject(r Rejection) {
	s.Rejections = append([]Rejection{r}, s.Rejections...)
	if len(s.Rejections) > MaxRejections {
		s.Rejections = s.Rejections[:MaxRejections]
	}
}

// Warn replaces the warnings recorded for key (none clears them).
func (s *Status) Warn(key string, warnings []string) {
	if s.Warnings == nil {
		s.Warnings = map[string][]string{}
	}
	if len(warnings) == 0 {
		delete(s.Warnings, key)
		return
	}
	s.Warnings[key] = warnings
}
