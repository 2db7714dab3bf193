package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestMCPConcurrentHosts has hosts list and read, through both paths,
// while the catalog is republished under them: every answer is a whole
// one (run it with -race for the indexes and the content cache).
func TestMCPConcurrentHosts(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	for i := range 20 {
		servedSkill(b, fmt.Sprintf("s%02d", i), catalog.Public, map[string][]byte{"refs/a.md": []byte(fmt.Sprint("file ", i))})
	}
	b.publish()
	h := newHarness(t, st)
	// Parallel subtests, so each host's failures stop its own goroutine.
	t.Run("group", func(t *testing.T) {
		for g := range 6 {
			t.Run(fmt.Sprint("host ", g), func(t *testing.T) {
				t.Parallel()
				rev := revisions[g%len(revisions)]
				c := newMCPClient(t, h, rev, "")
				for i := range 30 {
					if skills := c.listAll(); len(skills) < 20 {
						t.Fatalf("%s: %d skills listed", rev, len(skills))
					}
					c.read(fmt.Sprintf("skill://s%02d/refs/a.md", i%20))
					c.result("skills/get", map[string]any{"uri": fmt.Sprintf("skill://s%02d/SKILL.md", i%20)}, new(wireGet))
				}
			})
		}
		t.Run("publisher", func(t *testing.T) {
			t.Parallel()
			for i := range 10 {
				servedSkill(b, fmt.Sprintf("t%02d", i), catalog.Public, map[string][]byte{"x.md": []byte("x")})
				b.publish()
				h.clock.Advance(2 * time.Second)
			}
		})
	})
}
