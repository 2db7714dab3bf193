package indexer

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

func TestOrderClaims(t *testing.T) {
	x := target{Kind: catalog.KindSkill, Name: "x"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := catalog.New()
	c.Skills["x"] = &catalog.Entry{Name: "x", Kind: catalog.KindSkill, Source: "skills/x.md",
		Versions: []catalog.Version{{Label: "1"}}, Latest: "1", Contenders: []string{"skills/x.tgz", "skills/x/SKILL.md"}}
	withdrawn := catalog.New()
	withdrawn.Skills["x"] = &catalog.Entry{Name: "x", Kind: catalog.KindSkill, Source: "skills/gone.md", Withdrawn: true}
	tests := []struct {
		name   string
		cat    *catalog.Catalog
		claims []*claim
		want   []string
	}{
		{"the owner first, then the config, then contenders in claim order, then the rest by write time and key", c, []*claim{
			{target: x, source: "skills/x.zip", modified: t0},
			{target: x, source: "skills/x/SKILL.md", modified: t0},
			{target: x, source: catalog.ConfigSource},
			{target: x, source: "skills/x.tgz", modified: t0.Add(time.Hour)},
			{target: x, source: "skills/x.md", modified: t0.Add(2 * time.Hour)},
			{target: x, source: "skills/x.tar.gz", modified: t0.Add(-time.Second)},
		}, []string{"skills/x.md", catalog.ConfigSource, "skills/x.tgz", "skills/x/SKILL.md", "skills/x.tar.gz", "skills/x.zip"}},
		{"new claimants: the older object wins, whatever its key", withdrawn, []*claim{
			{target: x, source: "skills/a.md", modified: t0.Add(time.Second)},
			{target: x, source: "skills/z.md", modified: t0},
		}, []string{"skills/z.md", "skills/a.md"}},
		{"written in the same second: by key", withdrawn, []*claim{
			{target: x, source: "skills/x.zip", modified: t0},
			{target: x, source: "skills/x.md", modified: t0},
		}, []string{"skills/x.md", "skills/x.zip"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, cl := range orderClaims(tt.cat, tt.claims) {
				got = append(got, cl.source)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestApplyRefusesAPlanForAnotherConfig(t *testing.T) {
	cfg, err := skillsconfig.Parse([]byte("version: 1\nskills:\n  - name: x\n    visibility: authenticated\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := catalog.New()
	c.Config = &catalog.ConfigState{Digest: cfg.Digest, YAML: "version: 1\nskills:\n  - name: x\n    visibility: authenticated\n"}
	// Prepared when no config was in force; the catalog has one now.
	if _, err := apply(c, &plan{candidates: map[target]bool{}}); !errors.Is(err, errReprepare) {
		t.Fatalf("err = %v, want errReprepare", err)
	}
	if _, err := apply(c, &plan{basis: basis{config: cfg.Digest}, cfg: cfg, candidates: map[target]bool{}}); !errors.Is(err, catalog.ErrNoChange) {
		t.Fatalf("err = %v, want ErrNoChange for an empty plan on its own basis", err)
	}
}

func TestConflicts(t *testing.T) {
	live := func(source, path string) *catalog.Entry {
		return &catalog.Entry{Kind: catalog.KindSkill, Source: source, Path: path, Versions: []catalog.Version{{Label: "1"}}, Latest: "1"}
	}
	c := catalog.New()
	c.Skills["x"] = live("skills/x.md", "/skills/x.md")
	c.Skills["x"].Name = "x"
	c.Skills["y"] = live("skills/y.md", "/skills/y.md")
	c.Skills["y"].Name = "y"
	c.Skills["l/z"] = live("listings/l/skills/z.md", "/.well-known/agent-skills/l/skills/z.md")
	c.Skills["l/z"].Name, c.Skills["l/z"].Listing = "z", "l"
	tests := []struct {
		name, yaml string
		conflict   bool
	}{
		{"overrides only", "version: 1\nskills:\n  - name: x\n    visibility: authenticated\n", false},
		{"moving x onto y's path", "version: 1\nskills:\n  - name: x\n    url: /skills/y.md\n", true},
		{"swapping x and y's paths", "version: 1\nskills:\n  - name: x\n    url: /skills/y.md\n  - name: y\n    url: /skills/x.md\n", false},
		{"defining a dropped name", "version: 1\nskills:\n  - name: y\n    body: |\n      ---\n      name: y\n      description: d\n      ---\n", true},
		{"defining a new name at a free path", "version: 1\nskills:\n  - name: n\n    body: |\n      ---\n      name: n\n      description: d\n      ---\n", false},
		{"defining a new name at a taken path", "version: 1\nskills:\n  - name: n\n    url: /skills/x.md\n    body: |\n      ---\n      name: n\n      description: d\n      ---\n", true},
		{"referencing a name a listing publishes itself", "version: 1\nlistings:\n  l:\n    skills:\n      - name: z\n", true},
		{"referencing a top-level name", "version: 1\nlistings:\n  l:\n    skills:\n      - name: x\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := skillsconfig.Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if msg := conflicts(c, cfg); (msg != "") != tt.conflict {
				t.Fatalf("conflicts = %q, want a conflict: %v", msg, tt.conflict)
			}
		})
	}
}
