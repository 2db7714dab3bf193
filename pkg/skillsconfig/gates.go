package skillsconfig

import (
	"fmt"

	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// Visibility is the visibility an entry is published with under a
// deployment whose default is deployment: the entry's own, else the default
// in force (DefaultIn); audiences (its own, or a listing's own skill's
// listing's) make it authenticated.
func (c *Config) Visibility(kind catalog.Kind, listing, name string, deployment catalog.Visibility) catalog.Visibility {
	vis, _, _ := c.DefaultIn(deployment)
	if ce := c.Touches(kind, listing, name); ce != nil && ce.Visibility != "" {
		vis = ce.Visibility
	}
	if len(c.EffectiveAudiences(kind, listing, name)) > 0 {
		vis = catalog.Authenticated
	}
	return vis
}

// GateWarnings are the entries of a listing with audiences whose own word
// on visibility is not what they are published with, for validate and
// status, in document order. The listing's audiences are a gate on the
// listing's documents, and what the two say is resolved the fail-closed
// way each time, but silently, so it is said here:
//   - a skill of the listing's own that says visibility: public is
//     published with the listing's audiences (authenticated) all the same;
//   - a published top-level skill the listing includes by name that is
//     public stays public: the listing's audiences hide it from nobody's
//     top-level index nor its artifact's URL.
//
// published is what the bucket publishes; deployment the deployment's
// default visibility ("" where it is not known).
func (c *Config) GateWarnings(published Published, deployment catalog.Visibility) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, l := range c.Listings {
		if len(l.Audiences) == 0 {
			continue
		}
		for _, e := range l.Entries {
			if e.Visibility == catalog.Public {
				out = append(out, fmt.Sprintf("%s: visibility: public does not apply: listing %s has audiences (%s), which its own skills "+
					"carry; drop visibility here, or publish the skill at the top level to make it public", e.Field, l.Name, l.Audiences))
			}
		}
		for i, name := range l.Refs {
			if published.Skills[name] && c.Visibility(catalog.KindSkill, "", name, deployment) == catalog.Public {
				out = append(out, fmt.Sprintf("%s: %q is a public top-level skill: listing %s's audiences (%s) do not hide it, anyone sees it "+
					"in the top-level index and at its URL; give it audiences or visibility: authenticated under skills: to restrict it",
					l.RefFields[i], name, l.Name, l.Audiences))
			}
		}
	}
	return out
}
