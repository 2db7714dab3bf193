package indexer

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// testBucketContract drops one key of every row of DESIGN.md's bucket
// contract and checks what it becomes.
func testBucketContract(t *testing.T, mk envMaker) {
	skillZip := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "1.0", "Zipped.")), "run.sh": "echo"})
	skillTgz := skilltest.TarGz(t, map[string]string{"SKILL.md": string(skillDoc("x", "1.0", "Tarred.")), "docs/a.md": "a"})
	tests := []struct {
		name    string
		key     string
		body    []byte
		kind    catalog.Kind
		id      string
		typ     artifact.Type
		format  artifact.Format
		path    string
		listing string
	}{
		{"a SKILL.md file", "skills/x.md", skillDoc("x", "1.0", "Flat."), catalog.KindSkill, "x", artifact.TypeSkillMD, artifact.FormatMarkdown, "/skills/x.md", ""},
		{"a SKILL.md in a folder", "skills/x/SKILL.md", skillDoc("x", "1.0", "Folder."), catalog.KindSkill, "x", artifact.TypeSkillMD, artifact.FormatMarkdown, "/skills/x/SKILL.md", ""},
		{"a zip archive", "skills/x.zip", skillZip, catalog.KindSkill, "x", artifact.TypeArchive, artifact.FormatZip, "/skills/x.zip", ""},
		{"a .tar.gz archive", "skills/x.tar.gz", skillTgz, catalog.KindSkill, "x", artifact.TypeArchive, artifact.FormatTarGz, "/skills/x.tar.gz", ""},
		{"a .tgz archive", "skills/x.tgz", skillTgz, catalog.KindSkill, "x", artifact.TypeArchive, artifact.FormatTarGz, "/skills/x.tgz", ""},
		{"a listing's SKILL.md", "listings/partner-a/skills/x.md", skillDoc("x", "1.0", "Listed."), catalog.KindSkill, "partner-a/x", artifact.TypeSkillMD, artifact.FormatMarkdown, "/.well-known/agent-skills/partner-a/skills/x.md", "partner-a"},
		{"a listing's folder", "listings/partner-a/skills/x/SKILL.md", skillDoc("x", "1.0", "Listed."), catalog.KindSkill, "partner-a/x", artifact.TypeSkillMD, artifact.FormatMarkdown, "/.well-known/agent-skills/partner-a/skills/x/SKILL.md", "partner-a"},
		{"a listing's archive", "listings/partner-a/skills/x.zip", skillZip, catalog.KindSkill, "partner-a/x", artifact.TypeArchive, artifact.FormatZip, "/.well-known/agent-skills/partner-a/skills/x.zip", "partner-a"},
		{"a sub-agent file", "subagents/x.md", agentDoc("x", "2"), catalog.KindSubagent, "x", artifact.TypeAgentMD, artifact.FormatMarkdown, "", ""},
		{"a sub-agent folder", "subagents/x/agent.md", agentDoc("x", "2"), catalog.KindSubagent, "x", artifact.TypeAgentMD, artifact.FormatMarkdown, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t)
			res := e.drop(tt.key, tt.body)
			if len(res.Published) != 1 || len(res.Rejected) != 0 {
				t.Fatalf("result %s, want one published", dump(res))
			}
			en := e.live(tt.kind, tt.id)
			v := en.LatestVersion()
			if en.Source != tt.key || en.Path != tt.path || en.Listing != tt.listing || v.Type != tt.typ || v.Format != tt.format {
				t.Fatalf("entry %s; want source %s path %q listing %q type %s format %s", dump(en), tt.key, tt.path, tt.listing, tt.typ, tt.format)
			}
			if v.SourceKey != tt.key || v.Size != int64(len(tt.body)) || !v.Digest.Verify(tt.body) {
				t.Fatalf("version %s does not describe the %d dropped bytes", dump(v), len(tt.body))
			}
			blob, _, err := store.ReadAll(context.Background(), e.st, catalog.BlobKey(v.Digest), 0)
			if err != nil || !bytes.Equal(blob, tt.body) {
				t.Fatalf("blob %s: %v (equal %v)", catalog.BlobKey(v.Digest), err, bytes.Equal(blob, tt.body))
			}
			if tt.listing != "" {
				if l := e.catalog().Listings[tt.listing]; l == nil {
					t.Fatalf("listing %s not created by its drop", tt.listing)
				}
			}
		})
	}
}

func testKeysOutsideTheContract(t *testing.T, mk envMaker) {
	tests := []struct {
		name string
		key  string
	}{
		{"the indexer's own blobs", "blobs/sha256/" + strings.Repeat("a", 64)},
		{"the indexer's own catalog", "catalog/other.json"},
		{"a key no row names", "notes/todo.txt"},
		{"a files/ key no config names", "files/unused.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t)
			res := e.drop(tt.key, skillDoc("x", "", "Not a skill here."))
			if !slices.Contains(res.Ignored, tt.key) || len(res.Published)+len(res.Rejected) != 0 {
				t.Fatalf("result %s, want %s ignored", dump(res), tt.key)
			}
			if n := len(e.catalog().Skills); n != 0 {
				t.Fatalf("%d skills published from %s", n, tt.key)
			}
		})
	}
}

// testDropsInNoFormOfTheContractAreReported: a key under skills/,
// listings/ or subagents/ in none of the contract's forms never disappears
// silently. A file is refused with the forms it could have had; a file in
// a folder that is no skill or sub-agent folder is warned about. Both last
// only while the key exists.
func testDropsInNoFormOfTheContractAreReported(t *testing.T, mk envMaker) {
	tests := []struct {
		key     string
		code    string // a rejection with this code…
		warning string // …or a status warning holding this
	}{
		{"skills/foo.MD", artifact.CodeUnsupportedFile, ""},
		{"skills/bar.tar", artifact.CodeUnsupportedFile, ""},
		{"skills/noextension", artifact.CodeUnsupportedFile, ""},
		{"listings/partner-a/skills/x.rar", artifact.CodeUnsupportedFile, ""},
		{"listings/partner-a/x.md", artifact.CodeUnsupportedFile, ""},
		{"subagents/ag.txt", artifact.CodeUnsupportedFile, ""},
		{"subagents/ag/notes.md", "", "subagents/ag/agent.md"},
		{"skills/Not A Folder/notes.txt", "", "not in a skill folder"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			e := mk(t)
			e.put(tt.key, skillDoc("x", "1", "Somewhere odd."))
			res := e.reindex()
			st := e.status()
			if tt.code != "" {
				if !slices.Equal(rejectionCodes(res), []string{tt.code}) || res.Rejected[0].Key != tt.key {
					t.Fatalf("result %s, want %s rejected as %s", dump(res), tt.key, tt.code)
				}
				msg := res.Rejected[0].Message
				if !strings.Contains(msg, "<name>.md") || !strings.Contains(msg, "want") {
					t.Fatalf("message %q does not name the accepted forms", msg)
				}
				if len(st.Rejections) != 1 || st.Rejections[0].Key != tt.key || len(e.audits()) != 1 || e.metrics.Total(obs.UploadRejected) != 1 {
					t.Fatalf("status %s, %d audits, %d metrics: want it recorded, audited and counted once", dump(st), len(e.audits()), e.metrics.Total(obs.UploadRejected))
				}
			} else {
				if w := st.Warnings[tt.key]; len(res.Rejected) != 0 || len(w) != 1 || !strings.Contains(w[0], tt.warning) {
					t.Fatalf("result %s, warnings %q: want one warning with %q", dump(res), w, tt.warning)
				}
			}
			if c := e.catalog(); len(c.Skills)+len(c.Subagents) != 0 {
				t.Fatalf("published from %s: %s", tt.key, dump(c))
			}
			// While it stays, its own event repeats nothing; once deleted, it is forgotten.
			if res := e.reconcile(tt.key); len(res.Rejected) > 0 && !res.Rejected[0].Repeated {
				t.Fatalf("a redelivery was news: %s", dump(res))
			}
			res = e.remove(tt.key)
			if len(res.Rejected) != 0 || e.status().Warnings[tt.key] != nil {
				t.Fatalf("after the deletion: result %s, warnings %q", dump(res), e.status().Warnings[tt.key])
			}
		})
	}
}

func testFilesBesideASkillMDAreWarnedAbout(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x/SKILL.md", skillDoc("x", "1", "Folder."))
	e.drop("skills/x/README.md", []byte("readme"))
	w := e.status().Warnings["skills/x/README.md"]
	if len(w) != 1 || !strings.Contains(w[0], "skills/x/SKILL.md") {
		t.Fatalf("warnings %q, want one naming skills/x/SKILL.md", w)
	}
	if en := e.live(catalog.KindSkill, "x"); en.Source != "skills/x/SKILL.md" || len(en.Versions) != 1 {
		t.Fatalf("the file beside changed the skill: %s", dump(en))
	}
	e.remove("skills/x/README.md")
	if w := e.status().Warnings["skills/x/README.md"]; w != nil {
		t.Fatalf("warning %q kept after the file was deleted", w)
	}
}

func testInvalidKeysAreRejectedWhileTheyExist(t *testing.T, mk envMaker) {
	e := mk(t)
	res := e.drop("skills/Not_A_Name.md", skillDoc("x", "", "Bad key."))
	if len(res.Rejected) != 1 || res.Rejected[0].Key != "skills/Not_A_Name.md" {
		t.Fatalf("result %s, want the key rejected", dump(res))
	}
	if got := e.status().Rejections; len(got) != 1 || got[0].Code != res.Rejected[0].Code {
		t.Fatalf("status %s", dump(got))
	}
	if res := e.remove("skills/Not_A_Name.md"); len(res.Rejected) != 0 {
		t.Fatalf("a deleted invalid key was rejected again: %s", dump(res))
	}
}

// testControlByteInAKeyIsRejected drops a key holding a byte XML cannot
// carry beside enough others that recheck checks the round by listing: the
// key is refused with a reason the operator sees, by a re-index and on its
// own event alike, and nothing fails.
func testControlByteInAKeyIsRejected(t *testing.T, mk envMaker) {
	e := mk(t)
	for i := range recheckByListing + 8 {
		name := fmt.Sprintf("s%02d", i)
		e.put("skills/"+name+".md", skillDoc(name, "1", "Fine."))
	}
	const odd = "skills/\x1bbad.md"
	e.put(odd, skillDoc("bad", "1", "Odd key."))
	// Gone before the store's own cleanup, whatever happens: awstest's
	// listing of the bucket cannot read such a key.
	t.Cleanup(func() { _ = e.st.Delete(context.Background(), odd) })
	res := e.reindex()
	if len(res.Published) != recheckByListing+8 || !slices.Equal(rejectionCodes(res), []string{artifact.CodeInvalidKey}) || res.Rejected[0].Key != odd {
		t.Fatalf("result %s, want %d published and %q rejected as invalid_key", dump(res), recheckByListing+8, odd)
	}
	if got := e.status().Rejections; len(got) != 1 || got[0].Key != odd || got[0].Message == "" {
		t.Fatalf("status %s", dump(got))
	}
	if res := e.reconcile(odd); len(res.Rejected) != 1 || !res.Rejected[0].Repeated {
		t.Fatalf("the key's own event: %s, want the rejection, already recorded", dump(res))
	}
	if res := e.remove(odd); len(res.Rejected) != 0 {
		t.Fatalf("a deleted odd key was rejected again: %s", dump(res))
	}
}

func testNameMustMatchTheKey(t *testing.T, mk envMaker) {
	tests := []struct {
		key  string
		body []byte
	}{
		{"skills/x.md", skillDoc("y", "1", "Other name.")},
		{"skills/x/SKILL.md", skillDoc("y", "1", "Other name.")},
		{"skills/x.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("y", "1", "Other."))})},
		{"listings/l/skills/x.md", skillDoc("y", "1", "Other name.")},
		{"subagents/x.md", agentDoc("y", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			e := mk(t)
			res := e.drop(tt.key, tt.body)
			if got := rejectionCodes(res); !slices.Equal(got, []string{"name_mismatch"}) {
				t.Fatalf("codes %v, want [name_mismatch]; %s", got, dump(res))
			}
			if c := e.catalog(); len(c.Skills)+len(c.Subagents) != 0 {
				t.Fatalf("published despite the mismatch: %s", dump(c))
			}
		})
	}
}

// TestContractMiss pins which keys in no form of the contract are refused,
// warned about or ignored, including the ones no store of the suite can
// hold (folder markers, dot-files).
func TestContractMiss(t *testing.T) {
	const (
		rejected = "rejected"
		warned   = "warned"
		ignored  = "ignored"
	)
	tests := []struct {
		key  string
		want string
	}{
		{"skills/foo.MD", rejected},
		{"skills/x.tar", rejected},
		{"listings/l/x.md", rejected},
		{"listings/l", rejected},
		{"listings/l/skills/x.7z", rejected},
		{"subagents/x.txt", rejected},
		{"subagents/x/README.md", warned},
		{"skills/Bad/x.txt", warned},
		{"skills//x.md", warned},
		{"skills/", ignored},
		{"skills/x/", ignored},
		{"listings/l/skills/", ignored},
		{"subagents/", ignored},
		{"Skills/foo.md", ignored},
		{"other/x", ignored},
		{"files/x.md", ignored},
	}
	for _, tt := range tests {
		code, msg, warning := contractMiss(tt.key)
		got := ignored
		switch {
		case code != "" && msg != "" && warning == "":
			got = rejected
		case code == "" && msg == "" && warning != "":
			got = warned
		case code != "" || msg != "" || warning != "":
			got = "inconsistent"
		}
		if got != tt.want {
			t.Errorf("contractMiss(%q) = %q, %q, %q: %s, want %s", tt.key, code, msg, warning, got, tt.want)
		}
	}
	for key, want := range map[string]bool{
		"skills/.DS_Store": true, "skills/x/._SKILL.md": true, ".gitkeep": true, "subagents/.x/agent.md": true,
		"skills/x.md": false, "skills/../x.md": false, "skills/./x.md": false, "skills/x..md": false,
	} {
		if hidden(key) != want {
			t.Errorf("hidden(%q) = %v, want %v", key, !want, want)
		}
	}
}
