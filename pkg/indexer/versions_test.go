package indexer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func labels(en *catalog.Entry) []string {
	var out []string
	for _, v := range en.Versions {
		out = append(out, v.Label)
	}
	return out
}

func testVersions(t *testing.T, mk envMaker) {
	type step struct {
		body        []byte
		wantCodes   []string
		wantLatest  string
		wantLabels  []string
		wantRevDiff int64 // catalog revisions the step writes
	}
	v1 := skillDoc("x", "1.0", "First.")
	tests := []struct {
		name  string
		steps []step
	}{
		{"a new label is appended and becomes latest", []step{
			{v1, nil, "1.0", []string{"1.0"}, 1},
			{skillDoc("x", "1.1", "Second."), nil, "1.1", []string{"1.0", "1.1"}, 1},
		}},
		{"identical bytes are a no-op without a write", []step{
			{v1, nil, "1.0", []string{"1.0"}, 1},
			{v1, nil, "1.0", []string{"1.0"}, 0},
		}},
		{"the same label with other bytes is version_exists", []step{
			{v1, nil, "1.0", []string{"1.0"}, 1},
			{skillDoc("x", "1.0", "Changed."), []string{"version_exists"}, "1.0", []string{"1.0"}, 0},
		}},
		{"a rejected upload leaves the previous version in service", []step{
			{v1, nil, "1.0", []string{"1.0"}, 1},
			{[]byte("no frontmatter"), []string{"invalid_frontmatter"}, "1.0", []string{"1.0"}, 0},
		}},
		{"the reserved label latest is refused", []step{
			{skillDoc("x", "latest", "Reserved."), []string{"reserved_version"}, "", nil, 0},
		}},
		{"without a label the content names the version", []step{
			{skillDoc("x", "", "Unlabelled."), nil, "sha256-", nil, 1},
		}},
		{"an older version uploaded again is published again: latest, and last by publish time", []step{
			{v1, nil, "1.0", []string{"1.0"}, 1},
			{skillDoc("x", "2.0", "Second."), nil, "2.0", []string{"1.0", "2.0"}, 1},
			{v1, nil, "1.0", []string{"2.0", "1.0"}, 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t)
			for i, s := range tt.steps {
				rev := e.catalog().Revision
				res := e.drop("skills/x.md", s.body)
				if got := rejectionCodes(res); !slices.Equal(got, s.wantCodes) {
					t.Fatalf("step %d: codes %v, want %v", i, got, s.wantCodes)
				}
				c := e.catalog()
				if d := c.Revision - rev; d != s.wantRevDiff {
					t.Fatalf("step %d: %d catalog writes, want %d", i, d, s.wantRevDiff)
				}
				en := c.Skills["x"]
				if s.wantLatest == "" {
					if en != nil {
						t.Fatalf("step %d: published %s", i, dump(en))
					}
					continue
				}
				if en == nil || !strings.HasPrefix(en.Latest, s.wantLatest) || !en.Live() {
					t.Fatalf("step %d: entry %s, want latest %s", i, dump(en), s.wantLatest)
				}
				if s.wantLabels != nil && !slices.Equal(labels(en), s.wantLabels) {
					t.Fatalf("step %d: labels %v, want %v", i, labels(en), s.wantLabels)
				}
				// The history is in publish order and ends with the latest.
				if last := en.Versions[len(en.Versions)-1]; last.Label != en.Latest {
					t.Fatalf("step %d: latest %s is not the last published (%v)", i, en.Latest, labels(en))
				}
				for j := 1; j < len(en.Versions); j++ {
					if en.Versions[j].PublishedAt.Before(en.Versions[j-1].PublishedAt) {
						t.Fatalf("step %d: versions out of publish order: %s", i, dump(en))
					}
				}
			}
		})
	}
}

func testRejectionIsRecordedAuditedAndCounted(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x.md", skillDoc("y", "1", "Mismatch."))
	st := e.status()
	if len(st.Rejections) != 1 {
		t.Fatalf("status %s", dump(st))
	}
	r := st.Rejections[0]
	if r.Key != "skills/x.md" || r.Code != "name_mismatch" || r.Message == "" || r.Time.IsZero() || r.Digest.IsZero() {
		t.Fatalf("rejection %s", dump(r))
	}
	a := e.audits()
	if len(a) != 1 || a[0]["key"] != "skills/x.md" || a[0]["code"] != "name_mismatch" || a[0]["message"] == "" {
		t.Fatalf("audit events %v", a)
	}
	want := []obs.Sample{{Name: obs.UploadRejected, Dimension: obs.DimensionReason, Value: "name_mismatch", N: 1}}
	if got := e.metrics.Samples(); !slices.Equal(got, want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}

func testRedeliveredRejectionIsRecordedOnce(t *testing.T, mk envMaker) {
	e := mk(t)
	e.put("skills/x.md", skillDoc("y", "1", "Mismatch."))
	first := e.reconcile("skills/x.md")
	again := e.reconcile("skills/x.md")
	if len(first.Rejected) != 1 || first.Rejected[0].Repeated {
		t.Fatalf("first %s", dump(first))
	}
	if len(again.Rejected) != 1 || !again.Rejected[0].Repeated {
		t.Fatalf("redelivery %s, want the rejection marked repeated", dump(again))
	}
	if n := len(e.status().Rejections); n != 1 {
		t.Fatalf("%d rejections recorded, want 1", n)
	}
	if n := e.metrics.Total(obs.UploadRejected); n != 1 || len(e.audits()) != 1 {
		t.Fatalf("%d metrics and %d audit events, want 1 each", n, len(e.audits()))
	}
	// Other bad bytes under the same key are news.
	e.drop("skills/x.md", skillDoc("z", "1", "Other mismatch."))
	if n := len(e.status().Rejections); n != 2 {
		t.Fatalf("%d rejections recorded after other bytes, want 2", n)
	}
	// So are the first bad bytes again once something was published in between.
	e.drop("skills/x.md", skillDoc("x", "1", "Good."))
	e.drop("skills/x.md", skillDoc("y", "1", "Mismatch."))
	if n := len(e.status().Rejections); n != 3 {
		t.Fatalf("%d rejections recorded, want 3", n)
	}
}

func testNameConflictAndTakeover(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x.md", skillDoc("x", "1", "Flat."))
	res := e.drop("skills/x.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "2", "Zipped."))}))
	if got := rejectionCodes(res); !slices.Equal(got, []string{"name_conflict"}) {
		t.Fatalf("codes %v, want name_conflict", got)
	}
	en := e.live(catalog.KindSkill, "x")
	if en.Source != "skills/x.md" || !slices.Equal(en.Contenders, []string{"skills/x.zip"}) {
		t.Fatalf("entry %s: the first must stay and the second be a contender", dump(en))
	}
	// Deleting the first hands the name to the contender in one invocation.
	res = e.remove("skills/x.md")
	if len(res.Withdrawn) != 1 || len(res.Published) != 1 || res.Published[0].Source != "skills/x.zip" {
		t.Fatalf("result %s, want x.md withdrawn and x.zip published", dump(res))
	}
	en = e.live(catalog.KindSkill, "x")
	if en.Source != "skills/x.zip" || en.Latest != "2" || len(en.Contenders) != 0 || en.Path != "/skills/x.zip" {
		t.Fatalf("entry %s after takeover", dump(en))
	}
	consistent(t, e.st)
}

func testReplacingAKeyInOneBatchIsATakeover(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x.md", skillDoc("x", "1", "Flat."))
	e.del("skills/x.md")
	e.put("skills/x/SKILL.md", skillDoc("x", "2", "Folder."))
	res := e.reconcile("skills/x/SKILL.md", "skills/x.md")
	if len(res.Rejected) != 0 {
		t.Fatalf("a replacement was rejected: %s", dump(res))
	}
	if en := e.live(catalog.KindSkill, "x"); en.Source != "skills/x/SKILL.md" || en.Latest != "2" {
		t.Fatalf("entry %s", dump(en))
	}
}

func testDeleteWithdrawsAndReuploadRevives(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x.md", skillDoc("x", "1", "One."))
	e.drop("skills/x.md", skillDoc("x", "2", "Two."))
	res := e.remove("skills/x.md")
	if len(res.Withdrawn) != 1 || res.Withdrawn[0].Name != "x" {
		t.Fatalf("result %s", dump(res))
	}
	en := e.skill("x")
	if !en.Withdrawn || en.WithdrawnAt == nil || en.Live() || !slices.Equal(labels(en), []string{"1", "2"}) {
		t.Fatalf("withdrawn entry %s must keep its history", dump(en))
	}
	if v := catalog.Compile(e.catalog(), "").Skill("x", audience.Unrestricted); v != nil {
		t.Fatal("a withdrawn skill is still in the compiled view")
	}
	consistent(t, e.st) // blobs are kept
	// Versions stay immutable across the withdrawal.
	if got := rejectionCodes(e.drop("skills/x.md", skillDoc("x", "2", "Two, changed."))); !slices.Equal(got, []string{"version_exists"}) {
		t.Fatalf("codes %v, want version_exists", got)
	}
	if e.skill("x").Live() {
		t.Fatal("a rejected upload revived the entry")
	}
	e.drop("skills/x.md", skillDoc("x", "3", "Three."))
	en = e.live(catalog.KindSkill, "x")
	if !slices.Equal(labels(en), []string{"1", "2", "3"}) || en.WithdrawnAt != nil {
		t.Fatalf("revived entry %s", dump(en))
	}
}

func testConcurrentUploadsOfDistinctSkillsAllLand(t *testing.T, mk envMaker) {
	e := mk(t)
	const n = 50
	errs := make(chan error, n)
	for i := range n {
		go func() {
			key := "skills/s" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".md"
			name := strings.TrimSuffix(strings.TrimPrefix(key, "skills/"), ".md")
			if _, err := e.st.Put(context.Background(), key, skillDoc(name, "1", "Concurrent."), store.PutOptions{}); err != nil {
				errs <- err
				return
			}
			_, err := e.ix.Reconcile(context.Background(), key)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c := e.catalog()
	if len(c.Skills) != n {
		t.Fatalf("%d skills published, want %d: an update was lost", len(c.Skills), n)
	}
	if c.Revision != n {
		t.Fatalf("revision %d, want %d: one write per upload", c.Revision, n)
	}
}
