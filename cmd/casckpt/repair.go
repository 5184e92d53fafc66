package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

func newRepairCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "repair",
		Short: "rebuild the store's database from the packs",
		Long: `repair rebuilds the store's database (casckpt.db) from the packs when it
is damaged or lost. Every pack is read and each object checked against its
hash; the snapshot records are rebuilt from the backup of its record that
every snapshot stores in its pack, keeping the pins and numbering the old
database still holds. Snapshots dropped earlier stay out when the old
database still says so; if it cannot, they may come back (forget them
again). A snapshot whose commit a crash cut short comes back too, whole.
The old database is kept beside the new one. Run verify afterwards.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runRepair(cmd.Context(), g) },
	}
}

// runRepair rebuilds the store's database and prints what it found.
func runRepair(ctx context.Context, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	res, err := store.Repair(ctx)
	if err != nil {
		return err
	}
	doc := jsonapi.Repair{PacksRead: res.PacksRead, ObjectsIndexed: res.ObjectsIndexed,
		DamagedPacks: orEmpty(res.DamagedPacks), UnreadablePacks: orEmpty(res.UnreadablePacks),
		Projects: res.Projects, Snapshots: res.Snapshots, Turns: res.Turns, FromOldDatabase: res.FromOldDatabase, OldDatabase: labelOrNull(res.OldDatabase)}
	for _, p := range res.DamagedPacks {
		g.warn(fmt.Sprintf("pack %s is damaged: the objects that could be read are indexed", p))
	}
	for _, p := range res.UnreadablePacks {
		g.warn(fmt.Sprintf("pack %s has nothing readable: set aside as %s.damaged", p, p))
	}
	return g.emit(doc, func(w io.Writer) {
		fmt.Fprintf(w, "rebuilt the database: %s of %s (%s from the old database, %s from the backups in the packs), %s, %s in %s\n",
			countOf(int64(res.Snapshots), "snapshot"), countOf(int64(res.Projects), "project"), count(int64(res.FromOldDatabase)),
			count(int64(res.Snapshots-res.FromOldDatabase)), countOf(int64(res.Turns), "turn"), countOf(int64(res.ObjectsIndexed), "object"), countOf(int64(res.PacksRead), "pack"))
		if res.OldDatabase != "" {
			fmt.Fprintf(w, "the old database is kept as %s: delete it once casckpt verify is clean\n", oneLine(res.OldDatabase))
		}
	})
}
