package skillsconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

func TestAudiences(t *testing.T) {
	c, err := Parse([]byte(`version: 1
skills:
  - name: alpha
    audiences: [partner-b, partner-a]
  - name: beta
    visibility: authenticated
    audiences: [partner-b]
subagents:
  - name: reviewer
    audiences: [partner-c]
listings:
  gated:
    audiences: [partner-a, partner-b]
    skills:
      - name: alpha
      - name: own-narrow
        audiences: [partner-b]
  open:
    skills:
      - name: own-wide
        audiences: [partner-z]
`))
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Skills[0]; a.Visibility != catalog.Authenticated || !a.Audiences.Equal(audience.NewSet("partner-a", "partner-b")) {
		t.Errorf("alpha = %s %v, want authenticated for partner-a and partner-b", a.Visibility, a.Audiences)
	}
	if r := c.Subagents[0]; r.Visibility != catalog.Authenticated || !r.Audiences.Equal(audience.NewSet("partner-c")) {
		t.Errorf("reviewer = %s %v", r.Visibility, r.Audiences)
	}
	for _, tc := range []struct {
		kind          catalog.Kind
		listing, name string
		want          audience.Set
	}{
		{catalog.KindSkill, "", "alpha", audience.NewSet("partner-a", "partner-b")},
		{catalog.KindSkill, "gated", "own-narrow", audience.NewSet("partner-b")},
		{catalog.KindSkill, "gated", "dropped-there", audience.NewSet("partner-a", "partner-b")}, // its listing's
		{catalog.KindSkill, "open", "dropped-there", nil},
		{catalog.KindSkill, "", "unconfigured", nil},
		{catalog.KindSubagent, "", "reviewer", audience.NewSet("partner-c")},
	} {
		if got := c.EffectiveAudiences(tc.kind, tc.listing, tc.name); !got.Equal(tc.want) {
			t.Errorf("EffectiveAudiences(%s %s/%s) = %v, want %v", tc.kind, tc.listing, tc.name, got, tc.want)
		}
	}
}

func TestAudiencesRefused(t *testing.T) {
	var six strings.Builder
	for i := range 7 {
		fmt.Fprintf(&six, "  - name: s%d\n    audiences: [p%d]\n", i, i)
	}
	cases := []struct{ name, doc, field, msg string }{
		{"public with audiences", "skills:\n  - name: a\n    visibility: public\n    audiences: [x]\n", "skills[0].audiences", "visibility: public"},
		{"empty list", "skills:\n  - name: a\n    audiences: []\n", "skills[0].audiences", "at least one"},
		{"bad name", "skills:\n  - name: a\n    audiences: [Partner]\n", "skills[0].audiences[0]", "lowercase"},
		{"wildcard is for keys", "skills:\n  - name: a\n    audiences: ['*']\n", "skills[0].audiences[0]", "lowercase"},
		{"twice", "skills:\n  - name: a\n    audiences: [x, x]\n", "skills[0].audiences[1]", "named twice"},
		{"a listing's own entry beyond its audiences", "listings:\n  l:\n    audiences: [a]\n    skills:\n      - name: s\n        audiences: [b]\n",
			"listings.l.skills[0].audiences", "only the listing's audiences"},
		{"an empty listing list", "listings:\n  l:\n    audiences: []\n", "listings.l.audiences", "at least one"},
		{"too many classes for one document", "skills:\n" + six.String(), "skills", "more than 64 distinct views"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("version: 1\n" + tc.doc))
			var e *Error
			if !errors.As(err, &e) || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) || e.Code() != CodeInvalidConfig {
				t.Fatalf("err = %v, want invalid_config at %s saying %q", err, tc.field, tc.msg)
			}
		})
	}
	// Six independent audiences in one document are 64 classes of key: the bound, accepted.
	var ok strings.Builder
	for i := range 6 {
		fmt.Fprintf(&ok, "  - name: s%d\n    audiences: [p%d]\n", i, i)
	}
	if _, err := Parse([]byte("version: 1\nskills:\n" + ok.String())); err != nil {
		t.Errorf("six audiences: %v", err)
	}
	// The same seven, each in a listing of its own, are two classes a document.
	var spread strings.Builder
	spread.WriteString("version: 1\nlistings:\n")
	for i := range 7 {
		fmt.Fprintf(&spread, "  l%d:\n    audiences: [p%d]\n", i, i)
	}
	if _, err := Parse([]byte(spread.String())); err != nil {
		t.Errorf("seven audiences in listings of their own: %v", err)
	}
}
