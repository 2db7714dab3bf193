// Package audience is who a caller is, as far as visibility goes: anonymous,
// or the holder of a valid key with an audience set. Entries and listings
// of agent-skills.yaml may name audiences; a caller sees an entry that
// names some only when its key's audiences meet them (share one).
//
// What a caller sees is decided by the audience set, never by the key, so
// everything cached or stored per caller is keyed by a Class: the audience
// set that stands for every caller who sees the same entries of one
// document. Groups, the distinct audience sets that decide a document,
// give a caller's Class and every Class a document can have.
package audience

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxNameLen bounds an audience name.
const MaxNameLen = 64

// Wildcard, in a key's audiences, stands for every audience.
const Wildcard = "*"

// ValidName checks an audience name: 1 to 64 lowercase letters, digits
// and single hyphens, starting and ending with a letter or digit (the form
// of a skill name, so one can be read wherever the other is).
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("an audience name must not be empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("audience %.64q… is longer than %d characters", name, MaxNameLen)
	case name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--"):
		return fmt.Errorf("audience %q: hyphens only between letters or digits", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Errorf("audience %q: only lowercase letters, digits and hyphens are allowed", name)
		}
	}
	return nil
}

// Set is a set of audience names, sorted and distinct. The zero Set is
// empty. Build one with NewSet.
type Set []string

// NewSet returns the names as a Set: sorted, duplicates dropped.
func NewSet(names ...string) Set {
	if len(names) == 0 {
		return nil
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return Set(slices.Compact(s))
}

// Meets reports whether s and o share an audience.
func (s Set) Meets(o Set) bool {
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		switch c := strings.Compare(s[i], o[j]); {
		case c == 0:
			return true
		case c < 0:
			i++
		default:
			j++
		}
	}
	return false
}

// Contains reports whether name is in s.
func (s Set) Contains(name string) bool {
	_, ok := slices.BinarySearch(s, name)
	return ok
}

// SubsetOf reports whether every audience of s is in o.
func (s Set) SubsetOf(o Set) bool {
	for _, a := range s {
		if !o.Contains(a) {
			return false
		}
	}
	return true
}

// Equal reports whether s and o hold the same audiences.
func (s Set) Equal(o Set) bool { return slices.Equal(s, o) }

// String is the set as logs and keys write it: the names joined by commas.
func (s Set) String() string { return strings.Join(s, ",") }

// Caller is who is asking, resolved once per request from its credential
// (pkg/apikey): anonymous, or a valid key with its id and audience set.
// Visibility is decided by Authenticated, All and Audiences alone; KeyID
// names the key in logs and audit events and never decides anything.
type Caller struct {
	// KeyID names the key ("" for an anonymous caller): its id in the key
	// store, or the first 8 hex digits of its hash for a bare hash.
	KeyID string
	// Authenticated is set for a valid key.
	Authenticated bool
	// All is set for a key that holds every audience: a bare hash of the
	// comma-separated list, or a named key whose audiences are ["*"].
	All bool
	// Audiences are the key's audiences (empty with All).
	Audiences Set
}

// Anonymous is the caller without a credential: public entries only.
var Anonymous = Caller{}

// Meets reports whether the caller may see what is restricted to set: a
// valid key, and set empty (any valid key) or met by the key's audiences.
func (c Caller) Meets(set Set) bool {
	if !c.Authenticated {
		return false
	}
	return len(set) == 0 || c.All || c.Audiences.Meets(set)
}

// AudienceNames is what logs and audit events write for the caller's
// audiences: "*" for every audience, else the names, never nil (a JSON
// log writes none as [], not null).
func (c Caller) AudienceNames() []string {
	if c.All {
		return []string{Wildcard}
	}
	return append([]string{}, c.Audiences...)
}

// Unrestricted is a valid key of every audience, with no id: what a bare
// hash of the comma-separated store is, and what sees everything there is.
var Unrestricted = Caller{Authenticated: true, All: true}
