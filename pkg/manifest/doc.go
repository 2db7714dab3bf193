// Package manifest renders skilldrop's native feed — the documents that
// skill-server-aware clients sync skills and sub-agents from — and answers
// the read-only /api/v1 JSON API, from a compiled *catalog.View. It does no
// I/O and knows nothing of HTTP: the server hands it a path, the query, the
// caller's authentication and the public base URL, and gets back a Result
// (a JSON document, artifact bytes to serve, not found, or bad request).
//
// # URL space
//
// The roots below are the URL table's (pkg/routes: Manifest, SkillFeed,
// SubagentFeed, SkillAPI, SubagentAPI and the check-updates paths), which
// reserves them against config entries; the shape beneath them is this
// package's.
//
//	/manifest.json                                   Root
//	/skills/v1/index.json                            Index        kind skill-index
//	/skills/v1/pages/{range}.json                    Page         kind skill-page
//	/skills/v1/{name}/index.json                     Identity     kind skill
//	/skills/v1/{name}/versions/{version}.json        SkillVersion kind skill-version
//	/subagents/v1/...                                the same tree: subagent-index, subagent-page,
//	                                                 subagent, SubagentVersion (kind subagent-version)
//	/api/v1/skills?q=&skip=&take=                    []Summary, ranked by package search
//	/api/v1/skills/{name}                            []VersionSummary, newest first
//	/api/v1/skills/{name}/latest                     VersionSummary
//	/api/v1/skills/{name}/{version}                  VersionSummary
//	/api/v1/skills/{name}/{version}/SKILL.md         artifact bytes (also archive.zip, archive.tar.gz,
//	                                                 whichever the version's format is)
//	/api/v1/subagents...                             the same, with agent.md for the bytes
//	POST /api/v1/skills/check-updates                CheckUpdates
//	POST /api/v1/subagents/check-updates             CheckUpdatesOf(KindSubagent, …)
//
// Every href is origin-root-absolute; every url (artifact bytes) is absolute,
// built from the base URL's scheme and host, except an entry's ExternalURL,
// which is emitted verbatim. Only what the caller may see is ever rendered:
// every entry comes from the View's accessors, which filter visibility and
// withdrawal, and a hidden or withdrawn entry is not found exactly like an
// unknown one.
//
// # Pages
//
// A collection's pages are ranges of names. A range token is either "all"
// (every name) or "<from>~<to>": names n with from <= n < to in byte order,
// an empty bound being open ("~m", "m~t", "t~"). '~' is not a name
// character, so a token is unambiguous. The page document's "range" field is
// this token, a string, because the reference client (Netclaw.SkillClient)
// decodes "range" into a string and would reject an object.
//
// The index cuts the names the caller can see into pages of about
// Feed.PageSize (default 100). A collection that fits one page has the
// single page "all", the href the reference server uses. Boundaries are the
// shortest prefixes that separate two neighbouring names, so hrefs stay
// short (/skills/v1/pages/skill-01~skill-02.json). A page request for any
// well-formed token is answered from the current catalog, so an item never
// moves to another page when something is published or withdrawn between a
// client's index fetch and its page fetches: a name is in exactly one range
// of the index the client holds, whatever happened since. Boundaries are
// computed from visible names only, so an href never hints at a hidden one.
package manifest
