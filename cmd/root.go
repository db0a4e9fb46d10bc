// Package cmd is the geas command tree (cobra). Main is the only place that prints the final error
// and picks the exit code; every command is a constructor, an options struct and a run function.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

// Exit codes shared by every command, and the gate's verdict codes (SPEC §2.4): pass 0, fail 1,
// block 2, error 3 (the gate could not decide).
const (
	ExitOK      = 0
	ExitRefused = 1
	ExitUsage   = 64

	ExitFail  = 1
	ExitBlock = 2
	ExitError = 3
)

// Main runs geas with the process's arguments and standard streams and returns the exit code.
func Main() (code int) {
	_ = gate.LoadSigningKey() // read once, at start; an error is every keyed command's refusal
	scrubSigningKey()
	defer tuneGC()()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer exitOnPanic(os.Stderr, &code)
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// exitOnPanic, deferred, turns a panic into ExitError with the panic and its stack on stderr. A Go
// program that panics exits 2, which a caller of geas gate reads as block ("something required is
// missing"); a bug in the gate is an error, that is 3: the gate could not decide. Everything a run
// wrote before the panic is as durable as after a crash (SPEC §7.3).
func exitOnPanic(stderr io.Writer, code *int) {
	r := recover()
	if r == nil {
		return
	}
	fmt.Fprintf(stderr, "geas: internal error (a bug in geas; please report it): %v\n%s", r, debug.Stack())
	*code = ExitError
}

// Run executes one geas command line and returns its exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globalOptions{stdin: stdin, stdout: stdout, stderr: stderr, githubActions: os.Getenv(githubActionsEnv) == "true"}
	root := newRootCmd(g)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// Only the shell's completion requests read the completion functions; registering them
		// walks every command's flags, about 0.5 ms of each process's start-up otherwise.
		registerCompletions(root, g)
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var quiet *exitError
	if errors.As(err, &quiet) && quiet.silent {
		return code
	}
	if g.format == formatJSON {
		writeJSON(stdout, map[string]any{"error": map[string]any{"code": code, "message": err.Error()}})
	}
	fmt.Fprintf(stderr, "geas: %v\n", err)
	if code == ExitUsage && g.usageHint != "" {
		fmt.Fprintf(stderr, "run '%s --help' for usage\n", g.usageHint)
	}
	return code
}

// globalOptions are the flags of the root command plus the streams, shared by every command.
type globalOptions struct {
	dir       string
	format    string
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	usageHint string
	// lockTimeout is --lock-timeout (0: not given).
	lockTimeout time.Duration
	// outputs are -o FORMAT=FILE as given; outFiles the same, checked before the run.
	outputs  []string
	outFiles []outputFile
	// githubActions is true when geas runs as a step of GitHub Actions ($GITHUB_ACTIONS is
	// "true"): eval command output then goes in the log's groups (progress.go).
	githubActions bool
}

const (
	formatText   = "text"
	formatJSON   = "json"
	formatJUnit  = "junit"
	formatGitHub = "github"
)

func newRootCmd(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "geas",
		Short: "geas gate decides whether an agent's task is really done",
		Long: `geas gate decides, for one task of a multi-agent mission, whether the work is done.
It reads the task's contract and the evidence agents wrote under .geas/, runs the checks
itself, and answers pass, fail, block or error. The companion commands read and write the
.geas files the gate reads, always validated and atomically.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return c.Help()
		},
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			g.usageHint = c.CommandPath()
			if err := applyEnvFlags(c); err != nil {
				return err
			}
			if err := keyUsable(c); err != nil {
				return err
			}
			if err := g.setLockWait(c); err != nil {
				return err
			}
			return g.checkFormats(c)
		},
	}
	root.PersistentFlags().StringVarP(&g.dir, "dir", "C", "", "run as if geas was started in `DIR` (the project root or below it)")
	root.PersistentFlags().StringVar(&g.format, "format", formatText, formatUsage(defaultFormats))
	root.PersistentFlags().DurationVar(&g.lockTimeout, "lock-timeout", 0, "how long to wait for a task lock another run holds before giving up with exit 3 (default 10m, or $GEAS_LOCK_TIMEOUT)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		g.usageHint = c.CommandPath()
		if err := unknownCommand(c, c.Flags().Args()); err != nil {
			return err // geas gat --task t1: the command is the mistake, not the flag
		}
		return &usageError{err: err}
	})
	root.AddCommand(
		newGateCmd(g),
		newTaskCmd(g),
		newEvidenceCmd(g),
		newEventCmd(g),
		newDecisionCmd(g),
		newSchemaCmd(g),
		newValidateCmd(g),
		newDemoCmd(g),
		newMCPCmd(g),
		newHookCmd(g),
		newVersionCmd(g),
		newInitCmd(g),
	)
	addVersionFlag(root, g)
	describeEnvFlags(root)
	addFormatFlags(g, root) // it gives the commands of commandFormats their own --format
	return root
}

// keyUsable refuses a command while the signing key cannot be read (gate.SigningKeyErr): a key
// that is set but unreadable is never taken for no key. The hooks are exempt here: they answer
// for themselves, and a gate run refuses the same error, which holds the stop (cmd/hook.go).
func keyUsable(c *cobra.Command) error {
	err := gate.SigningKeyErr()
	if err == nil {
		return nil
	}
	if isHookCmd(c) {
		return nil
	}
	return &exitError{code: ExitError, err: err}
}

// usageError is a mistake in the command line: exit 64.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitError carries an explicit exit code; silent ones have already reported themselves.
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	var ue *usageError
	var ie *gate.InputError
	var idErr *project.InvalidIDError
	var nf *project.NotFoundError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, new(*gate.LockTimeoutError)):
		return ExitError // SPEC §7.3: a lock wait that gives up is an error of the run
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &idErr), errors.As(err, &nf),
		errors.Is(err, project.ErrNoTask), errors.Is(err, project.ErrNoMission), errors.As(err, new(*gate.UnknownMissionError)):
		return ExitUsage
	}
	return ExitRefused
}

// noArgs refuses positional arguments with a usage error (cobra's own error is untyped).
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		c.SilenceUsage = true
		if err := unknownCommand(c, args); err != nil {
			return err
		}
		return usagef("%s takes no arguments, got %q", c.CommandPath(), args)
	}
	return nil
}

// groupCmd is a command that only holds subcommands.
func groupCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usagef("%s needs a subcommand: %s", c.CommandPath(), subcommandNames(c))
		},
	}
}

func subcommandNames(c *cobra.Command) string {
	s := ""
	for i, sc := range c.Commands() {
		if i > 0 {
			s += ", "
		}
		s += sc.Name()
	}
	return s
}
