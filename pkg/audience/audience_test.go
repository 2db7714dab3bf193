package audience_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/audience"
)

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"partner-a": true, "a": true, "p2": true, strings.Repeat("a", 64): true,
		"": false, "-a": false, "a-": false, "a--b": false, "Partner": false, "a_b": false, "*": false,
		strings.Repeat("a", 65): false, "a b": false, "é": false,
	} {
		if err := audience.ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestCallerMeets(t *testing.T) {
	a, ab := audience.NewSet("a"), audience.NewSet("b", "a", "b")
	if !slices.Equal(ab, audience.Set{"a", "b"}) {
		t.Fatalf("NewSet = %v, want sorted and distinct", ab)
	}
	cases := []struct {
		name   string
		caller audience.Caller
		set    audience.Set
		want   bool
	}{
		{"anonymous never", audience.Anonymous, nil, false},
		{"anonymous never, with audiences", audience.Anonymous, a, false},
		{"any key, no audiences", audience.Caller{Authenticated: true}, nil, true},
		{"a key without the audience", audience.Caller{Authenticated: true, Audiences: audience.NewSet("b")}, a, false},
		{"a key with one of them", audience.Caller{Authenticated: true, Audiences: audience.NewSet("b")}, ab, true},
		{"every audience", audience.Caller{Authenticated: true, All: true}, a, true},
		{"All without a valid key is nothing", audience.Caller{All: true, Audiences: a}, a, false},
	}
	for _, c := range cases {
		if got := c.caller.Meets(c.set); got != c.want {
			t.Errorf("%s: Meets = %v, want %v", c.name, got, c.want)
		}
	}
}

// caller is a valid key holding names.
func caller(names ...string) audience.Caller {
	return audience.Caller{Authenticated: true, Audiences: audience.NewSet(names...)}
}

// sees is what a caller sees of a document decided by g: which groups it
// meets (what the visibility of every entry of the document depends on).
func sees(g audience.Groups, c audience.Caller) string {
	var b strings.Builder
	fmt.Fprint(&b, c.Authenticated)
	for _, s := range g {
		fmt.Fprint(&b, c.Meets(s))
	}
	return b.String()
}

func TestClassStandsForEveryCallerWhoSeesTheSame(t *testing.T) {
	g := audience.GroupsOf(audience.NewSet("a"), audience.NewSet("a", "b"), audience.NewSet("c"), nil, audience.NewSet("a"))
	if len(g) != 3 {
		t.Fatalf("GroupsOf kept %v, want three distinct non-empty sets", g)
	}
	callers := []audience.Caller{audience.Anonymous, caller(), caller("a"), caller("b"), caller("c"), caller("a", "b"),
		caller("a", "c"), caller("b", "c"), caller("a", "b", "c"), caller("z"), caller("b", "z"),
		{Authenticated: true, All: true}, {KeyID: "x", Authenticated: true, Audiences: audience.NewSet("a")}}
	classes, err := g.Classes(64)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, cl := range classes {
		keys[cl.Key()] = true
	}
	for _, c := range callers {
		cl := g.Class(c)
		// The class's own caller sees what c sees, and is a class Classes lists.
		if sees(g, cl.Caller()) != sees(g, c) {
			t.Errorf("%+v: class %v sees otherwise", c, cl)
		}
		if !keys[cl.Key()] {
			t.Errorf("%+v: class %v is not one of Classes %v", c, cl, classes)
		}
		for _, d := range callers {
			if (g.Class(d).Key() == cl.Key()) != (sees(g, d) == sees(g, c)) {
				t.Errorf("%+v and %+v: same class %v, same view %v", c, d, g.Class(d).Key() == cl.Key(), sees(g, d) == sees(g, c))
			}
		}
	}
	// a alone and a with b meet the same groups but for {a,b}... b alone meets only {a,b}.
	if got := g.Class(caller("b", "z")).Audiences; !got.Equal(audience.NewSet("b")) {
		t.Errorf("class of {b, z} = %v, want {b}", got)
	}
	if got := g.Class(audience.Caller{Authenticated: true, All: true}).Audiences; !got.Equal(audience.NewSet("a", "b", "c")) {
		t.Errorf("class of every audience = %v, want {a, b, c}", got)
	}
	// Anonymous, authenticated, then {a} (= {a,b}: a meets both groups), {b}, {c}, {a,c}/{a,b,c}, {b,c}.
	if len(classes) != 7 {
		t.Errorf("Classes = %v, want 7", classes)
	}
}

func TestClassesAreBounded(t *testing.T) {
	var sets []audience.Set
	for i := range 6 {
		sets = append(sets, audience.NewSet(fmt.Sprintf("p%d", i)))
	}
	g := audience.GroupsOf(sets...)
	if cl, err := g.Classes(64); err != nil || len(cl) != 65 {
		t.Errorf("six independent audiences: %d classes, %v; want 65 (anonymous and 2^6)", len(cl), err)
	}
	if _, err := g.Classes(63); err == nil || !strings.Contains(err.Error(), "more than 63") {
		t.Errorf("err = %v, want one naming the bound", err)
	}
	// One entry naming many audiences is one group: two classes and anonymous.
	many := audience.GroupsOf(audience.NewSet("p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"))
	if cl, err := many.Classes(2); err != nil || len(cl) != 3 {
		t.Errorf("one group of eight: %v, %v; want 3 classes", cl, err)
	}
}

func TestClassifierAgreesWithGroups(t *testing.T) {
	g := audience.GroupsOf(audience.NewSet("a"), audience.NewSet("a", "b"), audience.NewSet("c"))
	k := audience.NewClassifier(g)
	for _, c := range []audience.Caller{audience.Anonymous, caller(), caller("a"), caller("b", "z"), caller("c"), caller("b", "c"), audience.Unrestricted} {
		if got, want := k.Class(c), g.Class(c); got.Key() != want.Key() {
			t.Errorf("%+v: Classifier %v, Groups %v", c, got, want)
		}
	}
	if got := audience.NewClassifier(nil).Class(caller("a")); got.Key() != "+" {
		t.Errorf("no groups: %v, want the class of any key", got)
	}
}
