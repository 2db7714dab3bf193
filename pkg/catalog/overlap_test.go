package catalog

import (
	"testing"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

func TestHiddenElsewhere(t *testing.T) {
	d := func(s string) digest.Digest { return digest.Of([]byte(s)) }
	entry := func(kind Kind, listing, name string, vis Visibility, withdrawn bool, artifact string, files ...File) *Entry {
		e := NewEntry(kind, listing, name)
		e.Visibility, e.Withdrawn, e.Latest = vis, withdrawn, "1"
		e.SetVersions([]Version{{Label: "1", Digest: d(artifact), Files: files}})
		return e
	}
	script := File{Path: "scripts/run.sh", Digest: d("run"), Size: 3}
	empty := File{Path: "empty.txt", Digest: d(""), Size: 0}
	c := New()
	for _, e := range []*Entry{
		entry(KindSkill, "", "secret", Authenticated, true, "secret.zip", script, empty), // withdrawn: moved away
		entry(KindSkill, "p", "secret", Public, false, "secret.zip", script, empty),      // the same bytes, in a listing
		entry(KindSkill, "", "renamed", Public, false, "renamed.zip", File{Path: "bin/run.sh", Digest: d("run"), Size: 3}),
		entry(KindSkill, "", "blank", Public, false, "blank.zip", empty), // an empty file is no one's secret
		entry(KindSkill, "", "hidden-too", Authenticated, false, "secret.zip"),
	} {
		c.Skills[e.ID()] = e
	}
	got := HiddenElsewhere(c)
	byID := map[string][]Overlap{}
	for e, o := range got {
		byID[e.ID()] = o
	}
	if o := byID["p/secret"]; len(o) != 2 || o[0] != (Overlap{Kind: KindSkill, ID: "hidden-too"}) || o[1] != (Overlap{Kind: KindSkill, ID: "secret", Withdrawn: true}) {
		t.Errorf("p/secret: %+v", o)
	}
	if o := byID["renamed"]; len(o) != 1 || o[0] != (Overlap{Kind: KindSkill, ID: "secret", File: "bin/run.sh", Withdrawn: true}) {
		t.Errorf("renamed: %+v", o)
	}
	if len(got) != 2 {
		t.Errorf("flagged %d entries, want 2: %v", len(got), byID)
	}
}
