package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

func init() {
	register(&command{
		name:    "init",
		summary: "create a skill folder (or, with --subagent, a sub-agent folder) that validates as it is",
		args:    "[--subagent] NAME-or-FOLDER",
		about: `Creates the folder (its last element is the name: lowercase letters, digits and single hyphens) holding a
SKILL.md (agent.md with --subagent) with the frontmatter every skill needs (name, description, a version in
metadata) and a body to replace; validate warns of the placeholder description until it is changed. It never overwrites: an existing SKILL.md or agent.md there is an error.
Then edit the description (what a skill picker shows) and the steps, and:
  skilldrop validate FOLDER
  skilldrop publish --bucket BUCKET FOLDER

exit status: 0 created, 1 the file exists or cannot be written, 2 on usage errors (no name, an invalid name)`,
		run: runInit,
	})
}

// The documents init writes (with the name, the placeholder description
// and the name); each validates as it is, with a warning until its
// description is changed (skillmd.PlaceholderWarning).
const (
	initSkill = `---
name: %s
description: %s
metadata:
  version: "0.1.0"
---
# %s

The steps an agent follows, in order. Files beside this one (scripts/, references/) are part of the skill:
name them here with their paths.
`
	initAgent = `---
name: %s
description: %s
version: "0.1.0"
---
You are %s. Say here how this sub-agent works and what it returns.
`
)

func runInit(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["init"].flagSet(stderr)
	subagent := fs.Bool("subagent", false, "create a sub-agent folder (agent.md) instead of a skill")
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(operands) != 1 {
		printf(stderr, "skilldrop init: want one NAME-or-FOLDER, got %d\n", len(operands))
		fs.Usage()
		return exitUsage
	}
	dir := filepath.Clean(operands[0])
	name := filepath.Base(dir)
	if err := skillmd.ValidateName(name); err != nil {
		printf(stderr, "skilldrop init: %s: the folder's name is the skill's: %s\n", printable(name), oneLine(nameMessage(err)))
		return exitUsage
	}
	file, doc := artifact.SkillFile, fmt.Sprintf(initSkill, name, skillmd.PlaceholderSkillDescription, name)
	if *subagent {
		file, doc = artifact.AgentFile, fmt.Sprintf(initAgent, name, skillmd.PlaceholderSubagentDescription, name)
	}
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		printf(stderr, "skilldrop init: %v\n", err)
		return exitFailure
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		printf(stderr, "skilldrop init: %s exists; init never overwrites\n", printable(p))
		return exitFailure
	}
	if err != nil {
		printf(stderr, "skilldrop init: %v\n", err)
		return exitFailure
	}
	if _, err := io.WriteString(f, doc); err != nil {
		_ = f.Close()
		printf(stderr, "skilldrop init: write %s: %v\n", printable(p), err)
		return exitFailure
	}
	if err := f.Close(); err != nil {
		printf(stderr, "skilldrop init: write %s: %v\n", printable(p), err)
		return exitFailure
	}
	out := &resultWriter{w: stdout}
	out.printf("created %s\n", printable(p))
	printf(stderr, "next: edit its description and body, then `skilldrop validate %s` and `skilldrop publish --bucket BUCKET %s`\n",
		printable(dir), printable(dir))
	return finish(out, stderr, exitOK)
}

// nameMessage is a name error's message without its code and field.
func nameMessage(err error) string {
	if e, ok := skillmd.AsError(err); ok {
		return e.Msg
	}
	return err.Error()
}
