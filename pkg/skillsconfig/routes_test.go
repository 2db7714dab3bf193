package skillsconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

// TestURLsTakeNoRoute walks the URL table: a config entry whose url is a
// path of any route is accepted exactly where the server answers artifacts
// by their path and config may put one (the top-level area for top-level
// entries, the listing's own prefix for a listing's), and refused with
// invalid_config everywhere else. A route added to the table is refused
// here without another line of code; one this check stopped asking about
// would fail.
func TestURLsTakeNoRoute(t *testing.T) {
	const listing = "partner-a"
	for _, r := range routes.All() {
		for _, below := range []string{"x.md", "skills/x/SKILL.md"} {
			p := r.Example(listing, below)
			for _, in := range []string{"", listing} {
				if in != "" && !strings.HasPrefix(p, routes.ListingPrefix(in)) {
					continue // a listing's URLs resolve below its prefix: no spelling reaches p
				}
				doc := "skills:\n  - name: a\n    url: " + p + "\n"
				field := "skills[0].url"
				if in != "" {
					doc = "listings:\n  " + in + ":\n    skills:\n      - name: a\n        url: " + p + "\n"
					field = "listings." + in + ".skills[0].url"
				}
				free := routes.Reserved(p, in) == ""
				c, err := Parse([]byte(v1(doc)))
				switch {
				case free && err != nil:
					t.Errorf("%s: url %s (listing %q) refused: %v", r.Pattern, p, in, err)
				case free && entryPath(c, in) != p:
					t.Errorf("%s: url %s (listing %q) served at %q", r.Pattern, p, in, entryPath(c, in))
				case !free:
					var ce *Error
					if !errors.As(err, &ce) || ce.Field != field {
						t.Errorf("%s: url %s (listing %q) = %v, want refused at %s", r.Pattern, p, in, err, field)
					}
				}
			}
		}
	}
}

// entryPath is the served path of the one entry of a test document.
func entryPath(c *Config, listing string) string {
	if listing == "" {
		return c.Skills[0].Path
	}
	return c.Listings[0].Entries[0].Path
}

// TestRefusalNamesTheRoute: the operator learns which route a URL takes.
func TestRefusalNamesTheRoute(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"/manifest.json", "the native manifest"},
		{"/mcp", "the MCP endpoint"},
		{"listings/partner-a/skills/x.md", "/listings/partner-a/skills/x.md collides with the listings' own paths"},
		{"/api/v1/skills/check-updates", "the check-updates route"},
		{"/skills/x.md.sigstore.json", "the artifacts' bundles"},
	} {
		_, err := Parse([]byte(v1("skills:\n  - name: a\n    url: " + tc.url + "\n")))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("url %s: %v, want a message naming %q", tc.url, err, tc.want)
		}
	}
}
