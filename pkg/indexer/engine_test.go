package indexer

import (
	"context"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// newerEngine is a rule pack newer than this build's.
const newerEngine = scan.EnginePrefix + "9999.1.0"

// judgedByNewerPack records pathy 1.0 (warnedDoc, a medium finding under
// this build's pack) as a newer pack judged it: its finding high, so
// blocked and out of service, and the catalog current under that pack.
func judgedByNewerPack(t *testing.T, e *env) {
	t.Helper()
	e.drop("skills/pathy.md", []byte(skilltest.SkillMD("pathy", "0.9", "Sets a path.")))
	e.drop("skills/pathy.md", warnedDoc)
	if _, err := catalog.Update(context.Background(), e.st, func(c *catalog.Catalog) error {
		sk := c.Skills["pathy"]
		if err := sk.LoadHistory(); err != nil {
			return err
		}
		v := sk.Version("1.0")
		fs := append([]scan.Finding(nil), v.Scan.Findings...)
		for i := range fs {
			fs[i].Severity = scan.SeverityHigh
		}
		v.Scan = &scan.Result{Verdict: scan.Block, Engine: newerEngine, Findings: fs}
		if !c.SetGone(sk, v, &catalog.Gone{Code: catalog.GoneScanBlocked, Reason: "blocked by a newer pack", At: v.PublishedAt}) {
			t.Fatal("1.0 not taken out of service")
		}
		c.ScanEngine = newerEngine
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestOlderPackKeepsNewerVerdict: a re-index by a build whose rule pack is
// older than the one that judged a version keeps that judgement: the
// version a newer pack blocked stays out of service (its bytes, still at
// their key, are refused as scan_blocked by the recorded findings), nothing
// is restored, and the catalog then records the older engine once, so
// that a later upgrade rescans what this build publishes, and a second
// re-index writes nothing.
func TestOlderPackKeepsNewerVerdict(t *testing.T) {
	e := newEnv(t)
	judgedByNewerPack(t, e)
	res := e.reindex()
	if n := len(e.events(obs.EventRestored)); n != 0 || len(res.Published) != 0 {
		t.Fatalf("%d version_restored events, published %s", n, dump(res.Published))
	}
	if got := rejectionCodes(res); len(got) != 1 || got[0] != CodeScanBlocked {
		t.Errorf("rejections %v, want scan_blocked", got)
	}
	c := e.catalog()
	sk := c.Skills["pathy"]
	if sk.Latest != "0.9" || len(c.Gone) != 1 {
		t.Fatalf("latest %s, gone %s", sk.Latest, dump(c.Gone))
	}
	if v := sk.Version("1.0"); v.Scan == nil || v.Scan.Engine != newerEngine || v.Scan.Verdict != scan.Block {
		t.Errorf("1.0 scan %s, want the newer pack's block", dump(v.Scan))
	}
	if c.ScanEngine != scan.Engine() {
		t.Errorf("catalog engine %q, want this build's %q", c.ScanEngine, scan.Engine())
	}
	rev := c.Revision
	if res, err := e.ix.Rescan(context.Background()); err != nil || len(res.Gone)+len(res.Published) != 0 || e.catalog().Revision != rev {
		t.Errorf("a second rescan: %v, %s, revision %d → %d", err, dump(res), rev, e.catalog().Revision)
	}
}

// TestOlderPackRescanSkipsNewer: the rescan of an older build scans only
// versions an older (or unknown) engine scanned, not those a newer pack
// judged.
func TestOlderPackRescanSkipsNewer(t *testing.T) {
	e := newEnv(t)
	judgedByNewerPack(t, e)
	res, err := e.ix.Rescan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Published) != 0 || len(e.events(obs.EventRestored)) != 0 {
		t.Fatalf("rescan restored %s", dump(res.Published))
	}
	c := e.catalog()
	if v := c.Skills["pathy"].Version("1.0"); v.Scan.Engine != newerEngine || v.Gone == nil {
		t.Errorf("1.0: %s", dump(v))
	}
	if c.ScanEngine != scan.Engine() {
		t.Errorf("catalog engine %q, want %q", c.ScanEngine, scan.Engine())
	}
}

// TestOlderBuildLowersScanEngine: a version an older build publishes onto
// a catalog a newer pack made current lowers the engine the catalog
// records, so the newer build's next rescan reads it.
func TestOlderBuildLowersScanEngine(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/fetcher.md", []byte(skilltest.SkillMD("fetcher", "0.9", "Fetches.")))
	if _, err := catalog.Update(context.Background(), e.st, func(c *catalog.Catalog) error {
		c.ScanEngine = newerEngine
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.drop("skills/fetcher.md", []byte(skilltest.SkillMD("fetcher", "1.0", "Fetches more.")))
	if c := e.catalog(); c.ScanEngine != scan.Engine() {
		t.Errorf("catalog engine %q, want %q", c.ScanEngine, scan.Engine())
	}
}

// TestOlderPackDoesNotBlockWhatANewerPassed: bytes this build's pack
// blocks, which a newer pack judged clean and published, stay in service
// when their key is read again: no rejection, nothing gone.
func TestOlderPackDoesNotBlockWhatANewerPassed(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/fetcher.md", []byte(skilltest.SkillMD("fetcher", "0.9", "Fetches.")))
	e.judgedBefore(t, blockedDoc, scan.Clean, newerEngine, nil)
	e.put("skills/fetcher.md", blockedDoc)
	res := e.reindex()
	if len(res.Rejected) != 0 || len(res.Gone) != 0 {
		t.Errorf("rejected %s, gone %s", dump(res.Rejected), dump(res.Gone))
	}
	if sk := e.skill("fetcher"); sk.Latest != "1.0" || !sk.Served() {
		t.Errorf("latest %s, served %v", sk.Latest, sk.Served())
	}
}
