// Command pyfields writes the Python client's field list
// (clients/python/casckpt/fields.json) from the documents of package
// jsonapi: for each command, and for each array of objects in its
// document ("list[]", "diff.files[]"), the keys the client carries into
// its results. Run it through go generate ./jsonapi.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/casckpt/casckpt/jsonapi"
)

func main() {
	out := flag.String("o", "", "the file to write (default: stdout)")
	flag.Parse()
	b, err := generate()
	if err == nil && *out != "" {
		err = os.WriteFile(*out, b, 0o644)
	} else if err == nil {
		_, err = os.Stdout.Write(b)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pyfields:", err)
		os.Exit(1)
	}
}

// generate is fields.json: the keys of every object of every document,
// by command ("error" for jsonapi.Error) and object, the keys of two
// documents of one command merged.
func generate() ([]byte, error) {
	fields := map[string][]string{}
	for _, d := range jsonapi.Documents() {
		command := d.Command
		if command == "" {
			command = "error"
		}
		for _, f := range jsonapi.Fields(d.Value) {
			name := command
			switch {
			case f.Object == "[]":
				name += "[]"
			case f.Object != "":
				name += "." + f.Object
			}
			if !slices.Contains(fields[name], f.Key) {
				fields[name] = append(fields[name], f.Key)
			}
		}
	}
	b, err := json.MarshalIndent(fields, "", "  ")
	return append(b, '\n'), err
}
