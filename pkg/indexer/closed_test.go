package indexer

import (
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// rejectionOfKey is the newest rejection the status document records for
// key, or fails.
func (e *env) rejectionOfKey(key string) catalog.Rejection {
	e.t.Helper()
	for _, r := range e.status().Rejections {
		if r.Key == key {
			return r
		}
	}
	e.t.Fatalf("no rejection of %s: %s", key, dump(e.status().Rejections))
	return catalog.Rejection{}
}

// TestRestoreClosesScanBlocked: a stricter threshold withdraws a version
// with a scan_blocked rejection of its key; the threshold removed puts it
// back and closes that rejection, and the same block again is recorded
// anew, not taken for a redelivery.
func TestRestoreClosesScanBlocked(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/pathy.md", warnedDoc)
	strict := []byte("version: 1\nscan:\n  block: medium\n")
	e.drop("agent-skills.yaml", strict)
	if e.skill("pathy").Served() {
		t.Fatal("set-up: pathy still served under block: medium")
	}
	r := e.rejectionOfKey("skills/pathy.md")
	if r.Code != CodeScanBlocked || !r.Closed.IsZero() {
		t.Fatalf("set-up: rejection %s", dump(r))
	}
	e.drop("agent-skills.yaml", []byte("version: 1\n"))
	if !e.skill("pathy").Served() {
		t.Fatal("pathy not back")
	}
	if r := e.rejectionOfKey("skills/pathy.md"); r.Code != CodeScanBlocked || r.Closed.IsZero() {
		t.Errorf("rejection after the restore: %s, want closed", dump(r))
	}
	res := e.drop("agent-skills.yaml", strict)
	if len(res.Rejected) != 1 || res.Rejected[0].Repeated {
		t.Errorf("the block again: %s, want a new rejection", dump(res.Rejected))
	}
	if r := e.rejectionOfKey("skills/pathy.md"); !r.Closed.IsZero() {
		t.Errorf("the new rejection is closed: %s", dump(r))
	}
}

// TestLiftedRevocationRereads: bytes of a revoked version copied back to
// their key are refused as revoked; lifting the revocation reads that key
// again, so its bytes are published (the latest again, as the bucket
// holds them) and the rejection is closed.
func TestLiftedRevocationRereads(t *testing.T) {
	e := newEnv(t)
	v1 := []byte(skilltest.SkillMD("deploy", "1.2.0", "Deploys."))
	v2 := []byte(skilltest.SkillMD("deploy", "1.3.0", "Deploys better."))
	e.drop("skills/deploy.md", v1)
	e.drop("agent-skills.yaml", []byte("version: 1\nrevoke:\n  - name: deploy\n    version: \"1.2.0\"\n    digest: "+
		digest.Of(v1).String()+"\n    reason: compromised\n"))
	e.drop("skills/deploy.md", v2)
	res := e.drop("skills/deploy.md", v1)
	if got := rejectionCodes(res); len(got) != 1 || got[0] != CodeRevoked {
		t.Fatalf("set-up: rejections %v, want revoked", got)
	}
	res = e.drop("agent-skills.yaml", []byte("version: 1\n"))
	if len(res.Published) != 1 || len(res.Restored) != 1 {
		t.Errorf("published %s, restored %s; want 1.2.0 once", dump(res.Published), dump(res.Restored))
	}
	sk := e.skill("deploy")
	if sk.Latest != "1.2.0" || !sk.Served() {
		t.Errorf("latest %s, served %v; want 1.2.0, the bytes the key holds", sk.Latest, sk.Served())
	}
	if r := e.rejectionOfKey("skills/deploy.md"); r.Code != CodeRevoked || r.Closed.IsZero() {
		t.Errorf("rejection: %s, want closed", dump(r))
	}
}

// TestLiftedRevocationRereadsNewName: an upload of a name never published,
// refused as revoked, leaves no entry; lifting the revocation reads its
// key again (the status document's open rejection names it).
func TestLiftedRevocationRereadsNewName(t *testing.T) {
	e := newEnv(t)
	body := []byte(skilltest.SkillMD("evil", "1.0", "Was compromised."))
	e.drop("agent-skills.yaml", []byte("version: 1\nrevoke:\n  - name: evil\n    version: \"1.0\"\n    digest: "+
		digest.Of(body).String()+"\n    reason: compromised\n"))
	if got := rejectionCodes(e.drop("skills/evil.md", body)); len(got) != 1 || got[0] != CodeRevoked {
		t.Fatalf("set-up: rejections %v, want revoked", got)
	}
	if e.skill("evil") != nil {
		t.Fatal("set-up: a revoked upload left an entry")
	}
	e.drop("agent-skills.yaml", []byte("version: 1\n"))
	if sk := e.skill("evil"); sk == nil || !sk.Served() || sk.Latest != "1.0" {
		t.Errorf("evil after the revocation is lifted: %s", dump(sk))
	}
}
