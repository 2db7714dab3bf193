package burst

import (
	"testing"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
)

// TestTheUploadsArePublishable: a burst measures publications, so what it
// uploads must validate (a rejected upload would never become visible).
func TestTheUploadsArePublishable(t *testing.T) {
	key := artifact.SkillKey("", "burst-7", artifact.FormatMarkdown)
	k, err := artifact.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Validate(k, []byte(Body("burst-7")), archive.Limits{}); err != nil {
		t.Fatalf("%s does not validate: %v", key, err)
	}
}
