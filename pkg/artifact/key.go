package artifact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Kind is what a bucket key is under the bucket contract.
type Kind string

// The kinds of keys.
const (
	KindSkill    Kind = "skill"    // skills/<name>.md|.zip|.tar.gz|.tgz, skills/<name>/SKILL.md (also under listings/<l>/)
	KindSubagent Kind = "subagent" // subagents/<name>.md, subagents/<name>/agent.md
	KindFile     Kind = "file"     // files/…: bytes agent-skills.yaml names with path:
	KindConfig   Kind = "config"   // agent-skills.yaml
	KindInternal Kind = "internal" // catalog/…, blobs/…, rendered/…: written by the indexer, never indexed
	KindBeside   Kind = "beside"   // another file in a skill folder: ignored with a warning
	KindIgnored  Kind = "ignored"  // anything else
)

// Key is a bucket key (or local file path) read through the bucket contract.
type Key struct {
	Key  string
	Kind Kind
	// Name is the skill or sub-agent name the key implies; for KindBeside,
	// the skill whose folder holds the file. Empty for other kinds.
	Name string
	// Listing is the listing a skill key is published in ("" = top level).
	Listing string
	// Type and Format are set for KindSkill and KindSubagent.
	Type   Type
	Format Format
}

// ParseKey reads a bucket key through the bucket contract. A key in one of
// the contract's forms whose implied skill, sub-agent or listing name is
// not a valid name is an *Error with CodeInvalidKey; every other key has a
// Kind, KindIgnored included.
func ParseKey(key string) (Key, error) {
	k := Key{Key: key, Kind: KindIgnored}
	switch {
	case key == ConfigKey:
		k.Kind = KindConfig
	case strings.HasPrefix(key, CatalogPrefix), strings.HasPrefix(key, BlobsPrefix), strings.HasPrefix(key, RenderedPrefix):
		k.Kind = KindInternal
	case strings.HasPrefix(key, FilesPrefix):
		if len(key) > len(FilesPrefix) && !strings.HasSuffix(key, "/") {
			k.Kind = KindFile
		}
	case strings.HasPrefix(key, SkillsPrefix):
		return parseSkillKey(k, key[len(SkillsPrefix):])
	case strings.HasPrefix(key, ListingsPrefix):
		listing, rest, ok := strings.Cut(key[len(ListingsPrefix):], "/")
		if !ok || !strings.HasPrefix(rest, SkillsPrefix) {
			return k, nil
		}
		parsed, err := parseSkillKey(k, rest[len(SkillsPrefix):])
		if err != nil || parsed.Kind == KindIgnored {
			return k, err
		}
		if !validName(listing) {
			if parsed.Kind == KindBeside {
				return k, nil
			}
			return k, invalidKey(key, "listing", listing, skillmd.ValidateName(listing))
		}
		parsed.Listing = listing
		return parsed, nil
	case strings.HasPrefix(key, SubagentsPrefix):
		return parseSubagentKey(k, key[len(SubagentsPrefix):])
	}
	return k, nil
}

// parseSkillKey reads what follows "skills/".
func parseSkillKey(k Key, rest string) (Key, error) {
	name, tail, inFolder := strings.Cut(rest, "/")
	if !inFolder {
		var ok bool
		if name, k.Type, k.Format, ok = cutFileName(rest, false); !ok {
			return k, nil
		}
	} else {
		switch {
		case tail == SkillFile:
			k.Type, k.Format = TypeSkillMD, FormatMarkdown
		case tail == "" || name == "":
			return k, nil // a folder marker, or "skills//…"
		default:
			if !validName(name) {
				return k, nil // beside nothing that could be a skill
			}
			k.Kind, k.Name = KindBeside, name
			return k, nil
		}
	}
	if err := skillmd.ValidateName(name); err != nil {
		return Key{Key: k.Key, Kind: KindIgnored}, invalidKey(k.Key, "skill", name, err)
	}
	k.Kind, k.Name = KindSkill, name
	return k, nil
}

// parseSubagentKey reads what follows "subagents/".
func parseSubagentKey(k Key, rest string) (Key, error) {
	name, tail, inFolder := strings.Cut(rest, "/")
	switch {
	case inFolder && tail == AgentFile:
	case !inFolder && strings.HasSuffix(rest, FormatMarkdown.Ext()):
		name = strings.TrimSuffix(rest, FormatMarkdown.Ext())
	default:
		return k, nil
	}
	if err := skillmd.ValidateName(name); err != nil {
		return k, invalidKey(k.Key, "sub-agent", name, err)
	}
	k.Kind, k.Name, k.Type, k.Format = KindSubagent, name, TypeAgentMD, FormatMarkdown
	return k, nil
}

// cutFileName splits "<name>.<ext>" for the extensions the contract knows;
// a .md file is an agent.md when agent is set.
func cutFileName(file string, agent bool) (name string, t Type, f Format, ok bool) {
	if name, f, ok = CutExt(file); !ok {
		return "", "", "", false
	}
	switch {
	case f != FormatMarkdown:
		t = TypeArchive
	case agent:
		t = TypeAgentMD
	default:
		t = TypeSkillMD
	}
	return name, t, f, true
}

func validName(name string) bool { return skillmd.ValidateName(name) == nil }

func invalidKey(key, what, name string, err error) *Error {
	msg := err.Error()
	if se, ok := skillmd.AsError(err); ok {
		msg = se.Msg
	}
	if !strings.Contains(msg, strconv.Quote(name)) {
		msg = strconv.Quote(clip(name)) + " " + msg
	}
	return &Error{Code: CodeInvalidKey, Entry: clip(key), Msg: fmt.Sprintf("the %s name it implies is invalid: %s", what, msg), Err: err}
}
