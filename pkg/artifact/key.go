package artifact

import (
	"fmt"
	"path"
	"path/filepath"
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
	KindInternal Kind = "internal" // catalog/…, blobs/…: written by the indexer, never indexed
	KindBeside   Kind = "beside"   // another file in a skill folder: ignored with a warning
	KindIgnored  Kind = "ignored"  // anything else
)

// ConfigKey is the operator configuration's key.
const ConfigKey = "agent-skills.yaml"

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
	case strings.HasPrefix(key, "catalog/"), strings.HasPrefix(key, "blobs/"):
		k.Kind = KindInternal
	case strings.HasPrefix(key, "files/"):
		if len(key) > len("files/") && !strings.HasSuffix(key, "/") {
			k.Kind = KindFile
		}
	case strings.HasPrefix(key, "skills/"):
		return parseSkillKey(k, key[len("skills/"):])
	case strings.HasPrefix(key, "listings/"):
		listing, rest, ok := strings.Cut(key[len("listings/"):], "/")
		if !ok || !strings.HasPrefix(rest, "skills/") {
			return k, nil
		}
		parsed, err := parseSkillKey(k, rest[len("skills/"):])
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
	case strings.HasPrefix(key, "subagents/"):
		return parseSubagentKey(k, key[len("subagents/"):])
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
		case tail == "SKILL.md":
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
	case inFolder && tail == "agent.md":
	case !inFolder && strings.HasSuffix(rest, ".md"):
		name = strings.TrimSuffix(rest, ".md")
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
	for _, x := range []struct {
		ext string
		f   Format
	}{{".md", FormatMarkdown}, {".zip", FormatZip}, {".tar.gz", FormatTarGz}, {".tgz", FormatTarGz}} {
		if n, found := strings.CutSuffix(file, x.ext); found {
			t = TypeArchive
			if x.f == FormatMarkdown {
				t = TypeSkillMD
				if agent {
					t = TypeAgentMD
				}
			}
			return n, t, x.f, true
		}
	}
	return "", "", "", false
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

// LocalKey reads a local file path the way the bucket contract reads keys,
// for `skilldrop validate`: <name>.zip|.tar.gz|.tgz, <name>.md,
// <name>/SKILL.md or <name>/agent.md. A .md file is an agent.md when agent
// is set or the path has a "subagents" element. The Key field keeps path
// as given. An unknown extension is CodeUnsupportedFile; an implied name
// that is not valid, CodeInvalidKey.
func LocalKey(p string, agent bool) (Key, error) {
	clean := filepath.ToSlash(filepath.Clean(p))
	dir, base := path.Split(clean)
	// The whole path counts, not only what was typed: `cd subagents &&
	// skilldrop validate x.md` reads x.md as a sub-agent too.
	full := clean
	if abs, err := filepath.Abs(p); err == nil {
		full = filepath.ToSlash(abs)
	}
	for _, elem := range strings.Split(path.Dir(full), "/") {
		if elem == "subagents" {
			agent = true
		}
	}
	k := Key{Key: p, Kind: KindSkill}
	var name string
	switch base {
	case "SKILL.md", "agent.md":
		folder := path.Base(strings.TrimSuffix(dir, "/"))
		if dir == "" || folder == "." || folder == ".." {
			abs, err := filepath.Abs(p)
			if err != nil {
				return k, fmt.Errorf("resolve %s: %w", p, err)
			}
			folder = filepath.Base(filepath.Dir(abs))
		}
		name, k.Type, k.Format = folder, TypeSkillMD, FormatMarkdown
		if base == "agent.md" {
			k.Type = TypeAgentMD
		}
	default:
		var ok bool
		if name, k.Type, k.Format, ok = cutFileName(base, agent); !ok {
			return k, &Error{Code: CodeUnsupportedFile, Entry: clip(p),
				Msg: "not a skill or sub-agent file: want <name>.md, <name>.zip, <name>.tar.gz, <name>.tgz, <name>/SKILL.md or <name>/agent.md"}
		}
	}
	what := "skill"
	if k.Type == TypeAgentMD {
		k.Kind, what = KindSubagent, "sub-agent"
	}
	if err := skillmd.ValidateName(name); err != nil {
		return k, invalidKey(p, what, name, err)
	}
	k.Name = name
	return k, nil
}
