package catalog

import (
	"maps"
	"slices"
	"strings"
)

// Overlap is bytes a public entry serves that an authenticated entry holds
// too.
type Overlap struct {
	// Kind and ID name the authenticated entry (ID as Entry.ID).
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
	// File is the path of a file both hold; "" when the whole artifact is
	// the same.
	File string `json:"file,omitempty"`
	// Withdrawn is set when the authenticated entry is withdrawn: its bytes
	// are hidden nowhere now, and the public entry serves what was hidden
	// (a hidden skill moved or renamed, or withdrawn after its bytes were
	// published under another name).
	Withdrawn bool `json:"withdrawn,omitempty"`
}

// HiddenElsewhere finds, for each live public entry, the authenticated
// entries (live or withdrawn) whose latest version holds the same bytes:
// the same artifact, or a file with the same digest (empty files aside);
// a withdrawn one is marked so (Overlap.Withdrawn), as it hides nothing now.
// Visibility follows the name, not the bytes, so a hidden skill whose
// folder was moved into a listing, or renamed, is published under a name
// no entry of agent-skills.yaml hides; this is how an operator finds it.
func HiddenElsewhere(c *Catalog) map[*Entry][]Overlap {
	type holder struct {
		e    *Entry
		file string
	}
	hidden := map[string][]holder{} // digest → the hidden entries holding it
	all := append(c.SortedSkills(), c.SortedSubagents()...)
	for _, e := range all {
		v := e.LatestVersion()
		if e.Visibility != Authenticated || v == nil {
			continue
		}
		hidden[v.Digest.String()] = append(hidden[v.Digest.String()], holder{e, ""})
		for _, f := range v.Files {
			if f.Size > 0 && !f.Digest.Equal(v.Digest) {
				hidden[f.Digest.String()] = append(hidden[f.Digest.String()], holder{e, f.Path})
			}
		}
	}
	out := map[*Entry][]Overlap{}
	if len(hidden) == 0 {
		return out
	}
	for _, e := range all {
		v := e.LatestVersion()
		if e.Visibility == Authenticated || !e.Live() {
			continue
		}
		found := map[Overlap]bool{}
		for _, h := range hidden[v.Digest.String()] {
			found[Overlap{Kind: h.e.Kind, ID: h.e.ID(), Withdrawn: h.e.Withdrawn}] = true
		}
		for _, f := range v.Files {
			for _, h := range hidden[f.Digest.String()] {
				if f.Size > 0 && !found[Overlap{Kind: h.e.Kind, ID: h.e.ID(), Withdrawn: h.e.Withdrawn}] {
					found[Overlap{Kind: h.e.Kind, ID: h.e.ID(), File: f.Path, Withdrawn: h.e.Withdrawn}] = true
				}
			}
		}
		if len(found) > 0 {
			out[e] = slices.SortedFunc(maps.Keys(found), func(a, b Overlap) int {
				switch {
				case a.Kind != b.Kind:
					return strings.Compare(string(a.Kind), string(b.Kind))
				case a.ID != b.ID:
					return strings.Compare(a.ID, b.ID)
				}
				return strings.Compare(a.File, b.File)
			})
		}
	}
	return out
}
