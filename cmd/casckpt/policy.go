package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// policyOptions are the flags of policy.
type policyOptions struct {
	lifecycle     string
	test, noTest  bool
	retentionDays int
	keep          int
	noCleanup     bool
	cleanup       bool
}

func newPolicyCommand(g *globals) *cobra.Command {
	var o policyOptions
	cmd := &cobra.Command{
		Use:   "policy [DIR]",
		Short: "show or change a project's lifecycle and retention policy",
		Long: `policy records the lifecycle and retention policy of the project in DIR
(default: the current directory), which prune applies: --lifecycle running,
completed or failed (completed and failed projects are dropped
--completed-days and --failed-days after, running ones never as orphans),
--test (dropped by the first prune after it is completed or failed),
--retention-days (the project's own days; 0 clears), --keep (the keep rule
of every later snapshot that names none; 0 clears) and --no-cleanup (no
rule drops its snapshots; --cleanup undoes it). A flag changes only what it
names; with none, policy prints the policy. DIR must be a directory; the
project is recorded if the store lacks it. A DIR inside a project is that
project, as for snapshot (--here: DIR itself).`,
		Args: argsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPolicy(cmd, o, g, args) },
	}
	addHereFlag(cmd, g)
	f := cmd.Flags()
	f.StringVar(&o.lifecycle, "lifecycle", "", "the project's state: running, completed or failed")
	f.BoolVar(&o.test, "test", false, "a test project: dropped by the first prune after it finishes")
	f.BoolVar(&o.noTest, "no-test", false, "not a test project")
	f.IntVar(&o.retentionDays, "retention-days", 0, "days after it completed or failed that prune drops it (0: prune's)")
	f.IntVar(&o.keep, "keep", 0, "snapshots kept by a snapshot that names no --keep (0: the default)")
	f.BoolVar(&o.noCleanup, "no-cleanup", false, "no rule drops the project's snapshots")
	f.BoolVar(&o.cleanup, "cleanup", false, "the rules drop the project's snapshots (the default)")
	return cmd
}

// runPolicy changes the policy as the flags of cmd say, or prints it.
func runPolicy(cmd *cobra.Command, o policyOptions, g *globals, args []string) error {
	ctx := cmd.Context()
	dir := "."
	if len(args) > 0 {
		dir = args[0]
	}
	change, err := o.change(cmd)
	if err != nil {
		return err
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	var p casckpt.Policy
	if change == (casckpt.PolicyChange{}) {
		p, err = store.Policy(ctx, proj.dir)
	} else {
		p, err = store.SetPolicy(ctx, proj.dir, change)
	}
	if err != nil {
		return err
	}
	return emitPolicy(g, p)
}

// change returns what the flags that cmd was given change.
func (o policyOptions) change(cmd *cobra.Command) (casckpt.PolicyChange, error) {
	var c casckpt.PolicyChange
	set := cmd.Flags().Changed
	for _, pair := range [][2]string{{"test", "no-test"}, {"cleanup", "no-cleanup"}} {
		if set(pair[0]) && set(pair[1]) {
			return c, usagef("--%s and --%s exclude each other", pair[0], pair[1])
		}
	}
	if set("lifecycle") {
		switch o.lifecycle {
		case casckpt.LifecycleRunning, casckpt.LifecycleCompleted, casckpt.LifecycleFailed:
			c.Lifecycle = &o.lifecycle
		default:
			return c, usagef("--lifecycle takes running, completed or failed, not %q", o.lifecycle)
		}
	}
	if set("test") || set("no-test") {
		c.Test = &o.test
	}
	if set("retention-days") {
		if _, err := days("retention-days", o.retentionDays); err != nil {
			return c, err
		}
		c.RetentionDays = &o.retentionDays
	}
	if set("keep") {
		if o.keep < 0 {
			return c, usagef("--keep takes a number of snapshots from 0 up")
		}
		c.Keep = &o.keep
	}
	if set("cleanup") || set("no-cleanup") {
		cleanup := !o.noCleanup
		c.Cleanup = &cleanup
	}
	return c, nil
}

// emitPolicy prints policy p.
func emitPolicy(g *globals, p casckpt.Policy) error {
	doc := jsonapi.Policy{Project: jsonapi.Path(p.Project), Lifecycle: labelOrNull(p.Lifecycle), Test: p.Test,
		RetentionDays: positiveOrNull(p.RetentionDays), Keep: positiveOrNull(p.Keep), Cleanup: p.Cleanup}
	if !p.LifecycleSince.IsZero() {
		doc.LifecycleSince = labelOrNull(p.LifecycleSince.UTC().Format(time.RFC3339))
	}
	return g.emit(doc, func(w io.Writer) {
		parts := []string{"no lifecycle"}
		if doc.Lifecycle != nil {
			parts[0] = *doc.Lifecycle + " since " + *doc.LifecycleSince
		}
		if p.Test {
			parts = append(parts, "test")
		}
		if doc.RetentionDays != nil {
			parts = append(parts, fmt.Sprintf("retention %d days", p.RetentionDays))
		}
		if doc.Keep != nil {
			parts = append(parts, fmt.Sprintf("keep %d", p.Keep))
		}
		parts = append(parts, map[bool]string{true: "cleanup on", false: "cleanup off"}[p.Cleanup])
		fmt.Fprintf(w, "policy of %s: %s\n", oneLine(p.Project), strings.Join(parts, ", "))
	})
}

// positiveOrNull returns n, or nil when it is not positive.
func positiveOrNull(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}
