package catalog

import (
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

func entry(name, listing string, vis Visibility, withdrawn bool) *Entry {
	return &Entry{
		Name: name, Kind: KindSkill, Listing: listing, Visibility: vis, Withdrawn: withdrawn,
		Path:   "/" + ID(listing, name) + ".md",
		Latest: "1",
		Versions: []Version{{Label: "1", Digest: digest.Of([]byte(name)), Type: artifact.TypeSkillMD,
			Format: artifact.FormatMarkdown, PublishedAt: time.Unix(1, 0), Description: name + " d"}},
	}
}

func TestViewVisibility(t *testing.T) {
	c := New()
	for _, e := range []*Entry{
		entry("pub", "", Public, false),
		entry("secret", "", Authenticated, false),
		entry("gone", "", Public, true),
		entry("only-here", "partner", Public, false),
		entry("hidden-here", "hidden", Authenticated, false),
	} {
		c.Skills[e.ID()] = e
	}
	c.Listings["partner"] = &Listing{Name: "partner", Skills: []string{"secret", "pub", "gone"}}
	c.Listings["hidden"] = &Listing{Name: "hidden"}
	c.Subagents["rev"] = &Entry{Name: "rev", Kind: KindSubagent, Visibility: Authenticated, Latest: "1", Versions: []Version{{Label: "1"}}}
	v := Compile(c, `"etag"`)

	names := func(es []*Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(v.Skills(audience.Anonymous)); len(got) != 1 || got[0] != "pub" {
		t.Errorf("anonymous skills = %v, want [pub]", got)
	}
	if got := names(v.Skills(audience.Unrestricted)); len(got) != 2 || got[0] != "pub" || got[1] != "secret" {
		t.Errorf("authenticated skills = %v, want [pub secret]", got)
	}
	if v.Skill("secret", audience.Anonymous) != nil || v.Skill("secret", audience.Unrestricted) == nil || v.Skill("gone", audience.Unrestricted) != nil {
		t.Error("Skill lookup ignores visibility or withdrawal")
	}
	if v.ByPath("/secret.md", audience.Anonymous) != nil || v.ByPath("/secret.md", audience.Unrestricted) == nil || v.ByPath("/gone.md", audience.Unrestricted) != nil {
		t.Error("ByPath ignores visibility or withdrawal")
	}
	if v.ByPath("/partner/only-here.md", audience.Anonymous) == nil {
		t.Error("listing-only skill not found by path")
	}
	if v.Skill("only-here", audience.Unrestricted) != nil {
		t.Error("listing-only skill appears at the top level")
	}
	members, ok := v.Listing("partner", audience.Anonymous)
	if got := names(members); !ok || len(got) != 2 || got[0] != "only-here" || got[1] != "pub" {
		t.Errorf("anonymous partner listing = %v %v, want [only-here pub]", got, ok)
	}
	if members, _ := v.Listing("partner", audience.Unrestricted); len(members) != 3 {
		t.Errorf("authenticated partner listing has %d members, want 3", len(members))
	}
	if _, ok := v.Listing("hidden", audience.Anonymous); ok {
		t.Error("a listing with only hidden skills is visible to anonymous callers")
	}
	if _, ok := v.Listing("hidden", audience.Unrestricted); !ok {
		t.Error("authenticated caller cannot see the hidden listing")
	}
	if _, ok := v.Listing("nope", audience.Unrestricted); ok {
		t.Error("unknown listing reported as known")
	}
	if got := v.ListingNames(); len(got) != 2 || got[0] != "hidden" || got[1] != "partner" {
		t.Errorf("listing names %v, want [hidden partner] (callers filter with Listing)", got)
	}
	if v.Subagent("rev", audience.Anonymous) != nil || len(v.Subagents(audience.Anonymous)) != 0 || v.Subagent("rev", audience.Unrestricted) == nil {
		t.Error("sub-agent visibility not applied")
	}
	if !v.AnyVisible(audience.Anonymous) {
		t.Error("AnyVisible(false) = false with a public skill")
	}
	empty := New()
	empty.Skills["s"] = entry("s", "", Authenticated, false)
	if ev := Compile(empty, ""); ev.AnyVisible(audience.Anonymous) || !ev.AnyVisible(audience.Unrestricted) {
		t.Error("AnyVisible disagrees with visibility")
	}
}
