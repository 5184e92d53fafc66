#!/bin/sh
# Makes the index fixtures with the real git program (run it from this
# directory; the tests themselves need no git). Each index-*.bin is a
# .git/index; names-*.txt lists the names git ls-files --stage gives.
set -eu
out=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp" GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t

fill() { # a tree with default-excluded directories, a long name, odd names
	mkdir -p build/sub dist go/build cmd/dist runtime/coverage src/a-b src/a
	echo b > build/sub/x.go; echo d > dist/d.go; echo g > go/build/build.go
	echo c > cmd/dist/main.go; echo r > runtime/coverage/cov.go
	echo 1 > src/a-b/f; echo 2 > src/a/f; echo 3 > 'src/sp ace.txt'
}

addlong() { # a name longer than 4095 bytes (no file: git refuses such paths on disk)
	long=$(printf 'd%.0s' $(seq 1 200))
	p=$long; for i in $(seq 1 21); do p=$p/$long; done
	git update-index --add --cacheinfo "100644,$(git hash-object -w --stdin </dev/null),$p/leaf.txt"
}

mk() { # mk NAME VERSION [git init args]
	name=$1 version=$2; shift 2
	r=$tmp/$name; git init -q "$@" "$r"; cd "$r"; fill
	git add -A; addlong
	git update-index --index-version "$version"
	cp .git/index "$out/index-$name.bin"
	git ls-files --stage | sed 's/^[0-9]* [0-9a-f]* [0-3]	//' > "$out/names-$name.txt"
	cd "$out"
}
mk v2 2
mk v3 3
mk v4 4
mk sha256 4 --object-format=sha256

# version 3 with extended flags: an intent-to-add entry
r=$tmp/ita; git init -q "$r"; cd "$r"; echo x > later.txt; echo y > now.txt
git add now.txt; git add -N later.txt
cp .git/index "$out/index-ita.bin"; git ls-files > "$out/names-ita.txt"; cd "$out"

# a conflict: one name at stages 1, 2 and 3
r=$tmp/conflict; git init -q "$r"; cd "$r"; echo base > f; git add f; git commit -qm base
git checkout -qb other; echo theirs > f; git commit -qam theirs
git checkout -q -; echo ours > f; git commit -qam ours
git merge -q other >/dev/null 2>&1 || true
cp .git/index "$out/index-conflict.bin"; git ls-files --stage | sed 's/^[0-9]* [0-9a-f]* [0-3]	//' > "$out/names-conflict.txt"; cd "$out"

# a split index: its entries are not all in the file
r=$tmp/split; git init -q "$r"; cd "$r"; echo a > a; echo b > b
git -c core.splitIndex=true add a b; git -c core.splitIndex=true update-index --split-index
cp .git/index "$out/index-split.bin"; cd "$out"

# a submodule: a gitlink entry names a directory
r=$tmp/gitlink; git init -q "$r"; cd "$r"; echo a > a; git add a; git commit -qm a
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),vendor/build"
cp .git/index "$out/index-gitlink.bin"; git ls-files --stage | sed 's/^[0-9]* [0-9a-f]* [0-3]	//' > "$out/names-gitlink.txt"; cd "$out"
