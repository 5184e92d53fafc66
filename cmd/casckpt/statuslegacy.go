//go:build !casckpt_lean

package main

import (
	"context"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/hermes"
)

// legacyStores lists status' legacy stores: Hermes' under the default
// --from, and every other agent's at its default locations.
func (g *globals) legacyStores(ctx context.Context, store *casckpt.Store) ([]jsonapi.Legacy, error) {
	found, err := hermes.Status(ctx, store, g.legacyDir(""))
	if err != nil {
		return nil, err
	}
	legacy := make([]jsonapi.Legacy, 0, len(found))
	for _, l := range found {
		legacy = append(legacy, jsonapi.Legacy{Path: jsonapi.Path(l.Path), SizeBytes: l.SizeBytes, Migrated: l.Migrated})
	}
	agents, err := g.agentLegacy(ctx, store)
	if err != nil {
		return nil, err
	}
	return append(legacy, agents...), nil
}
