package webcatalog

import (
	"encoding/json"
	"fmt"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// KeyVariable is the environment variable the install instructions read
// an API key from: a key never appears on a page.
const KeyVariable = "SKILLDROP_API_KEY"

// PathKeyVariable is the variable the capability URL commands read a key
// marked for path use from (README's Capability URLs): the skills CLI
// sends no header, so a key reaches the origin in the URL, /k/<key>.
const PathKeyVariable = "SKILLDROP_PATH_KEY"

// capabilityURL is the origin o's capability URL for rest ("" for the
// root), the key left to the shell: "o/k/${SKILLDROP_PATH_KEY}rest".
func capabilityURL(o, rest string) string {
	return `"` + o + routes.Capability("${"+PathKeyVariable+"}", rest) + `"`
}

// capabilityNote says where a capability URL's key comes from.
const capabilityNote = PathKeyVariable + " is a key the operator marked for path use (\"path\": true in the key " +
	"store; ask for one of its own, with the narrowest audiences and an expiry): a key in a URL ends up in shell " +
	"history and skills-lock.json."

// install lists the ways to install version ver of e from this origin:
// the skills CLI (public skills: it sends no credentials), an MCP host's
// configuration (skills MCP serves), and a download checked with sha256sum.
func (s *Site) install(e *catalog.Entry, ver *catalog.Version) []Install {
	o := origin(s.Base)
	private := !e.VisibleTo(audience.Anonymous)
	var out []Install
	if e.Kind == catalog.KindSkill {
		cli := Install{ID: "install-cli", Title: "With the skills CLI"}
		switch {
		case private:
			scope := ""
			if e.Listing != "" {
				scope = routes.ListingScope(e.Listing)
			}
			cli.Text = fmt.Sprintf("npx skills add %s --skill %s", capabilityURL(o, scope), e.Name)
			cli.Note = "The skills CLI sends no credentials, so it cannot install a skill that needs an API key from " +
				"this origin's address: it installs one from a capability URL, " + o + routes.CapabilityPrefix +
				"<key>, as above. " + capabilityNote + " Or use an MCP host or the download below."
		case e.ExternalURL != "" && e.Listing == "":
			cli.Text = fmt.Sprintf("npx skills add %s --skill %s", shellQuote(o), e.Name)
			cli.Note = "The CLI downloads it from where it is hosted and checks it against the index's digest."
		default:
			src := o
			if e.Listing != "" {
				src = o + routes.ListingScope(e.Listing)
			}
			cli.Text = fmt.Sprintf("npx skills add %s --skill %s", shellQuote(src), e.Name)
			cli.Note = "Add -a <agent> -y to install without prompts, for one agent."
		}
		out = append(out, cli)
		out = append(out, s.mcpInstall(e, ver, private))
	}
	out = append(out, s.downloadInstall(e, ver, private))
	return out
}

// mcpInstall is an MCP host's configuration for this origin, and the
// skill's URI there, or why MCP does not serve it.
func (s *Site) mcpInstall(e *catalog.Entry, ver *catalog.Version, private bool) Install {
	in := Install{ID: "install-mcp", Title: "From an MCP host"}
	if ver.MCPExcluded != "" {
		in.Note = "MCP does not serve this version: " + ver.MCPExcluded + "."
		return in
	}
	server := map[string]any{"type": "http", "url": origin(s.Base) + routes.MCP}
	if private {
		server["headers"] = map[string]string{"Authorization": "Bearer ${" + KeyVariable + "}"}
	}
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"skilldrop": server}}, "", "  ") // maps of strings: cannot fail
	in.Text = string(cfg)
	in.Note = "The skill is " + routes.SkillURI(e.Listing, e.Name, "SKILL.md") + " (skills/get, resources/read)."
	if private {
		in.Note += " Set " + KeyVariable + " to your API key where the host runs."
	}
	return in
}

// downloadInstall fetches the latest version with curl and checks its
// digest with sha256sum before anything uses it.
func (s *Site) downloadInstall(e *catalog.Entry, ver *catalog.Version, private bool) Install {
	in := Install{ID: "install-curl", Title: "Download and verify"}
	u := s.bytesURL(e, ver)
	if u == "" {
		in.Note = "This version has no download address."
		return in
	}
	file := localName(e, ver)
	auth := ""
	if private {
		auth = fmt.Sprintf(`-H "Authorization: Bearer $%s" `, KeyVariable)
	}
	in.Text = fmt.Sprintf("curl -fsSL %s-o %s %s\necho '%s  %s' | sha256sum -c -", auth, shellQuote(file), shellQuote(u), ver.Digest.Hex(), file)
	in.Note = "sha256sum prints OK only when the bytes are the ones this catalog pins."
	return in
}

// listingInstall is how to install every skill of a listing. The skills
// CLI sends no credentials: from the listing's address it gets the skills
// anyone may see, and a listing restricted to audiences (or holding no
// public skill) is not there for it at all, so the command offered is then
// the listing under a capability URL.
func (s *Site) listingInstall(name string) []Install {
	o := origin(s.Base)
	if _, public := s.View.Listing(name, audience.Anonymous); !public {
		return []Install{{
			ID: "install-listing", Title: "Install this listing with the skills CLI",
			Text: "npx skills add " + capabilityURL(o, routes.ListingScope(name)),
			Note: "This listing needs an API key and the skills CLI sends none: it installs the listing, as the key " +
				"sees it, from a capability URL (" + o + routes.CapabilityPrefix + "<key>" + routes.ListingScope(name) +
				"). " + capabilityNote + " Clients that send a key header read " + o + routes.ListingIndex(name) + ".",
		}}
	}
	return []Install{{
		ID: "install-listing", Title: "Install this listing with the skills CLI",
		Text: "npx skills add " + shellQuote(o+routes.ListingScope(name)),
		Note: "It installs the listing's public skills (add -a <agent> -y for no prompts); the ones that need an API " +
			"key install from a capability URL, " + o + routes.CapabilityPrefix + "<key>" + routes.ListingScope(name) +
			" (a key marked for path use). Clients that take an index URL read " + o + routes.ListingIndex(name) + ".",
	}}
}
