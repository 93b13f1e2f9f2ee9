package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
)

// ErrUsage is what Run returns (alone, or wrapping the reason) for a
// command line that names nothing to do: a group without its command, an
// unknown command or flag, arguments a command does not take. Run has
// printed why, and the command's help; main exits 2 without another
// message. (Help asked for is flag.ErrHelp, and exits 0.)
var ErrUsage = errors.New("usage")

// UsageError makes err, a verb's complaint about its arguments, a usage
// error: Run prints it with the command's help and returns ErrUsage.
func UsageError(err error) error { return &usageError{err} }

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// FlagSet is a standard library flag set that an ff.Command parses: flags
// keep the standard library's syntax (-name and --name alike, -name=value,
// booleans without a value), and in a command without subcommands they may
// come before, between or after its arguments ("--" ends them). A group's
// flag set stops at its first argument, the name of its command.
type FlagSet struct {
	*flag.FlagSet
	group  bool
	parsed bool
	args   []string
}

var _ ff.Flags = (*FlagSet)(nil)

// NewFlagSet returns the flag set of a command without subcommands.
func NewFlagSet(name string) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Run prints errors and help; the flag package prints nothing.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &FlagSet{FlagSet: fs}
}

// Group returns a command that only selects one of its commands.
func Group(name, usage, shortHelp string, commands ...*ff.Command) *ff.Command {
	fs := NewFlagSet(name)
	fs.group = true
	return &ff.Command{Name: name, Usage: usage, ShortHelp: shortHelp, Flags: fs, Subcommands: commands,
		LongHelp: fmt.Sprintf("Run %q for a command's flags.", strings.TrimSuffix(usage, " [flags]")+" -h")}
}

// GetName implements ff.Flags.
func (f *FlagSet) GetName() string { return f.Name() }

// Parse implements ff.Flags. A flag it cannot parse is a usage error.
func (f *FlagSet) Parse(args []string) error {
	var err error
	if f.group {
		err = f.FlagSet.Parse(args)
		f.args = f.FlagSet.Args()
	} else {
		f.args, err = ParseArgs(f.FlagSet, args)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return UsageError(err)
	}
	f.parsed = err == nil
	return err
}

// ParseArgs parses flags that may come before, between or after positional
// arguments, and returns the positional ones. "--" ends the flags.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// IsParsed implements ff.Flags.
func (f *FlagSet) IsParsed() bool { return f.parsed }

// GetArgs implements ff.Flags: the positional arguments.
func (f *FlagSet) GetArgs() []string { return f.args }

// WalkFlags implements ff.Flags.
func (f *FlagSet) WalkFlags(fn func(ff.Flag) error) error {
	var err error
	f.VisitAll(func(fl *flag.Flag) {
		if err == nil {
			err = fn(stdFlag{fl, f})
		}
	})
	return err
}

// GetFlag implements ff.Flags.
func (f *FlagSet) GetFlag(name string) (ff.Flag, bool) {
	fl := f.Lookup(name)
	if fl == nil {
		return nil, false
	}
	return stdFlag{fl, f}, true
}

// stdFlag is a standard library flag as ff (and so its help) sees it: a
// long name only, its placeholder and usage as flag.UnquoteUsage splits
// them, and no default shown when it is the zero value.
type stdFlag struct {
	*flag.Flag
	set *FlagSet
}

func (s stdFlag) GetFlags() ff.Flags          { return s.set }
func (s stdFlag) GetShortName() (rune, bool)  { return 0, false }
func (s stdFlag) GetLongName() (string, bool) { return s.Name, true }
func (s stdFlag) SetValue(v string) error     { return s.set.Set(s.Name, v) }
func (s stdFlag) GetValue() string            { return s.Value.String() }
func (s stdFlag) GetPlaceholder() string {
	p, _ := flag.UnquoteUsage(s.Flag)
	return strings.ToUpper(p)
}
func (s stdFlag) GetUsage() string { _, u := flag.UnquoteUsage(s.Flag); return u }
func (s stdFlag) IsSet() (set bool) {
	s.set.Visit(func(f *flag.Flag) { set = set || f == s.Flag })
	return set
}

func (s stdFlag) GetDefault() string {
	switch s.DefValue {
	case "", "0", "false", "0s", "[]":
		return ""
	}
	return s.DefValue
}

// Run parses args for cmd and runs the command they select, whose help
// (ffhelp's, from the commands' definitions) it prints to stderr when asked
// for, with flag.ErrHelp, or with the reason for a usage error, with
// ErrUsage. Other errors are the command's, for the caller to print.
func Run(ctx context.Context, cmd *ff.Command, args []string, stderr io.Writer) error {
	err := cmd.Parse(args)
	if err == nil {
		err = cmd.Run(ctx)
	}
	selected := cmd.GetSelected()
	help := func() { ffhelp.Command(selected).WriteTo(stderr) }
	var usage *usageError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		help()
		return flag.ErrHelp
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "%s: %v\n\n", commandPath(selected), usage.err)
		help()
		return fmt.Errorf("%w: %w", ErrUsage, usage.err)
	case errors.Is(err, ff.ErrNoExec):
		// A group: given no command, help, or one it does not have.
		switch rest := selected.Flags.GetArgs(); {
		case len(rest) > 0 && rest[0] == "help":
			help()
			return flag.ErrHelp
		case len(rest) > 0:
			fmt.Fprintf(stderr, "%s: unknown command %q\n\n", commandPath(selected), rest[0])
		}
	default:
		return err
	}
	help()
	return ErrUsage
}

// commandPath names cmd as it was called, e.g. "fluxgate table create".
func commandPath(cmd *ff.Command) string {
	path := cmd.Name
	for p := cmd.GetParent(); p != nil; p = p.GetParent() {
		path = p.Name + " " + path
	}
	return path
}

// Alias returns cmd under another name, which its group's help lists as
// the same command.
func Alias(name string, cmd *ff.Command) *ff.Command {
	alias := *cmd
	alias.Name, alias.ShortHelp = name, "the same as "+cmd.Name
	return &alias
}
