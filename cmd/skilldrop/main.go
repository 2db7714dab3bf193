// Command skilldrop is the operator's CLI: it validates skills and the
// operator config locally with the indexer's rules, publishes, re-indexes
// and reports the status of a bucket or a local directory laid out like
// one, and serves such a directory with the Lambda's handler.
//
// main only dispatches: each subcommand lives in its own file, registers
// itself from an init function, and keeps its logic in pkg/.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/safetext"
)

// Exit statuses shared by every subcommand.
const (
	exitOK      = 0 // everything succeeded
	exitFailure = 1 // the command ran and something was rejected or failed
	exitUsage   = 2 // the command line was wrong: a bad flag, a missing path, a target that cannot be reached as given
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	args    string // synopsis of the arguments, as the README's table writes it
	// about is the help text after the synopsis: what the command does
	// beyond the summary, what it writes, and its exit statuses.
	about string
	// hidden flags are accepted and never shown (compatibility spellings
	// that have no effect).
	hidden []string
	// run executes the command with its arguments (the command name
	// removed) and returns the exit status.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

// register adds a subcommand; it is called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("skilldrop: command " + c.name + " registered twice")
	}
	commands[c.name] = c
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the command to stop; the next one ends
		// the process, as if none were caught.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, []string{"-h"}, stdout, stdout)
			}
			printf(stderr, "skilldrop: unknown command %q\n\n", args[1])
			usage(stderr)
			return exitUsage
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		printf(stderr, "skilldrop: unknown command %s\n\n", safetext.Token(args[0]))
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// usage lists the registered commands.
func usage(w io.Writer) {
	printf(w, "usage: skilldrop <command> [arguments]\n       skilldrop --version\n\ncommands:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		printf(tw, "  %s\t%s\n", name, commands[name].summary)
	}
	_ = tw.Flush()
	printf(w, "\nRun 'skilldrop help <command>' for a command's arguments, flags and exit statuses.\n")
}

// flagSet returns a flag set for c that prints c's help to stderr.
func (c *command) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("skilldrop "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { c.help(fs, stderr) }
	return fs
}

// help writes the synopsis, the summary, the flags (each with its default
// once, hidden ones left out) and the about text.
func (c *command) help(fs *flag.FlagSet, w io.Writer) {
	printf(w, "usage: %s\n\n%s.\n", c.synopsis(), upperFirst(c.summary))
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(c.hidden, f.Name) {
			return
		}
		kind, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		if !isZeroDefault(f) {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, line+"\n        "+strings.ReplaceAll(text, "\n", "\n        "))
	})
	if len(lines) > 0 {
		printf(w, "\nflags:\n%s\n", strings.Join(lines, "\n"))
	}
	if c.about != "" {
		printf(w, "\n%s\n", strings.TrimSpace(c.about))
	}
}

// synopsis is the command line as the README's table writes it.
func (c *command) synopsis() string { return strings.TrimSpace("skilldrop " + c.name + " " + c.args) }

func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false":
		return true
	}
	return false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// parseArgs parses flags anywhere among the operands (flag stops at the
// first operand; people write "validate a.zip --subagent"), up to a "--"
// after which everything is an operand. It returns the operands, or the
// exit status to end with: exitOK for -h, exitUsage for a bad flag (whose
// message flag has printed).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var operands []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return nil, exitOK, false
		case err != nil:
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, 0, true
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), 0, true
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// parseFlags is parseArgs for a command that takes no operands: an operand
// is a usage error, reported with the command's usage.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code, false
	}
	if len(operands) > 0 {
		printf(fs.Output(), "%s: unexpected argument %s\n", fs.Name(), safetext.Token(operands[0]))
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
}

// logLevelFlag adds --log-level to a command that logs: JSON lines on
// stderr at or above the level (audit events always), defaulting to
// $SKILLDROP_LOG_LEVEL, else fallback.
func logLevelFlag(fs *flag.FlagSet, fallback string) func() (string, error) {
	level := fs.String("log-level", "", "DEBUG, INFO, WARN or ERROR: the JSON log lines on stderr (audit events always)\n(default: $"+obs.EnvLogLevel+", else "+fallback+")")
	return func() (string, error) {
		v, from := *level, "--log-level"
		if v == "" {
			v, from = os.Getenv(obs.EnvLogLevel), "$"+obs.EnvLogLevel
		}
		if v == "" {
			v = fallback
		}
		if _, err := obs.ParseLevel(v); err != nil {
			return "", fmt.Errorf("%s: %w", from, err)
		}
		return v, nil
	}
}

// printf writes a diagnostic; a failed write to stderr has nowhere better
// to be reported.
func printf(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

// resultWriter writes result lines and remembers the first failed write,
// which must fail the command: a caller reading the lines would otherwise
// take a truncated list for a complete one.
type resultWriter struct {
	w   io.Writer
	err error
}

func (r *resultWriter) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

// json writes v as one indented JSON document in which every character
// that could act on a terminal is a \uXXXX escape (the values are exact).
func (r *resultWriter) json(v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		r.err = err
		return
	}
	r.printf("%s\n", safetext.JSON(b))
}

// finish returns status, or a failure when the results could not be written.
func finish(out *resultWriter, stderr io.Writer, status int) int {
	if out.err != nil {
		printf(stderr, "skilldrop: write results: %v\n", out.err)
		return exitFailure
	}
	return status
}

// printable renders a key, name or path echoed into line-oriented output:
// as it is when it is one plain word, else quoted with every character
// that could act on a terminal escaped, so every line still splits on
// spaces and shows what the value really is.
func printable(s string) string { return safetext.Token(s) }

// oneLine renders a message on its output line: line breaks become spaces
// and every character that could act on a terminal is escaped.
func oneLine(s string) string { return safetext.Text(lineBreaks.Replace(s)) }

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// warnLeftOut is the one wording of the dot-file warning: what a folder
// held that is never published.
func warnLeftOut(stderr io.Writer, path string, names []string) {
	if len(names) == 0 {
		return
	}
	printf(stderr, "warning %s: %s\n", printable(path), leftOutMessage(names))
}

func leftOutMessage(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = printable(n)
	}
	return "left out of the archive (dot-files are never published; they often hold credentials): " + strings.Join(quoted, ", ")
}

// runVersion prints the build's version.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["version"].flagSet(stderr)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	out := &resultWriter{w: stdout}
	out.printf("%s %s\n", buildinfo.Name, buildinfo.Version())
	return finish(out, stderr, exitOK)
}

func init() {
	register(&command{
		name:    "version",
		summary: "print the build's version (also: skilldrop --version)",
		args:    "",
		about:   "The same version is the MCP server version of `skilldrop serve` and the API function, and is sent in the User-Agent of every AWS request.\n\nexit status: 0",
		run:     runVersion,
	})
}
