package casckpt

import "github.com/casckpt/casckpt/jsonapi"

// JSONPath is a path as the --json documents carry it: jsonapi.Path,
// which writes each byte that is not part of valid UTF-8 as "\udcXX".
type JSONPath = jsonapi.Path

// JSONPaths converts a list of paths for a JSON document; never nil.
func JSONPaths(paths []string) []JSONPath { return jsonapi.Paths(paths) }
