package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestPageOfSkipsWhatKeepDoesNot: paging a list with keep is paging the
// list of its kept items alone, page by page and cursor by cursor, and a
// cursor naming a skipped item answers what that list answers for it.
func TestPageOfSkipsWhatKeepDoesNot(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	for round := range 200 {
		n := rng.IntN(40)
		uris, sizes, kept := make([]string, n), make([]int, n), make([]bool, n)
		var onlyURIs []string
		var onlySizes []int
		for i := range n {
			uris[i] = fmt.Sprintf("skill://s-%03d/SKILL.md", i)
			sizes[i] = rng.IntN(mcpPageBytes / 2)
			kept[i] = rng.IntN(3) > 0
			if kept[i] {
				onlyURIs, onlySizes = append(onlyURIs, uris[i]), append(onlySizes, sizes[i])
			}
		}
		page := func(cursor string) (filtered, alone []string, nextF, nextA string) {
			from, to, count, nf, err := pageOf(n, func(i int) string { return uris[i] }, func(i int) int { return sizes[i] },
				func(i int) bool { return kept[i] }, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for i := from; i < to; i++ {
				if kept[i] {
					filtered = append(filtered, uris[i])
				}
			}
			if count != len(filtered) {
				t.Fatalf("count %d of %d kept items", count, len(filtered))
			}
			from, to, count, na, err := pageOf(len(onlyURIs), func(i int) string { return onlyURIs[i] }, func(i int) int { return onlySizes[i] }, nil, cursor)
			if err != nil || count != to-from {
				t.Fatal(err, count, to-from)
			}
			alone = onlyURIs[from:to]
			return filtered, alone, nf, na
		}
		cursors := []string{""}
		for i := range n {
			cursors = append(cursors, encodeCursor(uris[i])) // kept or not
		}
		for _, c := range cursors {
			f, a, nf, na := page(c)
			if !slices.Equal(f, a) || nf != na {
				t.Fatalf("round %d, cursor %q: kept %v next %q; alone %v next %q", round, c, f, nf, a, na)
			}
		}
	}
}

// TestMCPIndexIsOnePerRevision: every class of caller is answered from the
// one index of the revision, and sees in it only its own skills: a hidden
// skill, its files and its directories are not found, and a listing none
// of whose skills the caller sees is not a directory.
func TestMCPIndexIsOnePerRevision(t *testing.T) {
	st := store.NewMemory()
	bk := newBucket(t, st)
	files := func() map[string][]byte { return map[string][]byte{"references/guide.md": []byte("# Guide\n")} }
	servedSkill(bk, "open", catalog.Public, files())
	servedSkill(bk, "for-a", catalog.Authenticated, files()).Audiences = audience.NewSet("partner-a")
	servedSkill(bk, "for-b", catalog.Authenticated, files()).Audiences = audience.NewSet("partner-b")
	bk.listing("partners")
	e := bk.skill("b-only", "partners", catalog.Authenticated, artifact.FormatMarkdown, skillMD("b-only"))
	e.Audiences = audience.NewSet("partner-b")
	v := e.LatestVersion()
	v.Frontmatter = []byte(`{"name":"b-only","description":"b-only does a thing"}`)
	v.Files = []catalog.File{{Path: artifact.SkillFile, Digest: v.Digest, Size: v.Size, MediaType: "text/markdown"}}
	bk.publish()
	h := newHarness(t, st)
	snap, err := h.srv.catalog.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	view, err := snap.View(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a := audience.Caller{Authenticated: true, Audiences: audience.NewSet("partner-a")}
	b := audience.Caller{Authenticated: true, Audiences: audience.NewSet("partner-b")}
	idx := &h.srv.mcp.indexes
	va, vb, vAnon := idx.get(view, a), idx.get(view, b), idx.get(view, audience.Anonymous)
	if va.mcpIndex != vb.mcpIndex || va.mcpIndex != vAnon.mcpIndex {
		t.Fatal("the classes were answered from indexes of their own")
	}
	for _, tc := range []struct {
		v         mcpView
		sees      []string
		listing   bool
		forbidden []string
	}{
		{vAnon, []string{"skill://open/SKILL.md"}, false, []string{"skill://for-a/SKILL.md", "skill://for-b/SKILL.md"}},
		{va, []string{"skill://for-a/SKILL.md", "skill://open/SKILL.md"}, false, []string{"skill://for-b/SKILL.md"}},
		{vb, []string{"skill://for-b/SKILL.md", "skill://open/SKILL.md", "skill://partners.listing/b-only/SKILL.md"}, true, []string{"skill://for-a/SKILL.md"}},
	} {
		skills, next, err := mcpListed(tc.v, "")
		var got []string
		for _, sk := range skills {
			got = append(got, sk.uri)
		}
		if err != nil || next != "" || !slices.Equal(got, tc.sees) {
			t.Errorf("skills/list: %v %q %v, want %v", err, next, got, tc.sees)
		}
		for _, uri := range tc.forbidden {
			dir := uri[:len(uri)-len("/SKILL.md")]
			_, isDir := tc.v.dir(dir)
			_, isSubdir := tc.v.dir(dir + "/references")
			if tc.v.skill(uri) != nil || tc.v.file(uri) != nil || tc.v.file(dir+"/references/guide.md") != nil || isDir || isSubdir {
				t.Errorf("%s: a hidden skill is found", uri)
			}
		}
		if children, ok := tc.v.dir("skill://partners.listing"); ok != tc.listing || ok && len(children) != 1 {
			t.Errorf("the listing's directory: %v %d", ok, len(children))
		}
		from, to, count, _, err := tc.v.filePage("")
		var fs []*mcpFile
		for _, f := range tc.v.files[from:to] {
			if tc.v.seen(f.skill) {
				fs = append(fs, f)
			}
		}
		if count != len(fs) {
			t.Errorf("resources/list: count %d of %d files", count, len(fs))
		}
		for _, f := range fs {
			if !slices.Contains(tc.sees, f.skill.uri) {
				t.Errorf("resources/list names %s", f.resource.URI)
			}
		}
		if err != nil || len(fs) < len(tc.sees) {
			t.Errorf("resources/list: %v, %d files", err, len(fs))
		}
	}
}

// mcpListed is the page of skills/list after cursor that v answers.
func mcpListed(v mcpView, cursor string) ([]*mcpSkill, string, error) {
	from, to, _, next, err := v.skillPage(cursor)
	var out []*mcpSkill
	for _, sk := range v.skills[from:to] {
		if v.seen(sk) {
			out = append(out, sk)
		}
	}
	return out, next, err
}
