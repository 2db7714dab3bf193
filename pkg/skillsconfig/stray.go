package skillsconfig

import (
	"strings"
)

// StrayPrefixes are the key prefixes under which a bucket's stray configs
// are listed (IsStray): a config is read from the bucket's root, and a
// stray one starts as its name does, in any of the usual cases.
var StrayPrefixes = []string{"agent", "Agent", "AGENT"}

// backupSuffixes are what editors, copies and operators append to a file
// they keep beside the one in use.
var backupSuffixes = []string{".bak", ".orig", ".old", ".new", ".tmp", ".save", ".swp", ".copy", ".disabled", ".example", ".sample", "~"}

// IsStray reports whether key is a file at the bucket's root that is meant
// as the config but is not read as one: the indexer reads agent-skills.yaml
// only, exactly, so agent-skills.yml, agent-skills.json, Agent-Skills.yaml,
// agent_skills.yaml or agent-skills.yaml.bak configure nothing, and what
// they were meant to hide stays as it is.
func IsStray(key string) bool {
	if key == Key || strings.Contains(key, "/") {
		return false
	}
	name := strings.ToLower(key)
	for trimmed := true; trimmed; {
		trimmed = false
		for _, s := range backupSuffixes {
			if n, ok := strings.CutSuffix(name, s); ok && n != "" {
				name, trimmed = n, true
			}
		}
	}
	base, ext, _ := strings.Cut(name, ".")
	base = strings.NewReplacer("_", "-", " ", "-").Replace(base)
	if base != "agent-skills" && base != "agentskills" {
		return false
	}
	switch ext {
	case "", "yaml", "yml", "json", "txt", "yaml.txt":
		return true
	}
	return false
}

// StrayMessage is what status, validate and the audit say of a stray config.
func StrayMessage() string {
	return "ignored: did you mean " + Key + "? The config is read only from " + Key + " at the bucket's root, so this file " +
		"configures nothing (visibility included); rename it (an upload in one step), or delete it"
}
