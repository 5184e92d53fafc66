package main

import (
	"bufio"
	"fmt"
	"strings"
)

// confirm asks question on the terminal (stderr, then a line of stdin)
// and reports whether the user answered y or yes.
func (g *globals) confirm(question string) bool {
	fmt.Fprintf(g.io.err, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(g.io.in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}
