package catalogtest

import (
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// Catalog is the catalog the bucket's sources describe, built directly
// through the catalog package's types rather than by the indexer: one
// version per entry (Version, with the digest of Body's bytes), served at
// its key, with the visibility and listings of Config. It is meant for
// renderer and search benchmarks, which need a catalog of a given size,
// not the indexer's history.
func (b *Bucket) Catalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c := catalog.New()
	c.Revision = 1
	c.UpdatedAt = Epoch
	n := 0
	entry := func(it Item) *catalog.Entry {
		body := Body(t, it)
		typ := artifact.TypeSkillMD
		switch {
		case it.Kind == catalog.KindSubagent:
			typ = artifact.TypeAgentMD
		case it.Format != artifact.FormatMarkdown:
			typ = artifact.TypeArchive
		}
		vis := catalog.Public
		if it.Authenticated {
			vis = catalog.Authenticated
		}
		e := &catalog.Entry{
			Name: it.Name, Kind: it.Kind, Listing: it.Listing, Source: it.Key, Visibility: vis,
			Listings: it.Listings, Latest: Version,
		}
		e.SetVersions([]catalog.Version{{
			Label: Version, Digest: digest.Of(body), Type: typ, Format: it.Format, Size: int64(len(body)),
			SourceKey: it.Key, PublishedAt: Epoch.Add(time.Duration(n) * time.Second), Description: it.Description,
		}})
		n++
		return e
	}
	for _, it := range b.Skills {
		e := entry(it)
		if it.Listing == "" {
			e.Path = "/" + it.Key
		} else {
			e.Path = routes.ListingPrefix(it.Listing) + "skills/" + it.Name + ".md"
		}
		c.Skills[e.ID()] = e
	}
	for _, it := range b.Subagents {
		c.Subagents[it.Name] = entry(it)
	}
	for l := range b.Spec.Listings {
		name := listingName(l)
		ls := &catalog.Listing{Name: name}
		for _, it := range b.Skills {
			for _, in := range it.Listings {
				if in == name {
					ls.Skills = append(ls.Skills, it.Name)
				}
			}
		}
		c.Listings[name] = ls
	}
	return c
}

// View is Catalog compiled for the request path.
func (b *Bucket) View(t testing.TB) *catalog.View {
	t.Helper()
	return catalog.Compile(b.Catalog(t), `"catalogtest"`)
}
