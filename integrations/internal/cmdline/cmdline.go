// Package cmdline builds the casckpt command lines that the in-process
// hosts (integrations/mcp, integrations/web) hand to their Runner.
package cmdline

// Command is the argument list of a command: name, --json, flags, "--",
// then the positional arguments (so none is read as a flag).
func Command(name string, flags []string, positional ...string) []string {
	args := append([]string{name, "--json"}, flags...)
	return append(append(args, "--"), positional...)
}

// FlagIf is flag when on, else nothing.
func FlagIf(on bool, flag ...string) []string {
	if on {
		return flag
	}
	return nil
}
