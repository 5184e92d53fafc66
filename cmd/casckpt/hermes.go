package main

import "path/filepath"

// legacyDir is where the legacy Hermes stores are looked for (by
// migrate, clear-legacy and status): --from, else $HERMES_HOME/checkpoints,
// else ~/.hermes/checkpoints.
func (g *globals) legacyDir(from string) string {
	switch {
	case from != "":
		return from
	case g.env("HERMES_HOME") != "":
		return filepath.Join(g.env("HERMES_HOME"), "checkpoints")
	}
	return filepath.Join(g.home(), ".hermes", "checkpoints")
}
