package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

var completionCommand = &command{
	name:    "completion",
	args:    "bash|zsh|fish",
	summary: "a shell completion script, made from the command table",
	help: `Prints a completion script for the shell: the commands, and the flags of
each (its own and the global ones), with their summaries where the shell
shows them. Load it in the shell's start-up file.`,
	example: `source <(ferry completion bash)          # ~/.bashrc
source <(ferry completion zsh)           # ~/.zshrc
ferry completion fish > ~/.config/fish/completions/ferry.fish`,
	setup:    noFlags(cmdCompletion),
	noConfig: true,
}

func cmdCompletion(_ context.Context, o *cli) error {
	if len(o.args) != 1 {
		return usageErrorf("completion takes the shell: bash, zsh or fish")
	}
	switch o.args[0] {
	case "bash":
		writeBashCompletion(o.stdout)
	case "zsh":
		// zsh runs the bash function through bashcompinit.
		fmt.Fprint(o.stdout, "#compdef ferry\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBashCompletion(o.stdout)
	case "fish":
		writeFishCompletion(o.stdout)
	default:
		return usageErrorf("completion: no shell %q (bash, zsh or fish)", o.args[0])
	}
	return nil
}

// topWords are the words that may follow "ferry": each command's first
// word (a group's name once).
func topWords() []string {
	var out []string
	for _, c := range commands {
		if w := c.words()[0]; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// flagNames returns "--name" for the flags of fs.
func flagNames(flags []*flag.Flag) []string {
	var out []string
	for _, f := range flags {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		out = append(out, dash+f.Name)
	}
	return out
}

func globalFlagList() []*flag.Flag {
	fs := newFlagSet("ferry")
	(&cli{}).globalFlags(fs)
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return append(out, &flag.Flag{Name: "help", Usage: "this help"})
}

func writeBashCompletion(w io.Writer) {
	fmt.Fprintf(w, `# bash completion for ferry (ferry completion bash)
_ferry() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd= sub= i valued=%q
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) return ;;
		-*) [[ " $valued " == *" ${COMP_WORDS[i]} "* ]] && ((i++)) ;;
		*) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then sub=${COMP_WORDS[i]}; fi ;;
		esac
	done
	local flags=%q
	case $cmd in
`, strings.Join(valueFlags(), " "), strings.Join(flagNames(globalFlagList()), " "))
	for _, c := range commands {
		own := flagNames(c.ownFlags())
		if len(own) > 0 {
			fmt.Fprintf(w, "\t%s) flags+=%q ;;\n", c.words()[0], " "+strings.Join(own, " "))
		}
	}
	fmt.Fprintf(w, "\tesac\n\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telif [[ -z $cmd ]]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(topWords(), " "))
	fmt.Fprint(w, "\telse\n\t\tcase $cmd in\n")
	for _, top := range topWords() {
		if g := group([]string{top}); len(g) > 0 {
			var subs []string
			for _, c := range g {
				subs = append(subs, c.words()[1])
			}
			fmt.Fprintf(w, "\t\t%s) [[ -z $sub ]] && COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", top, strings.Join(subs, " "))
		}
	}
	fmt.Fprintf(w, "\t\thelp) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(topWords(), " "))
	fmt.Fprint(w, "\t\tcompletion) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n")
	fmt.Fprint(w, "\t\tesac\n\tfi\n}\ncomplete -o default -F _ferry ferry\n")
}

func writeFishCompletion(w io.Writer) {
	fmt.Fprintln(w, "# fish completion for ferry (ferry completion fish)")
	fmt.Fprintln(w, "complete -c ferry -f")
	summaries := map[string]string{}
	for _, c := range commands {
		top := c.words()[0]
		if len(c.words()) > 1 {
			summaries[top] = top + " commands"
			fmt.Fprintf(w, "complete -c ferry -n '__fish_seen_subcommand_from %s' -a %s -d %s\n", top, c.words()[1], fishQuote(c.summary))
		} else {
			summaries[top] = c.summary
		}
	}
	for _, top := range topWords() {
		fmt.Fprintf(w, "complete -c ferry -n '__fish_use_subcommand' -a %s -d %s\n", top, fishQuote(summaries[top]))
	}
	for _, f := range globalFlagList() {
		fmt.Fprintf(w, "complete -c ferry %s -d %s\n", fishFlag(f), fishQuote(f.Usage))
	}
	for _, c := range commands {
		for _, f := range c.ownFlags() {
			fmt.Fprintf(w, "complete -c ferry -n '__fish_seen_subcommand_from %s' %s -d %s\n", c.words()[0], fishFlag(f), fishQuote(f.Usage))
		}
	}
}

func fishFlag(f *flag.Flag) string {
	s := "-l " + f.Name
	if len(f.Name) == 1 {
		s = "-s " + f.Name
	}
	if !isBool(f) && f.Name != "help" {
		s += " -r"
		if name, _ := flag.UnquoteUsage(f); strings.Contains(name, "FILE") || strings.Contains(name, "DIR") {
			s += " -F"
		}
	}
	return s
}

func fishQuote(s string) string {
	if i := strings.IndexByte(s, ':'); i > 0 && i > 40 {
		s = s[:i]
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// valueFlags are the flags, global or of any command, that take a value
// (the next word, when not written --flag=value).
func valueFlags() []string {
	all := globalFlagList()
	for _, c := range commands {
		all = append(all, c.ownFlags()...)
	}
	var out []string
	for _, n := range flagNames(all) {
		if takesValue(strings.TrimLeft(n, "-")) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
