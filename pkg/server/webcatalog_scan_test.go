package server

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// shellRC is a line the content scan warns on (persistence.shell-rc, medium).
const shellRC = "\necho 'export PATH=$HOME/bin:$PATH' >> ~/.bashrc\n"

// TestSkillPageShowsTheScanOfTheVersionsInService: the page of a skill and
// of a sub-agent shows the latest version's verdict, rule pack and each
// finding as the native version document carries them, and each version's
// verdict in the history; a revoked version is on no page, and a skill
// whose every version is gone reads as missing, whoever asks.
func TestSkillPageShowsTheScanOfTheVersionsInService(t *testing.T) {
	x := newLiveBucket(t)
	v1 := []byte(skilltest.SkillMD("deploy", "1.0", "Deploys."))
	v2 := []byte(skilltest.SkillMD("deploy", "1.1", "Deploys, with a path.") + shellRC)
	v3 := []byte(skilltest.SkillMD("deploy", "1.2", "Deploys, compromised."))
	sec := []byte(skilltest.SkillMD("secret-tool", "1", "Internal."))
	x.drop("skills/deploy.md", v1)
	x.drop("skills/deploy.md", v2)
	x.drop("skills/deploy.md", v3)
	x.drop("skills/secret-tool.md", sec)
	x.drop("subagents/pather.md", []byte(skilltest.AgentMD("pather", "3", "Sets paths.")+shellRC))
	x.drop("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: secret-tool\n    visibility: authenticated\nrevoke:\n"+
		"  - name: deploy\n    version: \"1.2\"\n    digest: "+digest.Of(v3).String()+"\n    reason: a compromised build\n"+
		"  - name: secret-tool\n    version: \"1\"\n    digest: "+digest.Of(sec).String()+"\n    reason: leaked\n"))

	doc := x.get("/skills/v1/deploy/versions/1.1.json").Body.String()
	engine := regexp.MustCompile(`"engine":"([^"]+)"`).FindStringSubmatch(doc)
	line := regexp.MustCompile(`"line":(\d+)`).FindStringSubmatch(doc)
	if engine == nil || line == nil {
		t.Fatalf("the native version document carries no engine or finding line: %s", doc)
	}
	for _, tc := range []struct{ page, want string }{
		{"/catalog/skills/deploy", "SKILL.md:" + line[1]},
		{"/catalog/subagents/pather", "agent.md:"},
	} {
		w := x.get(tc.page)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.page, w.Code)
		}
		for _, want := range []string{`<span class="badge warn">warn</span>`, "<code>" + html.EscapeString(engine[1]) + "</code>",
			"<td>medium</td><td><code>persistence.shell-rc</code></td>", tc.want, "appends to a shell start-up file"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", tc.page, want)
			}
		}
	}
	body := x.get("/catalog/skills/deploy").Body.String()
	history := body[strings.Index(body, `id="versions"`):]
	if !regexp.MustCompile(`>1\.1</a> <span class="badge">latest</span></td>.*<td>warn</td>`).MatchString(history) ||
		!regexp.MustCompile(`>1\.0</a></td>.*<td>clean</td>`).MatchString(history) {
		t.Errorf("the history does not give each version's verdict: %s", history)
	}
	if strings.Contains(body, "1.2") || strings.Contains(body, "compromised") || strings.Contains(body, digest.Of(v3).Hex()) {
		t.Error("the page shows the revoked version")
	}
	// Every version gone: no page, as missing, with a key too (the native
	// identity document answers 404 alike).
	for _, headers := range [][]string{nil, {bearer(goodKey)}} {
		missing := x.get("/catalog/skills/no-such-skill", headers...)
		w := x.get("/catalog/skills/secret-tool", headers...)
		if w.Code != http.StatusNotFound || w.Body.String() != missing.Body.String() {
			t.Errorf("a skill with no version in service (%v): %d", headers, w.Code)
		}
		if w := x.get("/skills/v1/secret-tool/index.json", headers...); w.Code != http.StatusNotFound {
			t.Errorf("the native identity of a skill with no version in service: %d", w.Code)
		}
	}
}

// TestScanFindingsAreTextOnThePage: a finding's file is the author's
// (an archive's path), its message quotes what was found: both reach the
// page escaped.
func TestScanFindingsAreTextOnThePage(t *testing.T) {
	x := newLiveBucket(t)
	hostile := "x' onmouseover='window.__xss=1' &amp; b&c.sh" // the validator refuses <, >, " and invisible characters
	x.drop("skills/tricky.zip", skilltest.Zip(t, map[string]string{
		"SKILL.md": skilltest.SkillMD("tricky", "1", "Tricky file names."),
		hostile:    shellRC,
	}))
	w := x.get("/catalog/skills/tricky")
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "persistence.shell-rc") {
		t.Fatalf("page: %d %s", w.Code, body)
	}
	if !strings.Contains(body, `<td class="path">`+html.EscapeString(hostile)+":2</td>") {
		t.Errorf("the finding's file is not shown escaped: %s", body[strings.Index(body, `id="scan"`):])
	}
	if strings.Contains(body, "onmouseover='") || strings.Contains(body, "&amp; b&c") {
		t.Error("the finding's file reached the page unescaped")
	}
}

// TestHostileFindingsAreInertText: whatever a recorded finding holds (a
// rule pack's message, a file name from an archive), the page shows it as
// text: no markup of it survives, its invisible characters are spelled out.
func TestHostileFindingsAreInertText(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	e := b.skill("findings", "", catalog.Public, artifact.FormatMarkdown, skillMD("findings"))
	payloads := []string{
		`<script>window.__xss=1</script>`, `"><img src=x onerror=window.__xss=2>`, `' onmouseover='window.__xss=3`,
		`<a href="javascript:window.__xss=4">x</a>`, "bidi \u202etxt.exe\u202c", `]]><svg onload=window.__xss=5>`,
	}
	res := &scan.Result{Verdict: scan.Warn, Engine: `<b>1</b>`}
	for i, p := range payloads {
		res.Findings = append(res.Findings, scan.Finding{Rule: "r" + p, Severity: scan.SeverityMedium, File: "dir/" + p, Line: i + 1, Message: "found " + p})
		res.Allowed = append(res.Allowed, scan.Allowed{Rule: p, Reason: p})
	}
	e.Versions[0].Scan = res
	withFiles(b)
	b.publish()
	w := newHarness(t, st).do(http.MethodGet, "/catalog/skills/findings")
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("page: %d", w.Code)
	}
	section := body[strings.Index(body, `id="scan"`):strings.Index(body, `id="files"`)]
	for _, bad := range []string{"<script>window", "<img", "<svg", "<b>1", `href="javascript`, "onmouseover='", "\u202e"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{html.EscapeString(`"><img src=x onerror=window.__xss=2>`), `bidi \u202etxt.exe\u202c`, "&lt;b&gt;1&lt;/b&gt;"} {
		if !strings.Contains(section, want) {
			t.Errorf("the scan section does not show %q as text: %s", want, section)
		}
	}
}
