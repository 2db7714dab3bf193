package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestStatusTellsWhatTheConfigMisses, through the built command: a hidden
// skill whose folder is moved into a listing is published there under a
// name no entry hides, and status flags the public entry with the hidden
// one holding its bytes; the config's entry that now names nothing is
// listed under the config with the name it likely means; every entry shows
// its latest publish time, and --versions each version's, newest first.
func TestStatusTellsWhatTheConfigMisses(t *testing.T) {
	dir := t.TempDir()
	secret := string(skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("secret"), "scripts/rotate.sh": "rotate the keys\n"}))
	// vault is hidden, live, and holds a file of secret's.
	vault := string(skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("vault"), "scripts/rotate.sh": "rotate the keys\n"}))
	skilltest.WriteFiles(t, dir, map[string]string{
		"skills/secret.zip": secret,
		"skills/vault.zip":  vault,
		"skills/notes.md":   skillDoc("notes"),
		"agent-skills.yaml": "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n  - name: note\n    visibility: authenticated\n" +
			"  - name: vault\n    visibility: authenticated\n",
	})
	if code, _, errOut := builtRun(t, dir, "reindex", "--dir", dir); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	// The folder moved into a listing: the same bytes, another name's key.
	if err := os.MkdirAll(filepath.Join(dir, "listings", "partner", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "skills", "secret.zip"), filepath.Join(dir, "listings", "partner", "skills", "secret.zip")); err != nil {
		t.Fatal(err)
	}
	// A new version of notes, so that it has two.
	skilltest.WriteFiles(t, dir, map[string]string{"skills/notes.md": skilltest.SkillMD("notes", "2", "Notes, again.")})
	if code, _, errOut := builtRun(t, dir, "reindex", "--dir", dir); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	code, out, errOut := builtRun(t, dir, "status", "--dir", dir, "--all")
	if code != exitOK {
		t.Fatalf("status: %d %s", code, errOut)
	}
	for _, want := range []string{
		"config: 2 warnings (entries that name nothing published",
		`skills[0]: "secret" names no published skill (listing partner publishes a skill of that name: its entry belongs under listings.partner.skills)`,
		`skills[1]: "note" names no published skill (did you mean "notes"?)`,
		// secret's own entry is withdrawn (its key moved): it hides nothing now.
		"same bytes as withdrawn hidden skill secret",
		"shares scripts/rotate.sh with hidden skill vault",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	row := regexp.MustCompile(`(?m)^  partner/secret\s+\S+\s+(\S+)\s+archive\s+public\s.*same bytes as withdrawn hidden skill secret`)
	if m := row.FindStringSubmatch(out); m == nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(m[1]) {
		t.Errorf("the moved skill's row lacks its publish time or the flag:\n%s", out)
	}
	if strings.Contains(out, "\nwarnings\n") {
		t.Errorf("the config's findings are repeated under warnings:\n%s", out)
	}
	// No row says a withdrawn entry is hidden: "same bytes as hidden skill
	// secret" is what status said of it.
	if strings.Contains(out, "as hidden skill secret") {
		t.Errorf("status calls the withdrawn secret hidden:\n%s", out)
	}

	_, out, _ = builtRun(t, dir, "status", "--dir", dir, "--versions")
	if !regexp.MustCompile(`(?m)^  notes\s+2\s+\S+Z\s+skill-md.*\n\s+2\s+\S+Z\s+clean\s+skills/notes.md\s+sha256:\S+\n\s+\S+\s+\S+Z\s+clean\s+skills/notes.md\s+sha256:\S+$`).MatchString(out) {
		t.Errorf("--versions does not list notes' two versions, newest first:\n%s", out)
	}
	checkVersionColumns(t, out)
	_, out, _ = builtRun(t, dir, "status", "--dir", dir, "--json", "--versions")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range doc.Skills {
		switch e.ID {
		case "partner/secret":
			want := []catalog.Overlap{{Kind: catalog.KindSkill, ID: "secret", Withdrawn: true}, {Kind: catalog.KindSkill, ID: "vault", File: "scripts/rotate.sh"}}
			if !slices.Equal(e.HiddenElsewhere, want) {
				t.Errorf("partner/secret's hiddenElsewhere: %+v, want %+v", e.HiddenElsewhere, want)
			}
		case "notes":
			if len(e.History) != 2 || e.History[0].Version != "2" || !e.History[0].PublishedAt.Equal(e.PublishedAt) ||
				!e.History[1].PublishedAt.Before(e.History[0].PublishedAt) {
				t.Errorf("notes' history: %+v (latest published %s)", e.History, e.PublishedAt)
			}
		}
	}
	// vault withdrawn too: the row says so, and still says which bytes.
	if code, _, errOut := builtRun(t, dir, "withdraw", "--dir", dir, "vault"); code != exitOK {
		t.Fatalf("withdraw vault: %d %s", code, errOut)
	}
	if _, out, _ := builtRun(t, dir, "status", "--dir", dir); !strings.Contains(out, "shares scripts/rotate.sh with withdrawn hidden skill vault") ||
		strings.Contains(out, "with hidden skill vault") {
		t.Errorf("status after vault was withdrawn:\n%s", out)
	}
}

// checkVersionColumns: in status --versions, every version row's label,
// time, key and digest start where the header's LATEST, PUBLISHED, SOURCE
// and NOTE do, and nothing else is written in its other columns.
func checkVersionColumns(t *testing.T, out string) {
	t.Helper()
	var header string
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  NAME ") {
			header = line
			continue
		}
		if header == "" || !regexp.MustCompile(`^\s+\S+\s+\d{4}-\d\d-\d\dT\S+Z\s+\S+\s+\S+\s+sha256:`).MatchString(line) {
			continue
		}
		rows++
		cols := map[string]int{}
		for _, c := range []string{"LATEST", "PUBLISHED", "TYPE", "SCAN", "SOURCE", "NOTE"} {
			cols[c] = strings.Index(header, c)
		}
		for _, c := range []string{"LATEST", "PUBLISHED", "SCAN", "SOURCE", "NOTE"} {
			if i := cols[c]; i >= len(line) || line[i] == ' ' || line[i-1] != ' ' {
				t.Errorf("a version row's %s column does not start under the header's:\n%s\n%s", c, header, line)
			}
		}
		if strings.TrimSpace(line[:cols["LATEST"]]) != "" || strings.TrimSpace(line[cols["TYPE"]:cols["SCAN"]]) != "" {
			t.Errorf("a version row writes into another column:\n%s\n%s", header, line)
		}
	}
	if rows < 2 {
		t.Errorf("no version rows under a header:\n%s", out)
	}
}

// TestTheDeploymentsDefaultIsAFloor, through the built command: under a
// deployment whose default is authenticated, a config's
// default_visibility: public does not apply (status says so, and where the
// default in force comes from), while an entry's own visibility: public
// does; without the deployment's default, the config's applies.
func TestTheDeploymentsDefaultIsAFloor(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{
		"skills/internal.md": skillDoc("internal"),
		"skills/open.md":     skillDoc("open"),
		"agent-skills.yaml":  "version: 1\ndefault_visibility: public\nskills:\n  - name: open\n    visibility: public\n",
	})
	if code, _, errOut := builtRun(t, dir, "reindex", "--dir", dir, "--default-visibility", "authenticated"); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	_, out, _ := builtRun(t, dir, "status", "--dir", dir)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^default visibility: authenticated \(from the deployment's DefaultVisibility\)$`),
		regexp.MustCompile(`(?m)^warning: agent-skills.yaml says default_visibility: public, which does not apply`),
		regexp.MustCompile(`(?m)^  internal\s+\S+\s+\S+\s+skill-md\s+authenticated\s`),
		regexp.MustCompile(`(?m)^  open\s+\S+\s+\S+\s+skill-md\s+public\s`),
	} {
		if !want.MatchString(out) {
			t.Errorf("status does not match %s:\n%s", want, out)
		}
	}
	_, out, _ = builtRun(t, dir, "status", "--dir", dir, "--json")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if d := doc.Catalog.DefaultVisibility; d.Visibility != "authenticated" || d.From != "deployment" || d.Warning == "" {
		t.Errorf("status --json defaultVisibility: %+v", d)
	}

	// A deployment without a default of its own: the config's applies.
	other := t.TempDir()
	skilltest.WriteFiles(t, other, map[string]string{
		"skills/internal.md": skillDoc("internal"),
		"agent-skills.yaml":  "version: 1\ndefault_visibility: authenticated\n",
	})
	if code, _, errOut := builtRun(t, other, "reindex", "--dir", other); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	_, out, _ = builtRun(t, other, "status", "--dir", other)
	if !strings.Contains(out, "\ndefault visibility: authenticated (from agent-skills.yaml's default_visibility)\n") || strings.Contains(out, "warning: ") {
		t.Errorf("status under the config's default:\n%s", out)
	}
}

// TestStrayConfigsAreReported, through the built command: files at the
// root meant as the config but never read as one are reported as ignored,
// with the name that is read: by status (before and after indexing, text
// and JSON), by validate of the config beside them, and by the indexer's
// re-index (its status document and an audit event); one deleted is no
// longer reported.
func TestStrayConfigsAreReported(t *testing.T) {
	dir := t.TempDir()
	strays := []string{"Agent-Skills.yaml", "agent-skills.json", "agent-skills.yaml.bak", "agent-skills.yml"}
	files := map[string]string{"skills/secret.md": skillDoc("secret"), "agent-skills.txt.md": "not a config"}
	for _, k := range strays {
		files[k] = "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n"
	}
	skilltest.WriteFiles(t, dir, files)
	const ignored = "ignored: did you mean agent-skills.yaml?"
	_, out, _ := builtRun(t, dir, "status", "--dir", dir)
	for _, k := range strays {
		if !strings.Contains(out, "warning "+k+": "+ignored) {
			t.Errorf("status before indexing does not report %s:\n%s", k, out)
		}
	}
	code, _, errOut := builtRun(t, dir, "reindex", "--dir", dir)
	if code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	if n := strings.Count(errOut, `"event":"agent_skill.config_ignored"`); n != len(strays) {
		t.Errorf("reindex audited %d stray configs, want %d:\n%s", n, len(strays), errOut)
	}
	status, _, err := catalog.LoadStatus(t.Context(), mustDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range strays {
		if w := status.Warnings[k]; len(w) != 1 || !strings.HasPrefix(w[0], ignored) {
			t.Errorf("the status document's warnings of %s: %q", k, w)
		}
	}
	_, out, _ = builtRun(t, dir, "status", "--dir", dir)
	for _, k := range strays {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(k) + `: ` + regexp.QuoteMeta(ignored)).MatchString(out) {
			t.Errorf("status does not report %s once, under warnings:\n%s", k, out)
		}
		if strings.Count(out, k+": ") != 1 {
			t.Errorf("status reports %s %d times:\n%s", k, strings.Count(out, k+": "), out)
		}
	}
	if strings.Contains(out, "agent-skills.txt.md") {
		t.Errorf("status reports a file that is no config:\n%s", out)
	}
	_, out, _ = builtRun(t, dir, "status", "--dir", dir, "--json")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range doc.Warnings {
		if slices.Contains(strays, w.Key) && strings.HasPrefix(w.Message, ignored) {
			n++
		}
	}
	if n != len(strays) {
		t.Errorf("status --json warns of %d stray configs, want %d: %+v", n, len(strays), doc.Warnings)
	}

	skilltest.WriteFiles(t, dir, map[string]string{"agent-skills.yaml": "version: 1\n"})
	_, out, errOut = builtRun(t, dir, "validate", filepath.Join(dir, "agent-skills.yaml"))
	if !strings.Contains(errOut+out, "agent-skills.yml beside it: "+ignored) {
		t.Errorf("validate of the config does not report the stray beside it: %s %s", out, errOut)
	}

	if err := os.Remove(filepath.Join(dir, "agent-skills.yml")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := builtRun(t, dir, "reindex", "--dir", dir); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	if _, out, _ = builtRun(t, dir, "status", "--dir", dir); strings.Contains(out, "agent-skills.yml:") || !strings.Contains(out, "agent-skills.json: ") {
		t.Errorf("status after agent-skills.yml was deleted:\n%s", out)
	}
}

// mustDir opens dir as a store for the test.
func mustDir(t *testing.T, dir string) *store.Dir {
	t.Helper()
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
