#!/bin/sh
# go build -toolexec wrapper: runs each tool (compile, asm, link, ...)
# under /usr/bin/time and appends one line per run to $BUILD_COST_LOG:
#   TOOL PACKAGE MAX_RSS_KB WALL_S USER_S SYS_S
# PACKAGE is the -p argument of compile (the import path), "-" otherwise.
tool=$(basename "$1")
pkg=-
prev=
for a in "$@"; do
	[ "$prev" = -p ] && pkg=$a
	prev=$a
done
exec /usr/bin/time -a -o "$BUILD_COST_LOG" -f "$tool $pkg %M %e %U %S" "$@"
