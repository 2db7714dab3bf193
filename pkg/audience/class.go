package audience

import (
	"fmt"
	"slices"
	"strings"
)

// Groups are the distinct non-empty audience sets that decide what one
// document shows (the audiences of its entries, and of the listing it is),
// in a canonical order: two callers who meet the same groups see the same
// document. Build them with GroupsOf.
type Groups []Set

// GroupsOf returns the distinct non-empty sets, ordered by String.
func GroupsOf(sets ...Set) Groups {
	var g Groups
	for _, s := range sets {
		if len(s) > 0 {
			g = append(g, s)
		}
	}
	slices.SortFunc(g, func(a, b Set) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(g, Set.Equal)
}

// Class is the audience set that stands for every caller seeing the same
// entries of a document: anonymous, or a valid key whose audiences are
// exactly Audiences. Caches and stored documents are keyed by it.
type Class struct {
	Authenticated bool
	Audiences     Set
}

// Caller is a caller of the class: what rendering it for must assume.
func (c Class) Caller() Caller {
	return Caller{Authenticated: c.Authenticated, Audiences: c.Audiences}
}

// Key names the class in cache keys: "" for anonymous, "+" followed by
// the audiences for a valid key.
func (c Class) Key() string {
	if !c.Authenticated {
		return ""
	}
	return "+" + c.Audiences.String()
}

// String is the class for logs.
func (c Class) String() string {
	switch {
	case !c.Authenticated:
		return "anonymous"
	case len(c.Audiences) == 0:
		return "authenticated"
	}
	return "audiences " + c.Audiences.String()
}

// Class returns the caller's class in a document decided by g: anonymous
// for an anonymous caller, else the largest set of g's audiences that
// meets exactly the groups the caller meets. It depends only on which of
// g the caller meets, so a key's audiences that g does not name change
// nothing, and a key of every audience is in the class of all of them.
func (g Groups) Class(c Caller) Class {
	if !c.Authenticated {
		return Class{}
	}
	met := make([]bool, len(g))
	for i, s := range g {
		met[i] = c.Meets(s)
	}
	return Class{Authenticated: true, Audiences: g.largest(met)}
}

// largest is the set of g's audiences every group of which is met.
func (g Groups) largest(met []bool) Set {
	var out []string
	for _, a := range g.names() {
		ok := true
		for i, s := range g {
			if !met[i] && s.Contains(a) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, a)
		}
	}
	return Set(out)
}

// names are the audiences g names, sorted.
func (g Groups) names() []string {
	var all []string
	for _, s := range g {
		all = append(all, s...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Classes returns every class a document decided by g can have, anonymous
// first, then by Key. An error says there would be more than max classes
// of keys (a key may hold any combination of audiences, so n independent
// audiences make 2^n of them, each a document of its own).
func (g Groups) Classes(max int) ([]Class, error) {
	names := g.names()
	reach := map[string]bool{} // the combinations of groups met, found so far
	key := func(met []bool) string {
		var b strings.Builder
		for _, m := range met {
			if m {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String()
	}
	none := make([]bool, len(g))
	combos := [][]bool{none}
	reach[key(none)] = true
	for _, a := range names {
		for _, m := range combos {
			next := slices.Clone(m)
			for i, s := range g {
				next[i] = next[i] || s.Contains(a)
			}
			if k := key(next); !reach[k] {
				reach[k] = true
				combos = append(combos, next)
				if len(combos) > max {
					return nil, fmt.Errorf("the audiences %s make more than %d distinct views (a key may hold any combination of them)",
						strings.Join(names, ", "), max)
				}
			}
		}
	}
	out := []Class{{}}
	for _, m := range combos {
		out = append(out, Class{Authenticated: true, Audiences: g.largest(m)})
	}
	slices.SortFunc(out[1:], func(a, b Class) int { return strings.Compare(a.Key(), b.Key()) })
	return out, nil
}

// Classifier tells callers' classes in one document decided by Groups, at
// a cost per call of a pass over the groups and their audiences: build one
// per document and revision (the request path asks it on every request).
type Classifier struct {
	groups Groups
	names  []string
	masks  []uint64 // by name: the groups holding it, when there are at most 64
}

// NewClassifier prepares g's classes.
func NewClassifier(g Groups) *Classifier {
	k := &Classifier{groups: g, names: g.names()}
	if len(g) <= 64 {
		k.masks = make([]uint64, len(k.names))
		for j, a := range k.names {
			for i, s := range g {
				if s.Contains(a) {
					k.masks[j] |= 1 << i
				}
			}
		}
	}
	return k
}

// Class is Groups.Class.
func (k *Classifier) Class(c Caller) Class {
	switch {
	case !c.Authenticated:
		return Class{}
	case len(k.groups) == 0:
		return Class{Authenticated: true}
	case k.masks == nil:
		return k.groups.Class(c)
	}
	var met uint64
	for i, s := range k.groups {
		if c.Meets(s) {
			met |= 1 << i
		}
	}
	var out Set
	for j, m := range k.masks {
		if m&^met == 0 {
			out = append(out, k.names[j])
		}
	}
	return Class{Authenticated: true, Audiences: out}
}
