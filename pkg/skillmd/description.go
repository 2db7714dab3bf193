package skillmd

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/safetext"
)

// markup matches the start of an HTML or XML tag, comment, CDATA section or
// processing instruction: "<" followed by a letter, "/", "!" or "?".
var markup = regexp.MustCompile(`<[A-Za-z/!?]`)

// ValidateDescription checks a description, the frontmatter's or an
// agent-skills.yaml override: 1 to MaxDescriptionLen characters of plain
// text. It refuses what names refuse and a skill picker would show as
// something other than what an agent reads: invisible characters (bidi
// overrides, zero-width characters, tag characters), control characters
// (tab and line feed aside) and markup (a tag such as <img>, a comment).
func ValidateDescription(s string) error {
	if err := checkLen("description", s, 1, MaxDescriptionLen); err != nil {
		return err
	}
	n := 0
	for _, r := range s {
		n++
		switch {
		case r == utf8.RuneError:
			return fail(CodeInvalidFrontmatter, "description", "is not valid UTF-8")
		case safetext.Invisible(r):
			return fail(CodeInvalidFrontmatter, "description", "holds the invisible character %U at character %d: a skill picker would "+
				"show other text than an agent reads (bidi overrides reorder it, zero-width characters hide in it); remove it", r, n)
		case safetext.Control(r):
			return fail(CodeInvalidFrontmatter, "description", "holds the control character %U at character %d; descriptions are plain "+
				"text (tabs and line breaks aside)", r, n)
		}
	}
	if loc := markup.FindStringIndex(s); loc != nil {
		return fail(CodeInvalidFrontmatter, "description", "holds markup (%s at character %d): descriptions are plain text, and "+
			"a feed reader or catalog page could render a tag; write it without the angle bracket", tagAt(s, loc[0]), utf8.RuneCountInString(s[:loc[0]])+1)
	}
	return nil
}

// tagAt quotes the markup starting at byte i, bounded.
func tagAt(s string, i int) string {
	end := i
	for n := 0; end < len(s) && n < 24; n++ {
		_, w := utf8.DecodeRuneInString(s[end:])
		end += w
		if s[end-w] == '>' {
			break
		}
	}
	return fmt.Sprintf("%q", s[i:end])
}
