package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newVerifyCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "check every snapshot's trees and data against their hashes",
		Args:  argsBetween(0, 0),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runVerify(cmd.Context(), g) },
	}
}

// runVerify checks the store, prints what is damaged and fails (exit 1,
// after the document) when anything is.
func runVerify(ctx context.Context, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	res, err := store.Verify(ctx)
	if err != nil {
		return err
	}
	damaged := make([]jsonapi.Damaged, 0, len(res.Damaged))
	for _, d := range res.Damaged {
		path, machine := projectOf(store, d.Project)
		damaged = append(damaged, jsonapi.Damaged{Project: path, Machine: machine, ID: d.ID.String(), Reason: d.Reason})
	}
	rejected := make([]jsonapi.ObjectReason, 0, len(res.Rejected))
	for _, r := range res.Rejected {
		rejected = append(rejected, jsonapi.ObjectReason(r))
	}
	doc := jsonapi.Verify{SnapshotsChecked: res.SnapshotsChecked, ObjectsChecked: res.ObjectsChecked, Damaged: damaged, Rejected: rejected,
		DamagedObjects: damagedObjectsJSON(res.DamagedObjects)}
	if err := g.emit(doc, func(w io.Writer) { printVerify(w, g, res, damaged) }); err != nil {
		return err
	}
	return verifyFailure(g, res)
}

// printVerify prints verify's result res, whose damaged snapshots are
// damaged, for people.
func printVerify(w io.Writer, g *globals, res casckpt.VerifyResult, damaged []jsonapi.Damaged) {
	for _, d := range damaged {
		fmt.Fprintf(w, "%s %s %s: %s\n", g.paint(ansiRed, "DAMAGED"), oneLine(string(d.Project)), d.ID[:12], oneLine(d.Reason))
	}
	for _, r := range res.Rejected {
		fmt.Fprintf(w, "REJECTED %s: %s\n", oneLine(r.Key), r.Reason)
	}
	printDamagedObjects(w, res.DamagedObjects)
	fmt.Fprintf(w, "checked %s, %s: %s damaged\n", countOf(int64(res.SnapshotsChecked), "snapshot"), countOf(int64(res.ObjectsChecked), "object"), count(int64(len(res.Damaged))))
}

// verifyFailure is the error of a verify that found damage (its document
// already printed), or nil.
func verifyFailure(g *globals, res casckpt.VerifyResult) error {
	switch {
	case len(res.Damaged) > 0:
		g.jsonDone = true
		return fmt.Errorf("%s; restore refuses them and names the newest intact one; casckpt repair, then a snapshot of files that still hold the lost data, stores it again; forget removes them", countOf(int64(len(res.Damaged)), "damaged snapshot"))
	case len(res.Rejected) > 0:
		g.jsonDone = true
		return fmt.Errorf("%s in the bucket carry no valid fleet signature and are ignored (gc refuses while a commit is among them): unless they predate CASCKPT_FLEET_KEY, someone without the key wrote them (see docs/bucket.md, Trust)", countOf(int64(len(res.Rejected)), "object"))
	case len(res.DamagedObjects) > 0:
		g.jsonDone = true
		return fmt.Errorf("%s in the bucket, skipped by every command: delete them from the bucket once you have looked, then run casckpt repair", countOf(int64(len(res.DamagedObjects)), "damaged object"))
	}
	return nil
}
