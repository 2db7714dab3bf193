package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository's root (absolute: tests change directory).
var repoRoot = must(filepath.Abs(filepath.Join("..", "..")))

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// readme is the README's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the README's text from the heading to the next heading of the
// same level.
func section(t *testing.T, heading string) string {
	t.Helper()
	s := readme(t)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the README has no %q section", heading)
	}
	s = s[i+len(heading)+2:]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(s, "\n"+level); j >= 0 {
		s = s[:j]
	}
	return s
}

// TestREADMECommandTableIsTheHelp: each command's synopsis in the README's
// operator table is the one its help prints, and every command is there.
func TestREADMECommandTableIsTheHelp(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `(skilldrop [^`]+)` \\|")
	var inREADME []string
	for _, m := range row.FindAllStringSubmatch(section(t, "## Operator commands"), -1) {
		inREADME = append(inREADME, strings.ReplaceAll(m[1], `\|`, "|"))
	}
	var want []string
	for _, c := range commands {
		want = append(want, c.synopsis())
		_, help, _ := runCLI("help", c.name)
		if !strings.HasPrefix(help, "usage: "+c.synopsis()+"\n") {
			t.Errorf("help %s starts %q, want the synopsis %q", c.name, strings.SplitN(help, "\n", 2)[0], c.synopsis())
		}
	}
	sort.Strings(inREADME)
	sort.Strings(want)
	if !slices.Equal(inREADME, want) {
		t.Errorf("README operator table:\n  %s\nthe commands' synopses:\n  %s", strings.Join(inREADME, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestHelpIsHonest: every command's help says its exit statuses, shows
// each default once, hides the flag that has no effect, and offers
// --log-level where the command logs.
func TestHelpIsHonest(t *testing.T) {
	logs := []string{"publish", "reindex", "serve", "withdraw"}
	for name := range commands {
		_, help, _ := runCLI("help", name)
		if !strings.Contains(help, "\nexit status: 0") {
			t.Errorf("help %s does not give its exit statuses", name)
		}
		for _, line := range strings.Split(help, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("help %s says its default twice: %q", name, line)
			}
		}
		if strings.Contains(help, "clock-skew") {
			t.Errorf("help %s shows max-clock-skew-secs, which has no effect", name)
		}
		if has := strings.Contains(help, "--log-level"); has != slices.Contains(logs, name) {
			t.Errorf("help %s: --log-level shown %v, want %v", name, has, !has)
		}
	}
	// Accepted all the same, for configurations that carry it.
	if code, _, errOut := runCLI("validate", "--max-clock-skew-secs", "5", writeFile(t, t.TempDir(), "x.md", skillDoc("x"))); code != exitOK {
		t.Errorf("--max-clock-skew-secs: exit %d, %s", code, errOut)
	}
}

// TestREADMEValidatesTheExampleBucket runs the README's command that
// validates the example bucket (its globs expanded, as a shell does) from
// the repository's root: it covers every file and skill or sub-agent folder
// of the bucket, and all of them are valid.
func TestREADMEValidatesTheExampleBucket(t *testing.T) {
	block := regexp.MustCompile("(?s)```sh\n(skilldrop validate examples/bucket.*?)\n```").FindStringSubmatch(section(t, "## Operator commands"))
	if block == nil {
		t.Fatal("the README has no command validating examples/bucket")
	}
	var args []string
	for _, f := range strings.Fields(strings.ReplaceAll(block[1], "\\\n", " "))[2:] {
		matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil || len(matches) == 0 {
			t.Fatalf("%s matches nothing (%v)", f, err)
		}
		args = append(args, matches...)
	}
	covered := map[string]bool{}
	for _, a := range args {
		rel, _ := filepath.Rel(filepath.Join(repoRoot, "examples", "bucket"), a)
		covered[filepath.ToSlash(rel)] = true
	}
	err := filepath.WalkDir(exampleBucket, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(exampleBucket, p)
		rel = filepath.ToSlash(rel)
		parent := filepath.Base(filepath.Dir(p))
		if (!d.IsDir() || (parent == "skills" || parent == "subagents")) && rel != "." && !covered[rel] {
			t.Errorf("the README's command leaves out %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(append([]string{"validate"}, args...)...)
	if code != exitOK || strings.Contains(out, "rejected") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// jsonExample is the README's JSON example that follows the paragraph
// starting with intro.
func jsonExample(t *testing.T, intro string) map[string]any {
	t.Helper()
	s := section(t, "### JSON output")
	i := strings.Index(s, intro)
	if i < 0 {
		t.Fatalf("no %q in the README's JSON section", intro)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatalf("no JSON example after %q", intro)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
		t.Fatalf("the README's example after %q is not JSON: %v", intro, err)
	}
	return v
}

// shape is the set of key paths of a JSON value ("results[].publish.key"),
// arrays merged: what the README pins, whatever the values.
func shape(v any, prefix string, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[prefix+k] = true
			shape(e, prefix+k+".", into)
		}
	case []any:
		for _, e := range x {
			shape(e, strings.TrimSuffix(prefix, ".")+"[].", into)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameShape fails unless got's key paths are the README example's.
func sameShape(t *testing.T, what string, readmeDoc map[string]any, got []byte) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, got)
	}
	want, have := map[string]bool{}, map[string]bool{}
	shape(readmeDoc, "", want)
	shape(doc, "", have)
	if !slices.Equal(keys(want), keys(have)) {
		t.Errorf("%s: the output's fields\n  %s\nthe README's\n  %s\n%s", what, strings.Join(keys(have), " "), strings.Join(keys(want), " "), got)
	}
}

// TestREADMESecurityModelIsOneList: the security model's bullets come
// before its subsections, so no subsection heading splits the list (the
// bullets after one would read as the subsection's), and the keys,
// audiences, capability URL and bucket policy docs are all there.
func TestREADMESecurityModelIsOneList(t *testing.T) {
	s := section(t, "## Security model")
	sub := strings.Index(s, "\n### ")
	if sub < 0 {
		t.Fatal("the security model has no subsections")
	}
	if rest := s[sub:]; regexp.MustCompile(`(?m)^- \*\*`).MatchString(rest) {
		t.Errorf("a security model bullet follows a subsection heading:\n%s", regexp.MustCompile(`(?m)^- \*\*[^*]+\*\*`).FindString(rest))
	}
	for _, want := range []string{"\n### API keys and audiences\n", "\n### Capability URLs\n", "**Defence in depth.**", "**Integrity contract.**"} {
		if !strings.Contains(s, want) {
			t.Errorf("the security model has no %q", strings.TrimSpace(want))
		}
	}
}
