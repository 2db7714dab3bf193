package artifact

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// The local forms `skilldrop validate` and `skilldrop publish` read: the
// bucket contract's forms, with the name taken from the file or folder name
// as the indexer takes it from the key.

// LocalKey reads a local file path the way the bucket contract reads keys:
// <name>.zip|.tar.gz|.tgz, <name>.md, <name>/SKILL.md or <name>/agent.md.
// A .md file is an agent.md when agent is set or the path has a
// "subagents" element. The Key field keeps path as given. An unknown
// extension is CodeUnsupportedFile; an implied name that is not valid,
// CodeInvalidKey.
func LocalKey(p string, agent bool) (Key, error) {
	clean := filepath.ToSlash(filepath.Clean(p))
	dir, base := path.Split(clean)
	agent = agent || inSubagents(path.Dir(absSlash(p)))
	k := Key{Key: p, Kind: KindSkill}
	var name string
	switch base {
	case SkillFile, AgentFile:
		folder := path.Base(strings.TrimSuffix(dir, "/"))
		if dir == "" || folder == "." || folder == ".." {
			abs, err := filepath.Abs(p)
			if err != nil {
				return k, fmt.Errorf("resolve %s: %w", p, err)
			}
			folder = filepath.Base(filepath.Dir(abs))
		}
		name, k.Type, k.Format = folder, TypeSkillMD, FormatMarkdown
		if base == AgentFile {
			k.Type = TypeAgentMD
		}
	case ConfigKey:
		return k, &Error{Code: CodeUnsupportedFile, Entry: clip(p), Msg: "the operator config is not a skill: check it with `skilldrop validate " +
			ConfigKey + "`, then upload it as it is (aws s3 cp " + ConfigKey + " s3://BUCKET/" + ConfigKey + ", or copy it into the directory)"}
	default:
		var ok bool
		if name, k.Type, k.Format, ok = cutFileName(base, agent); !ok {
			if ext := strings.ToLower(path.Ext(base)); nearConfigKey(base) || ext == ".yaml" || ext == ".yml" {
				return k, &Error{Code: CodeUnsupportedFile, Entry: clip(p), Msg: "not a skill or sub-agent file, nor the operator config: " +
					"the config is read only from a file named exactly " + ConfigKey + " (rename it, then `skilldrop validate " + ConfigKey + "`)"}
			}
			return k, &Error{Code: CodeUnsupportedFile, Entry: clip(p), Msg: "not a skill or sub-agent file: want " + localForms}
		}
	}
	return named(k, name)
}

// localForms lists what LocalKey and FolderKey accept, for messages.
const localForms = "<name>.md, <name>.zip, <name>.tar.gz, <name>.tgz, or a <name>/ folder holding " + SkillFile +
	" or " + AgentFile

// FolderKey reads a local folder the way `skilldrop publish` uploads it: a
// skill folder as the zip packed from it (TypeArchive, FormatZip), a
// sub-agent folder (agent set, or a "subagents" element in the path above
// it) as its agent.md (TypeAgentMD). The name is the folder's own, as
// skills/<name>/SKILL.md implies it in the bucket, so a frontmatter name
// that differs is a name_mismatch wherever the folder is read. "." and ".."
// are resolved to the folder they stand for. An invalid folder name is
// CodeInvalidKey.
func FolderKey(dir string, agent bool) (Key, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Key{Key: dir}, fmt.Errorf("resolve %s: %w", dir, err)
	}
	abs = filepath.ToSlash(abs)
	k := Key{Key: dir, Kind: KindSkill, Type: TypeArchive, Format: FormatZip}
	if agent || inSubagents(path.Dir(abs)) {
		k.Kind, k.Type, k.Format = KindSubagent, TypeAgentMD, FormatMarkdown
	}
	return named(k, path.Base(abs))
}

// BucketKeyOf reads a local path that lies in a directory laid out like the
// bucket (`skilldrop serve`'s, or a copy of one) as the indexer reads the
// key it has there: the part of its absolute path from the last skills/ or
// subagents/ element (from listings/<l>/ when that skills/ is a listing's).
// ok is false unless that key names a skill or sub-agent.
func BucketKeyOf(p string) (k Key, ok bool) {
	elems := strings.Split(strings.TrimPrefix(absSlash(p), "/"), "/")
	for i := len(elems) - 2; i >= 0; i-- {
		start := i
		switch {
		case elems[i] == strings.TrimSuffix(SkillsPrefix, "/"):
			if i >= 2 && elems[i-2] == strings.TrimSuffix(ListingsPrefix, "/") {
				start = i - 2
			}
		case elems[i] == strings.TrimSuffix(SubagentsPrefix, "/"):
		default:
			continue
		}
		k, err := ParseKey(strings.Join(elems[start:], "/"))
		return k, err == nil && (k.Kind == KindSkill || k.Kind == KindSubagent)
	}
	return Key{}, false
}

// nearConfigKey reports whether a file name is a likely slip for ConfigKey:
// another extension (.yml, .json), another case, "_" for "-", the singular.
func nearConfigKey(base string) bool {
	stem := strings.ToLower(base)
	if i := strings.LastIndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	stem = strings.NewReplacer("_", "-", " ", "-").Replace(stem)
	switch stem {
	case "agent-skills", "agentskills", "agent-skill", "agents-skills", "agent-skills.yaml":
		return base != ConfigKey
	}
	return false
}

// named validates the name a local path implies and sets it.
func named(k Key, name string) (Key, error) {
	what := "skill"
	if k.Type == TypeAgentMD {
		k.Kind, what = KindSubagent, "sub-agent"
	}
	if err := skillmd.ValidateName(name); err != nil {
		return k, invalidKey(k.Key, what, name, err)
	}
	k.Name = name
	return k, nil
}

// inSubagents reports whether a slash-separated directory has a
// "subagents" element: the whole path counts, not only what was typed, so
// `cd subagents && skilldrop validate x.md` reads x.md as a sub-agent too.
func inSubagents(dir string) bool {
	for elem := range strings.SplitSeq(dir, "/") {
		if elem+"/" == SubagentsPrefix {
			return true
		}
	}
	return false
}

// absSlash is p made absolute (as given when that fails), slash-separated.
func absSlash(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(filepath.Clean(p))
}
