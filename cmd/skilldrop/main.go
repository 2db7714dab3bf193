// Command skilldrop is the operator's CLI: it validates skills locally with
// the indexer's rules and (as the other subcommands land) serves a bucket
// directory, publishes, re-indexes and reports status.
//
// main only dispatches: each subcommand lives in its own file, registers
// itself from an init function, and keeps its logic in pkg/.
package main

import (
	"context"
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
)

// Exit statuses shared by every subcommand.
const (
	exitOK      = 0 // everything succeeded
	exitFailure = 1 // the command ran and something was rejected or failed
	exitUsage   = 2 // the command line was wrong
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the usage text
	args    string // synopsis of the arguments, e.g. "[flags] FILE..."
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
	}
	c, ok := commands[args[0]]
	if !ok {
		printf(stderr, "skilldrop: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// usage lists the registered commands.
func usage(w io.Writer) {
	printf(w, "usage: skilldrop <command> [arguments]\n\ncommands:\n")
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
	printf(w, "\nRun 'skilldrop help <command>' for a command's arguments and flags.\n")
}

// flagSet returns a flag set for c that prints c's usage to stderr.
func (c *command) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("skilldrop "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		printf(stderr, "usage: skilldrop %s %s\n\n%s.\n", c.name, c.args, c.summary)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			printf(stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
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
		printf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), operands[0])
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
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

// printable quotes an operand echoed into line-oriented output when it
// holds spaces or control characters, so every line still splits on spaces.
func printable(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Sprintf("%q", s)
	}
	return s
}
