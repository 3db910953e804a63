// Package readme keeps the README's Go code compiled: each ```go block of
// README.md is the part between the "readme:begin" and "readme:end"
// markers of a program under this folder, named by the HTML comment on
// the line before the block. Its test fails when a block and its program
// differ, and runs the programs, so the README cannot drift from code
// that builds and works.
//
// Its test also checks that every package of the repository has a
// package comment.
//
// To change a snippet, edit the program, then copy its marked part,
// one tab less indented, into the README block.
package readme
