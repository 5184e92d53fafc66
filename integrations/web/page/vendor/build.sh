#!/bin/sh
# Builds highlight.js from the npm package highlight.js (which ships no
# browser build, only CommonJS lib/core.js and lib/languages/*.js): core
# and the languages below, each in its own function scope, registered on
# window.hljs. Usage: build.sh DIR (the unpacked package: npm pack
# highlight.js@11.12.0 && tar xzf highlight.js-11.12.0.tgz; DIR=package).
set -eu
pkg=$1
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$pkg/package.json")
{
	printf '/*! highlight.js %s, built by build.sh from the npm package highlight.js. Its licence:\n\n' "$version"
	sed 's#\*/#* /#g' "$pkg/LICENSE"
	printf '*/\n'
	printf '(function () {\n"use strict";\nvar hljs = (function () {\nvar module = { exports: {} };\n'
	cat "$pkg/lib/core.js"
	printf 'return module.exports;\n})();\n'
	for lang in bash c cpp csharp css go ini java javascript json kotlin markdown php plaintext python ruby rust sql swift typescript xml yaml; do
		printf 'hljs.registerLanguage("%s", (function () {\nvar module = { exports: {} };\n' "$lang"
		cat "$pkg/lib/languages/$lang.js"
		printf 'return module.exports;\n})());\n'
	done
	printf 'window.hljs = hljs;\n})();\n'
} >highlight.js
cp "$pkg/LICENSE" LICENSE
