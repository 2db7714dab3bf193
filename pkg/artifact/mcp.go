package artifact

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/responselimit"
)

// The per-skill limits of MCP's Skills extension (SEP-2640): what every
// conforming host accepts.
const (
	MCPMaxFiles      = 512
	MCPMaxTotalBytes = 16 << 20
)

// SkillMediaType is the media type of a SKILL.md (a skill-md skill is that
// one file, SkillFile).
const SkillMediaType = "text/markdown"

// MCPWarning is the status-document warning for a skill that is not served
// over MCP for the reason given.
func MCPWarning(reason string) string {
	return "not served over MCP: " + reason + "; it stays in the RFC index and the native feed"
}

// ReadAsText reports whether resources/read answers a file as text: a
// textual media type and content that is valid UTF-8 (a JSON string cannot
// carry other bytes unchanged). Anything else, and an empty file (whose
// empty text the MCP SDK would leave out), is a base64 blob.
func ReadAsText(mediaType string, data []byte) bool {
	return len(data) > 0 && textual(mediaType) && utf8.Valid(data)
}

func textual(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/jsonl", "application/xml", "application/yaml", "application/toml",
		"application/javascript", "application/sql", "application/graphql":
		return true
	}
	return false
}

// readAnswerOverhead bounds what a resources/read answer adds to one
// file's content and path in the function's response: the JSON-RPC
// envelope with a request id of up to 1 KiB, the result's other fields
// (mimeType, resultType, ttlMs, cacheScope, the server's name and version
// in _meta), a skill:// authority (a listing and a skill name, at most 140
// bytes), the response headers and the event's own framing.
const readAnswerOverhead = 8 << 10

// MCPExclusion says why a skill with these files and frontmatter is not
// served over MCP, or "" when it is: its frontmatter must have a JSON form
// (frontmatterIssue says why not), it must be within the extension's
// limits, and every file's resources/read answer must fit the function's
// response (responselimit.MaxEncodedBody).
func MCPExclusion(files []archive.File, frontmatter json.RawMessage, frontmatterIssue string) string {
	return mcpExclusion(files, frontmatter, frontmatterIssue, responselimit.MaxEncodedBody)
}

func mcpExclusion(files []archive.File, frontmatter json.RawMessage, frontmatterIssue string, maxAnswer int64) string {
	if frontmatter == nil {
		return "its frontmatter has no faithful JSON form (" + frontmatterIssue + ")"
	}
	if len(files) > MCPMaxFiles {
		return fmt.Sprintf("it has %d files, more than the %d the MCP Skills extension allows", len(files), MCPMaxFiles)
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if total > MCPMaxTotalBytes {
		return fmt.Sprintf("its files hold %d bytes, more than the %d the MCP Skills extension allows", total, MCPMaxTotalBytes)
	}
	for _, f := range files {
		if n := ReadAnswerBytes(f.Path, f.MediaType, f.Data); n > maxAnswer {
			return fmt.Sprintf("%s: its resources/read answer would take %d bytes of the function's response, more than the %d it can carry", clip(f.Path), n, maxAnswer)
		}
	}
	return ""
}

// ReadAnswerBytes bounds the bytes a resources/read answer for one file
// takes in the function's response, encoded as the server encodes it: the
// MCP SDK writes text as a JSON string with HTML escaping (its
// ReadResourceResult uses json.Marshal) and anything else as base64; the
// Lambda adapter then carries that JSON as a JSON string again, which it
// counts with responselimit.JSONStringLen. Both levels are measured per byte
// with those encoders, so the bound is exact for the content and the path,
// with readAnswerOverhead for the rest.
func ReadAnswerBytes(path, mediaType string, data []byte) int64 {
	n := int64(readAnswerOverhead) + textCost([]byte(path)) + textCost([]byte(mediaType))
	if ReadAsText(mediaType, data) {
		return n + textCost(data)
	}
	return n + int64((len(data)+2)/3*4) // base64: no byte of it is escaped at either level
}

// textCost is what UTF-8 text takes in the response: each byte as JSON
// escapes it, then the escape as the adapter escapes it again.
func textCost(s []byte) int64 {
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < utf8.RuneSelf:
			n += int64(asciiCost[c])
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			n += int64(separatorCost) // U+2028 and U+2029, which JSON encoders escape
			i += 2
		default:
			n++
		}
	}
	return n
}

// asciiCost and separatorCost come from the encoders themselves rather
// than from a restatement of their rules.
var (
	asciiCost     [utf8.RuneSelf]int
	separatorCost = twoLevelCost("\u2028")
)

func init() {
	for c := range asciiCost {
		asciiCost[c] = twoLevelCost(string(rune(c)))
	}
}

func twoLevelCost(s string) int {
	inner, _ := json.Marshal(s) // a string: cannot fail
	return responselimit.JSONStringLen(string(inner[1:len(inner)-1])) - 2
}
