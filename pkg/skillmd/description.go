package skillmd

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/safetext"
)

// markup matches the start of an HTML or XML tag, comment, CDATA section or
// processing instruction: "<" followed by a letter, "/", "!" or "?". An
// autolink (<https://…>, <javascript:…>) starts as a tag does.
var markup = regexp.MustCompile(`<[A-Za-z/!?]`)

// markdownLink matches what a markdown renderer turns into a link or an
// image: an inline link or image ("[text](target)", "![alt](src)": a
// closing bracket followed by an opening parenthesis) and a link reference
// definition ("[label]: target" at the start of a line).
var markdownLink = regexp.MustCompile(`(?m)\]\(|^[ \t]{0,3}\[[^\]\n]+\]:`)

// scriptURL matches a URL whose scheme runs or embeds content rather than
// pointing at a page: javascript:, vbscript: and data: (a data: URL is a
// document or an image in itself), written as a URL (no space after the
// colon; "JavaScript: linting" is prose). Case is ignored, as browsers do.
var scriptURL = regexp.MustCompile(`(?i)\b(?:javascript|vbscript|data):[^\s]`)

// reference matches what may be an HTML character reference: "&#8238;",
// "&#x202e;", "&lt;", and the legacy names an HTML parser decodes without
// the semicolon ("&copy"). Whether it is one is html.UnescapeString's call.
var reference = regexp.MustCompile(`&(?:#[xX]?[0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);?`)

// The descriptions `skilldrop init` writes, which say what to write
// instead: valid, so that a new folder validates as it is, but warned of
// (PlaceholderWarning) until they are changed.
const (
	PlaceholderSkillDescription    = "Say what this skill does and when an agent should use it, in a sentence or two; a skill picker shows this."
	PlaceholderSubagentDescription = "Say what this sub-agent does and when to hand a task to it."
)

// PlaceholderWarning is the warning for a description that is still
// init's placeholder, or "".
func PlaceholderWarning(description string) string {
	if d := strings.TrimSpace(description); d != PlaceholderSkillDescription && d != PlaceholderSubagentDescription {
		return ""
	}
	return "the description is still skilldrop init's placeholder: say what it does and when an agent should use it " +
		"(what a skill picker shows and an agent chooses by)"
}

// ValidateDescription checks a description, the frontmatter's or an
// agent-skills.yaml override: 1 to MaxDescriptionLen characters of plain
// text, not only whitespace. It refuses what names refuse and a skill picker
// would show as something other than what an agent reads: invisible
// characters (bidi overrides, zero-width characters, tag characters, the
// Braille blank, variation selectors but one presentation selector after
// its base: safetext.HiddenAt), control characters
// (tab and line feed aside), markup (a tag such as <img>, a comment), a
// markdown link or image (which a renderer follows or loads: a tracking
// pixel, a javascript: link) and a javascript:, vbscript: or data: URL. An
// HTML page decodes character references, so they are judged decoded as
// well ("&#x202e;" is U+202E, "&lt;script&gt;" is a tag), and refused even
// when what they spell is harmless: a page would show other text than an
// agent reads.
func ValidateDescription(s string) error {
	if err := checkLen("description", s, 1, MaxDescriptionLen); err != nil {
		return err
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return fail(CodeInvalidFrontmatter, "description", "is only whitespace: say what the skill does and when an agent should use it")
	}
	if err := plainText(s, ""); err != nil {
		return err
	}
	loc := firstReference(s)
	if loc == nil {
		return nil
	}
	if err := plainText(decodeReferences(s), " once its character references are decoded, as an HTML page decodes them"); err != nil {
		return err
	}
	ref := s[loc[0]:loc[1]]
	return fail(CodeInvalidFrontmatter, "description", "holds the character reference %q at character %d, which an HTML page shows as %q "+
		"while an agent reads it as written: descriptions are plain text; write the character itself (an ampersand followed by "+
		"a space is fine)", ref, at(s, loc[0]), html.UnescapeString(ref))
}

// plainText applies ValidateDescription's rules, but the one about
// character references, to s; how says what s is ("": the text as written).
func plainText(s, how string) error {
	n := 0
	hidden, _ := safetext.HiddenAt(s)
	for i, r := range s {
		n++
		switch {
		case r == utf8.RuneError:
			return fail(CodeInvalidFrontmatter, "description", "is not valid UTF-8%s", how)
		case i == hidden && safetext.VariationSelector(r):
			return fail(CodeInvalidFrontmatter, "description", "holds the variation selector %U at character %d%s: selectors show as "+
				"nothing, and a run of them after a character encodes hidden text (one byte each); only one U+FE0E or U+FE0F "+
				"directly after an emoji or symbol is allowed; remove it", r, n, how)
		case i == hidden:
			return fail(CodeInvalidFrontmatter, "description", "holds the invisible character %U at character %d%s: a skill picker would "+
				"show other text than an agent reads (bidi overrides reorder it, zero-width characters and blanks hide in it); remove it", r, n, how)
		case safetext.Control(r):
			return fail(CodeInvalidFrontmatter, "description", "holds the control character %U at character %d%s; descriptions are plain "+
				"text (tabs and line breaks aside)", r, n, how)
		}
	}
	if loc := markup.FindStringIndex(s); loc != nil {
		return fail(CodeInvalidFrontmatter, "description", "holds markup (%s at character %d%s): descriptions are plain text, and "+
			"a feed reader or catalog page could render a tag; write it without the angle bracket", quoteAt(s, loc[0], '>'), at(s, loc[0]), how)
	}
	if loc := markdownLink.FindStringIndex(s); loc != nil {
		i := linkStart(s, loc[0])
		return fail(CodeInvalidFrontmatter, "description", "holds a markdown link or image (%s at character %d%s): descriptions are plain "+
			"text, and a renderer would follow or load it (a tracking image, a javascript: link); write the URL as text, without the brackets",
			quoteAt(s, i, ')'), at(s, i), how)
	}
	if loc := scriptURL.FindStringIndex(s); loc != nil {
		return fail(CodeInvalidFrontmatter, "description", "holds a script or data URL (%s at character %d%s): a page or client that "+
			"links it would run or load its content; remove it", quoteAt(s, loc[0], ' '), at(s, loc[0]), how)
	}
	return nil
}

// firstReference returns the location of the first character reference in
// s that an HTML page decodes, or nil.
func firstReference(s string) []int {
	for _, loc := range reference.FindAllStringIndex(s, -1) {
		if r := s[loc[0]:loc[1]]; html.UnescapeString(r) != r {
			return loc
		}
	}
	return nil
}

// decodeReferences decodes s's character references until none is left
// (bounded): "&amp;#x202e;" is "&#x202e;" to one decoder and U+202E to a
// pipeline that decodes twice.
func decodeReferences(s string) string {
	for range 4 {
		d := html.UnescapeString(s)
		if d == s {
			break
		}
		s = d
	}
	return s
}

// linkStart is where the link ending in "](" at byte i starts: its "[" (or
// "![") when it is near, else i.
func linkStart(s string, i int) int {
	j := strings.LastIndexByte(s[:i], '[')
	if j < 0 || i-j > 40 {
		return i
	}
	if j > 0 && s[j-1] == '!' {
		j--
	}
	return j
}

// at is the character position (from 1) of byte i of s.
func at(s string, i int) int { return utf8.RuneCountInString(s[:i]) + 1 }

// quoteAt quotes s from byte i up to and including the byte end, bounded.
func quoteAt(s string, i int, end byte) string {
	j := i
	for n := 0; j < len(s) && n < 48; n++ {
		_, w := utf8.DecodeRuneInString(s[j:])
		j += w
		if s[j-w] == end {
			break
		}
	}
	return fmt.Sprintf("%q", s[i:j])
}
