package skillmd

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

func doc(front, body string) []byte { return []byte("---\n" + front + "---\n" + body) }

func TestParseSkill(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name      string
		in        []byte
		wantCode  string
		wantField string
	}{
		{"minimal", doc("name: a\ndescription: d\n", ""), "", ""},
		{"crlf", []byte("---\r\nname: ab\r\ndescription: d\r\n---\r\nbody\r\n"), "", ""},
		{"bom", append([]byte("\xef\xbb\xbf"), doc("name: a\ndescription: d\n", "")...), "", ""},
		{"full", doc("name: deploy-via-pr\ndescription: Deploy.\nlicense: MIT\ncompatibility: claude\nallowed-tools: Bash Read\nmetadata:\n  version: 1.10\n  author: x\n", "# Body\n"), "", ""},
		{"64 chars", doc("name: "+strings.Repeat("a", 64)+"\ndescription: d\n", ""), "", ""},
		{"no opening", []byte("name: a\ndescription: d\n"), CodeInvalidFrontmatter, ""},
		{"leading blank line", []byte("\n---\nname: a\ndescription: d\n---\n"), CodeInvalidFrontmatter, ""},
		{"unclosed", []byte("---\nname: a\ndescription: d\n"), CodeInvalidFrontmatter, ""},
		{"empty frontmatter", doc("", ""), CodeInvalidFrontmatter, ""},
		{"not a mapping", doc("- a\n", ""), CodeInvalidFrontmatter, ""},
		{"bad yaml", doc("name: [\n", ""), CodeInvalidFrontmatter, ""},
		{"duplicate key", doc("name: a\nname: b\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"missing name", doc("description: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"upper name", doc("name: Deploy\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"leading hyphen", doc("name: -a\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"trailing hyphen", doc("name: a-\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"double hyphen", doc("name: a--b\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"65 chars", doc("name: "+strings.Repeat("a", 65)+"\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"underscore", doc("name: a_b\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"quoted numeric name", doc("name: \"123\"\ndescription: d\n", ""), "", ""},
		{"unquoted numeric name", doc("name: 123\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"unquoted hex-looking name", doc("name: 0x1f\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"unquoted yes", doc("name: yes\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"quoted yes", doc("name: 'yes'\ndescription: d\n", ""), "", ""},
		{"merge key", doc("name: a\ndescription: d\n<<: {allowed-tools: 'Bash(*)'}\n", ""), CodeInvalidFrontmatter, "<<"},
		{"anchor", doc("name: &n a\ndescription: d\n", ""), CodeInvalidFrontmatter, ""},
		{"nested alias", doc("name: a\ndescription: d\nmetadata:\n  a: &x v\n  b: *x\n", ""), CodeInvalidFrontmatter, ""},
		{"list name", doc("name: [a]\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"null name", doc("name:\ndescription: d\n", ""), CodeInvalidFrontmatter, "name"},
		{"reserved name", doc("name: v1\ndescription: d\n", ""), CodeReservedName, "name"},
		{"missing description", doc("name: a\n", ""), CodeInvalidFrontmatter, "description"},
		{"empty description", doc("name: a\ndescription: \"\"\n", ""), CodeInvalidFrontmatter, "description"},
		{"1024 description", doc("name: a\ndescription: "+long(1024)+"\n", ""), "", ""},
		{"1025 description", doc("name: a\ndescription: "+long(1025)+"\n", ""), CodeInvalidFrontmatter, "description"},
		{"501 compatibility", doc("name: a\ndescription: d\ncompatibility: "+long(501)+"\n", ""), CodeInvalidFrontmatter, "compatibility"},
		{"metadata list", doc("name: a\ndescription: d\nmetadata: [1]\n", ""), CodeInvalidFrontmatter, "metadata"},
		{"metadata nested", doc("name: a\ndescription: d\nmetadata:\n  x:\n    y: z\n", ""), CodeInvalidFrontmatter, "metadata"},
		{"bad version", doc("name: a\ndescription: d\nmetadata:\n  version: 1/2\n", ""), CodeInvalidVersion, "version"},
		{"reserved version", doc("name: a\ndescription: d\nversion: latest\n", ""), CodeReservedVersion, "version"},
		{"invalid utf8 body", doc("name: a\ndescription: d\n", "\xff\xfe"), CodeInvalidBody, ""},
		{"invalid utf8 frontmatter", doc("name: a\ndescription: \xff\n", ""), CodeInvalidFrontmatter, ""},
		{"huge frontmatter", doc("name: a\ndescription: d\nx: "+long(MaxFrontmatterBytes)+"\n", ""), CodeInvalidFrontmatter, ""},
		{"alias bomb", doc("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\nname: a\n", ""), CodeInvalidFrontmatter, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSkill(tt.in)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if s.Name == "" || s.Description == "" {
					t.Fatalf("parsed skill lacks name/description: %+v", s)
				}
				return
			}
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("error = %v (%T), want *Error code %s", err, err, tt.wantCode)
			}
			if e.Code != tt.wantCode || e.Field != tt.wantField {
				t.Fatalf("error = %v, want code %s field %q", e, tt.wantCode, tt.wantField)
			}
		})
	}
}

func TestSkillFields(t *testing.T) {
	s, err := ParseSkill(doc("name: deploy\ndescription: Deploy it.\nversion: 2.0\ncategory: ops\nfancy: 1\nallowed-tools: [Bash, Read]\nmetadata:\n  version: \"1.10\"\n  subagent: reviewer\n", "# Deploy\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.VersionLabel()
	if err != nil || v != "1.10" {
		t.Fatalf("VersionLabel = %q, %v; metadata.version wins and stays raw", v, err)
	}
	if s.Version != "2.0" || s.Extras["category"] != "ops" || s.Subagent() != "reviewer" {
		t.Fatalf("fields: %+v", s)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "fancy") {
		t.Fatalf("warnings = %q, want one naming fancy", s.Warnings)
	}
	if strings.Join(s.AllowedTools, ",") != "Bash,Read" || string(s.Body) != "# Deploy\n" {
		t.Fatalf("allowed-tools %q body %q", s.AllowedTools, s.Body)
	}
	top, _ := ParseSkill(doc("name: a\ndescription: d\nversion: 1.10\n", ""))
	if v, _ := top.VersionLabel(); v != "1.10" {
		t.Fatalf("top-level version = %q, want raw 1.10", v)
	}
	none, _ := ParseSkill(doc("name: a\ndescription: d\n", ""))
	if v, err := none.VersionLabel(); v != "" || err != nil {
		t.Fatalf("no version = %q, %v", v, err)
	}
}

func TestParseAgent(t *testing.T) {
	base := "name: reviewer\ndescription: Reviews.\n"
	tests := []struct {
		name      string
		front     string
		body      string
		wantCode  string
		wantField string
	}{
		{"minimal", base, "You review.\n", "", ""},
		{"all fields", base + "tools: [Read, Grep]\nmodelRole: Compaction\ntimeoutSeconds: 600\nprefillTimeoutSeconds: 3600\nvisibility: User-Facing\nemitStructuredFindings: true\n", "x", "", ""},
		{"empty body", base, " \n\t\n", CodeInvalidBody, ""},
		{"no body", base, "", CodeInvalidBody, ""},
		{"bad role", base + "modelRole: Helper\n", "x", CodeInvalidFrontmatter, "modelRole"},
		{"timeout low", base + "timeoutSeconds: 4\n", "x", CodeInvalidFrontmatter, "timeoutSeconds"},
		{"timeout high", base + "timeoutSeconds: 601\n", "x", CodeInvalidFrontmatter, "timeoutSeconds"},
		{"timeout string", base + "timeoutSeconds: \"60\"\n", "x", CodeInvalidFrontmatter, "timeoutSeconds"},
		{"prefill high", base + "prefillTimeoutSeconds: 3601\n", "x", CodeInvalidFrontmatter, "prefillTimeoutSeconds"},
		{"prefill low", base + "prefillTimeoutSeconds: 1\n", "x", CodeInvalidFrontmatter, "prefillTimeoutSeconds"},
		{"bad visibility", base + "visibility: secret\n", "x", CodeInvalidFrontmatter, "visibility"},
		{"bad bool", base + "emitStructuredFindings: yes\n", "x", CodeInvalidFrontmatter, "emitStructuredFindings"},
		{"no description", "name: reviewer\n", "x", CodeInvalidFrontmatter, "description"},
		{"bad name", "name: Reviewer\ndescription: d\n", "x", CodeInvalidFrontmatter, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAgent(doc(tt.front, tt.body))
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if a.Name != "reviewer" {
					t.Fatalf("name = %q", a.Name)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != tt.wantCode || e.Field != tt.wantField {
				t.Fatalf("error = %v, want code %s field %q", err, tt.wantCode, tt.wantField)
			}
		})
	}
	a, err := ParseAgent(doc(base+"visibility: INTERNAL\nemitStructuredFindings: false\nunknown: 1\n", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Visibility != "internal" || a.EmitStructuredFindings == nil || *a.EmitStructuredFindings || len(a.Warnings) != 1 {
		t.Fatalf("agent = %+v", a)
	}
}

func TestValidateVersion(t *testing.T) {
	for _, ok := range []string{"1", "1.0.0", "1.0.0-rc.1+build.5", "v2", strings.Repeat("9", 64)} {
		if err := ValidateVersion(ok); err != nil {
			t.Errorf("ValidateVersion(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{".", "..", ".hidden", "-1", "+build", "", "latest", "LATEST", "1 0", "1/0", "..%2f", strings.Repeat("9", 65), "1_0", "é"} {
		if err := ValidateVersion(bad); err == nil {
			t.Errorf("ValidateVersion(%q) accepted", bad)
		}
	}
}

func FuzzParseSkill(f *testing.F) {
	f.Add(doc("name: a\ndescription: d\n", "body"))
	f.Add(doc("name: deploy\ndescription: d\nmetadata:\n  version: 1.0\n", ""))
	f.Add([]byte("---\r\nname: a\r\n---\r\n"))
	f.Add([]byte("---\n---\n"))
	f.Add(doc("a: &a [x]\nb: *a\n", ""))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseSkill(in)
		if err != nil {
			if _, ok := AsError(err); !ok {
				t.Fatalf("error is not *Error: %T %v", err, err)
			}
			return
		}
		// Whatever is accepted satisfies the rules it was checked against.
		if ValidateName(s.Name) != nil || s.Description == "" {
			t.Fatalf("accepted invalid skill %+v", s)
		}
		if _, err := s.VersionLabel(); err != nil {
			t.Fatalf("accepted invalid version: %v", err)
		}
		_, _ = ParseAgent(in)
	})
}

// TestRouteNamesAreReserved: no skill or sub-agent can be named after a
// segment of the service's routes, nor a version labelled "latest".
func TestRouteNamesAreReserved(t *testing.T) {
	for _, n := range routes.ReservedNames {
		var e *Error
		if err := ValidateName(n); !errors.As(err, &e) || e.Code != CodeReservedName {
			t.Errorf("ValidateName(%q) = %v, want %s", n, err, CodeReservedName)
		}
	}
	var e *Error
	if err := ValidateVersion(routes.Latest); !errors.As(err, &e) || e.Code != CodeReservedVersion {
		t.Errorf("ValidateVersion(%q) = %v, want %s", routes.Latest, err, CodeReservedVersion)
	}
}

// TestDescriptionIsPlainText: what names refuse (invisible and control
// characters) and markup are refused in a description, in SKILL.md and
// agent.md alike; prose with line breaks, tabs, accents, emoji and a bare
// comparison is not.
func TestDescriptionIsPlainText(t *testing.T) {
	for _, tt := range []struct {
		name, desc string
		ok         bool
	}{
		{"prose", "Fills PDF forms; use when a user asks for one.", true},
		{"line breaks and tabs", "First line.\nSecond\tline.\n", true},
		{"accents, emoji, a non-breaking space", "Résumé des règles\u00a0: déployer 🚀", true},
		{"a bare comparison", "Use when size < 4 MiB or 2<3.", true},
		{"right-to-left override", "Safe skill \u202egnp.exe", false},
		{"left-to-right isolate", "a\u2066b", false},
		{"zero-width space", "pdf\u200btools", false},
		{"zero-width joiner", "a\u200db", false},
		{"byte order mark", "\ufeffHi", false},
		{"tag character", "Hi\U000e0041", false},
		{"soft hyphen", "in\u00advisible", false},
		{"escape", "red \x1b[31m text", false},
		{"carriage return", "shown\roverwritten", false},
		{"C1 control", "a\u009bb", false},
		{"line separator", "a\u2028b", false},
		{"DEL", "a\x7fb", false},
		{"tag", "Click <img src=x onerror=alert(1)>", false},
		{"closing tag", "text</description>", false},
		{"comment", "a <!-- hidden --> b", false},
		{"processing instruction", "<?xml version='1.0'?>", false},
		{"ampersands that are no reference", "Tom & Jerry; R&D, AT&T, &&, a&b", true},
		{"prose that names a scheme", "Lints JavaScript: ESLint rules; reads metadata:title and data: tables", true},
		{"a URL and brackets without a link", "See https://example.com/docs [beta] (c) [d] (e)", true},
		{"a hex reference to a bidi override", "Safe skill &#x202e;gnp.exe", false},
		{"a decimal reference to a bidi override", "Safe skill &#8238;gnp.exe", false},
		{"a reference without its semicolon", "Safe skill &#x202egnp.exe", false},
		{"a double-encoded reference", "Safe skill &amp;#x202e;gnp.exe", false},
		{"references to a tag", "&lt;script&gt;alert(1)&lt;/script&gt;", false},
		{"a harmless reference", "Tom &amp; Jerry", false},
		{"a named reference without its semicolon", "&copy 2026", false},
		{"a javascript: link", "Click [x](javascript:alert(1))", false},
		{"an image", "Hi ![img](http://tracker.example/p.gif?u=1)", false},
		{"a link reference definition", "See [docs].\n[docs]: http://tracker.example/", false},
		{"a data: URL", "Open data:text/html;base64,PHNjcmlwdD4=", false},
		{"a javascript: URL in capitals", "JAVASCRIPT:alert(1)", false},
		{"a vbscript: URL", "vbscript:msgbox(1)", false},
		{"an autolink", "<javascript:alert(1)>", false},
		{"a link spelt with references", "[x]&#40;javascript:alert(1))", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			quoted := strconv.Quote(tt.desc) // a YAML double-quoted scalar reads Go's escapes back
			for kind, parse := range map[string]func([]byte) error{
				"SKILL.md": func(b []byte) error { _, err := ParseSkill(b); return err },
				"agent.md": func(b []byte) error { _, err := ParseAgent(b); return err },
			} {
				err := parse(doc("name: a\ndescription: "+quoted+"\n", "Body.\n"))
				if tt.ok != (err == nil) {
					t.Fatalf("%s: %v, want ok=%v", kind, err, tt.ok)
				}
				if e, ok := AsError(err); err != nil && (!ok || e.Field != "description" || e.Code != CodeInvalidFrontmatter) {
					t.Fatalf("%s: %v, want an invalid_frontmatter of description", kind, err)
				}
			}
			if err := ValidateDescription(tt.desc); tt.ok != (err == nil) {
				t.Fatalf("ValidateDescription: %v, want ok=%v", err, tt.ok)
			}
		})
	}
	err := ValidateDescription("Safe \u202eexe")
	if err == nil || !strings.Contains(err.Error(), "U+202E at character 6") {
		t.Errorf("the message does not name the character and where it is: %v", err)
	}
	if err := ValidateDescription("a <script>x</script>"); err == nil || !strings.Contains(err.Error(), `"<script>" at character 3`) {
		t.Errorf("the message does not quote the markup: %v", err)
	}
	for desc, want := range map[string]string{
		"Safe &#x202e;exe":              "U+202E at character 6 once its character references are decoded",
		"&lt;script&gt;":                `markup ("<script>" at character 1 once its character references are decoded`,
		"Tom &amp; Jerry":               `the character reference "&amp;" at character 5, which an HTML page shows as "&"`,
		"go ![img](http://t.example/p)": `markdown link or image ("![img](http://t.example/p)" at character 4)`,
		"a data:image/png;base64,AAAA":  `script or data URL ("data:image/png;base64,AAAA" at character 3)`,
	} {
		if err := ValidateDescription(desc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateDescription(%q) = %v\nwant it to say %q", desc, err, want)
		}
	}
}
