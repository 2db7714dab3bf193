// Package catalogtest generates large, realistic buckets and catalogs for
// benchmarks and scale tests: thousands of skills with distinct,
// English-like descriptions, a share of them archives, authenticated or in
// listings, plus sub-agents and the agent-skills.yaml that ties them
// together.
//
// A Bucket is the model; it writes the source objects an operator would drop
// (skills/, listings/, subagents/, agent-skills.yaml) into a directory or a
// store.Store for the indexer to index, whatever the catalog's format, or
// builds the *catalog.Catalog those sources describe directly, for
// renderers and search. Everything is deterministic in the Spec.
package catalogtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// Spec describes a bucket to generate. Counts of zero mean none.
type Spec struct {
	// Skills is how many top-level skills there are.
	Skills int
	// DescriptionLen is about how many characters each description has
	// (at most skillmd.MaxDescriptionLen, 1024).
	DescriptionLen int
	// ArchiveEvery makes every n-th skill an archive, alternately a zip
	// and a .tar.gz; AuthenticatedEvery makes every n-th skill
	// visibility: authenticated in agent-skills.yaml.
	ArchiveEvery, AuthenticatedEvery int
	// Listings is how many listings there are; each has ListingSkills
	// skills of its own and includes ListingSkills top-level skills by name.
	Listings, ListingSkills int
	// Subagents is how many sub-agents there are; every third is authenticated.
	Subagents int
	// Seed varies the text; the same Spec always gives the same bytes.
	Seed uint64
}

// Default is a bucket of n top-level skills shaped like an organisation's:
// 200-character descriptions, 2% archives, 10% authenticated, two listings
// of three skills, five sub-agents.
func Default(n int) Spec {
	return Spec{
		Skills: n, DescriptionLen: 200, ArchiveEvery: 50, AuthenticatedEvery: 10,
		Listings: 2, ListingSkills: 3, Subagents: 5, Seed: 1,
	}
}

// Version is the version label every generated skill and sub-agent has.
const Version = "1.0.0"

// Epoch is the publish time of the first generated entry; entry i is
// published i seconds later.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Item is one generated skill or sub-agent.
type Item struct {
	Name        string
	Description string
	// Key is the bucket key of its source object.
	Key    string
	Kind   catalog.Kind
	Format artifact.Format
	// Listing is the listing a listing-only skill belongs to; "" otherwise.
	Listing string
	// Listings are the listings that include this top-level skill by name.
	Listings      []string
	Authenticated bool
}

// Bucket is a generated bucket: its items in name order per collection.
type Bucket struct {
	Spec      Spec
	Skills    []Item // top-level and listing-only skills
	Subagents []Item
}

// Generate builds the model of the bucket spec describes. It is cheap
// (50,000 skills with 200-character descriptions take well under a second):
// the bytes of each object are built when written.
func Generate(spec Spec) *Bucket {
	b := &Bucket{Spec: spec}
	names := newText(spec.Seed, 0)
	seen := map[string]bool{}
	name := func(i int) string {
		// Two words and a base-36 serial: unique, valid, and with the
		// shared prefixes real names have.
		for {
			n := names.nameWord() + "-" + names.nameWord() + "-" + strconv.FormatInt(int64(i), 36)
			if len(n) <= 64 && !seen[n] {
				seen[n] = true
				return n
			}
		}
	}
	descLen := max(spec.DescriptionLen, 1)
	for i := range spec.Skills {
		it := Item{Name: name(i), Kind: catalog.KindSkill, Format: artifact.FormatMarkdown}
		it.Description = newText(spec.Seed, uint64(i)+1).sentences(descLen)
		if spec.ArchiveEvery > 0 && i%spec.ArchiveEvery == spec.ArchiveEvery-1 {
			it.Format = artifact.FormatZip
			if (i/spec.ArchiveEvery)%2 == 1 {
				it.Format = artifact.FormatTarGz
			}
		}
		it.Authenticated = spec.AuthenticatedEvery > 0 && i%spec.AuthenticatedEvery == spec.AuthenticatedEvery-1
		it.Key = "skills/" + it.Name + "." + string(it.Format)
		b.Skills = append(b.Skills, it)
	}
	// Listing references are spread evenly over the top-level skills.
	stride := max(1, spec.Skills/max(1, spec.Listings*spec.ListingSkills))
	for l := range spec.Listings {
		listing := listingName(l)
		for j := range spec.ListingSkills {
			if k := (l*spec.ListingSkills + j) * stride; k < spec.Skills {
				b.Skills[k].Listings = append(b.Skills[k].Listings, listing)
			}
			it := Item{Name: fmt.Sprintf("%s-only-%d", listing, j+1), Kind: catalog.KindSkill, Format: artifact.FormatMarkdown, Listing: listing}
			it.Description = newText(spec.Seed, uint64(1<<40+l*1000+j)).sentences(descLen)
			it.Key = "listings/" + listing + "/skills/" + it.Name + ".md"
			b.Skills = append(b.Skills, it)
		}
	}
	for i := range spec.Subagents {
		it := Item{Name: fmt.Sprintf("subagent-%d", i+1), Kind: catalog.KindSubagent, Format: artifact.FormatMarkdown}
		it.Description = newText(spec.Seed, uint64(1<<41+i)).sentences(descLen)
		it.Authenticated = i%3 == 2
		it.Key = "subagents/" + it.Name + ".md"
		if i%2 == 1 {
			it.Key = "subagents/" + it.Name + "/agent.md"
		}
		b.Subagents = append(b.Subagents, it)
	}
	return b
}

// Config is the bucket's agent-skills.yaml: the authenticated skills and
// sub-agents, and the listings with the top-level skills they include.
func (b *Bucket) Config() string {
	var s strings.Builder
	s.WriteString("version: 1\nskills:\n")
	for _, it := range b.Skills {
		if it.Authenticated {
			fmt.Fprintf(&s, "  - name: %s\n    visibility: authenticated\n", it.Name)
		}
	}
	s.WriteString("subagents:\n")
	for _, it := range b.Subagents {
		if it.Authenticated {
			fmt.Fprintf(&s, "  - name: %s\n    visibility: authenticated\n", it.Name)
		}
	}
	if b.Spec.Listings > 0 {
		s.WriteString("listings:\n")
		for l := range b.Spec.Listings {
			listing := listingName(l)
			fmt.Fprintf(&s, "  %s:\n    skills:\n", listing)
			n := 0
			for _, it := range b.Skills {
				for _, in := range it.Listings {
					if in == listing {
						fmt.Fprintf(&s, "      - name: %s\n", it.Name)
						n++
					}
				}
			}
			if n == 0 {
				// A listing needs at least one entry to be valid YAML here.
				s.WriteString("      []\n")
			}
		}
	}
	return s.String()
}

// listingName is the name of the l-th listing (from 0).
func listingName(l int) string { return fmt.Sprintf("listing-%d", l+1) }
