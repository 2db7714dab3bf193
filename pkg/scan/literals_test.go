package scan

import (
	"regexp/syntax"
	"slices"
	"testing"
)

// TestNeedsOf: what a match needs past its keyword is read from the
// expression: the rarest part after the keyword, an alternation's union,
// nothing for what is optional, and never a part of the keyword itself
// (Go's parser factors "exec|eval" into e(?:xec|val)).
func TestNeedsOf(t *testing.T) {
	for _, c := range []struct {
		pattern, keyword string
		lowered          bool
		want             []string
	}{
		{`\A(?:node\s+<\(\s*(curl|wget|fetch)\b)`, "node", true, []string{"curl", "wget", "fetch"}},
		{`\A(?:(exec|eval)\s*\(.{0,200}\b(urlopen|http))`, "eval", true, []string{"urlopen", "http"}},
		{`\A(?:you\s+are\s+now|you\s+must\s+obey)`, "you", true, []string{"are", "must"}},
		{`\A(?:curl\s+(-\S+\s+)*\|\s*sh)`, "curl", true, []string{"sh"}},
		{`\A(?:git\s+push(\s+--force)?)`, "git", true, []string{"push"}},
		{`\A(?:rm\s+-rf\s*(/|~))`, "rm", true, []string{"-rf"}},
		{`\A(?:echo(\s+hello)?)`, "echo", true, nil},
		{`\A(?:chmod\s+[:,]x)`, "chmod", true, []string{"x"}},
		{`\A(?:chmod\s+[:,]\d)`, "chmod", true, []string{",", ":"}},
		{`\A(?:(?i)key\s+SECRET)`, "key", false, nil},
		{`\A(?:key\s+SECRET)`, "key", false, []string{"SECRET"}},
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := needsOf(re, c.lowered, c.keyword); !slices.Equal(got, c.want) {
			t.Errorf("needsOf(%s, keyword %q) = %q, want %q", c.pattern, c.keyword, got, c.want)
		}
	}
	// The default pack's frequent keywords run their patterns only where
	// what those need is.
	p := Default()
	needed := 0
	for _, ms := range p.rulesOf {
		for _, m := range ms {
			if len(m.needs) > 0 {
				needed++
			}
		}
	}
	if total := len(p.rules); needed < total {
		t.Errorf("%d matchers have needs, want at least one for each of the %d rules", needed, total)
	}
}
