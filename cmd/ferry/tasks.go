package main

// ferry call --task and ferry tasks: tool calls that run as tasks on the
// server (the tasks extension of 2026-07-28, the experimental tasks of
// 2025-11-25), followed as they go, left running or cancelled on Ctrl-C,
// and found again from another process by their id.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// callTask calls a tool as a task and follows it to its result.
func (o *cli) callTask(ctx context.Context, srv *host.Server, tool string, args any) (*protocol.CallToolResult, error) {
	c, err := srv.Client(ctx)
	if err != nil {
		return nil, err
	}
	label := o.toolName(srv.Name(), tool)
	sigs := notifyInterrupt()
	defer signal.Stop(sigs)
	ctx = client.WithProgress(ctx, func(p *protocol.ProgressParams) { o.term.showProgress(label, p) })
	var task *protocol.DetailedTask
	res, err := c.Call(ctx, tool, args, client.AsTask(&client.TaskOptions{Detach: true,
		WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { task = t }}}))
	if err != nil || task == nil {
		return res, err
	}
	o.term.printf("%s: task %s %s\n", label, task.TaskID, statusText(task))
	return o.followTask(ctx, c, sigs, srv.Config(), task.TaskID, label, statusText(task))
}

// followTask waits for a task, showing its status as it changes. Ctrl-C
// asks whether to cancel the task or leave it running; the command then
// ends with the signal's exit status (130 for Ctrl-C), as every command
// a signal stops.
func (o *cli) followTask(ctx context.Context, c *client.Client, sigs <-chan os.Signal, srv *config.Server, id, label, last string) (*protocol.CallToolResult, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		select {
		case s := <-sigs:
			stop(&interrupted{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	res, err := c.WaitTask(ctx, id, &client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) {
		if s := statusText(t); s != last {
			last = s
			o.term.printf("%s: task %s %s\n", label, t.TaskID, s)
		}
	}})
	var in *interrupted
	if !errors.As(err, &in) {
		return res, taskError(err)
	}
	// Interrupted: the task is the server's, ask what to do with it.
	if o.term.ask && o.askCancel(sigs, id) {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.CancelTask(cctx, id); err != nil {
			return nil, fmt.Errorf("cancelling task %s: %w", id, err)
		}
		o.term.printf("%s: task %s cancelled\n", label, id)
		return nil, in
	}
	if srv.Transport == config.Stdio {
		o.term.printf("%s: task %s not cancelled, but it ends with its server, which ferry started and now stops\n", label, id)
		return nil, in
	}
	o.term.printf("%s: task %s left running; its result: %s\n", label, id, o.tasksCommandLine(srv, true, id))
	return nil, in
}

// askCancel asks whether to cancel the task. No is the default, and a
// second Ctrl-C at the question answers it: the task is left running.
// The read of the answer is abandoned then; the command ends right after.
func (o *cli) askCancel(sigs <-chan os.Signal, id string) bool {
	answer := make(chan bool, 1)
	go func() { answer <- o.term.confirm(fmt.Sprintf("Cancel task %s on the server? [y/N] ", id)) }()
	select {
	case yes := <-answer:
		return yes
	case <-sigs:
		o.term.askf("\n") // ends the question's line
		return false
	}
}

// tasksCommandLine is the ferry tasks command that fetches the task's
// result from another process: the server as this one reached it (its
// name and the configuration files given, or the URL given, without a
// password), and the protocol revision if one was pinned.
func (o *cli) tasksCommandLine(srv *config.Server, wait bool, id string) string {
	words := []string{"ferry", "tasks"}
	if wait {
		words = append(words, "--wait")
	}
	if o.protocol != "" {
		words = append(words, "--protocol", o.protocol)
	}
	if srv.Source == "command line" {
		u := srv.URL
		if pu, err := url.Parse(u); err == nil {
			u = pu.Redacted()
		}
		words = append(words, u)
	} else {
		for _, f := range o.configs {
			words = append(words, "--config", f)
		}
		words = append(words, srv.Name)
	}
	words = append(words, id)
	for i, w := range words {
		words[i] = shellWord(w)
	}
	return safeLine(strings.Join(words, " "))
}

// shellWord quotes a word for a POSIX shell when it needs it.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// notifyInterrupt catches Ctrl-C (and SIGTERM) from now on, so that a
// task already created is never abandoned without a word.
func notifyInterrupt() chan os.Signal {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	return sigs
}

// taskError turns a failed task into the command's error.
func taskError(err error) error {
	var tf *client.TaskFailedError
	if errors.As(err, &tf) {
		return &callError{err}
	}
	return err
}

func statusText(t *protocol.DetailedTask) string {
	s := t.Status
	if t.StatusMessage != "" {
		s += ": " + t.StatusMessage
	}
	return s
}

// confirm asks a yes/no question on the terminal; no is the default.
func (t *terminal) confirm(question string) bool {
	t.askf("%s", question)
	line, _ := t.in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

var tasksCommand = &command{
	name:    "tasks",
	args:    "SERVER [TASKID]",
	summary: "a server's tasks (2025-11-25), or one task's status or result (--wait: wait for it)",
	help: `Lists a server's tasks (2025-11-25 sessions; the tasks extension has no
tasks/list), or shows one task's status, or its result once it is done.`,
	example: `ferry call --task everything.slow
ferry tasks everything TASKID --wait`,
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		fs.BoolVar(&o.wait, "wait", false, "wait for the task to end and print its result; Ctrl-C asks whether to cancel it")
		return func(_ context.Context, o *cli) error { return cmdTasks(o) }
	},
	ownSignals: true,
}

// cmdTasks is ferry tasks SERVER [TASKID]: the server's tasks (2025-11-25
// sessions; the tasks extension has no tasks/list), or one task, waited
// for with --wait.
func cmdTasks(o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	name, id := "", ""
	switch len(o.args) {
	case 0:
		if len(servers) != 1 {
			return usageErrorf("tasks needs a server: ferry tasks SERVER [TASKID] [--wait]")
		}
		name = servers[0].Name
	case 1:
		if len(servers) == 1 && servers[0].Source == "command line" {
			name, id = servers[0].Name, o.args[0]
		} else {
			name = o.args[0]
		}
	default:
		name, id = o.args[0], o.args[1]
	}
	sess, err := o.startServers(context.Background(), servers, name)
	if err != nil {
		return err
	}
	defer sess.Close()
	srv, err := sess.Server(name)
	if sess.startErr != nil {
		return sess.startErr
	}
	if err != nil {
		return err
	}
	ctx := context.Background()
	c, err := srv.Client(ctx)
	if err != nil {
		return err
	}
	if id == "" {
		return o.listTasks(ctx, c, srv.Config())
	}
	if o.wait {
		sigs := notifyInterrupt()
		defer signal.Stop(sigs)
		res, err := o.followTask(ctx, c, sigs, srv.Config(), id, name, "")
		if err != nil {
			return err
		}
		return o.showResult(res, name, id)
	}
	t, err := c.GetTask(ctx, id)
	if err != nil {
		return err
	}
	if t.Status == protocol.TaskCompleted || (!c.Stateless() && protocol.Terminal(t.Status)) {
		res, err := c.WaitTask(ctx, id, nil)
		if err != nil {
			return taskError(err)
		}
		return o.showResult(res, name, id)
	}
	// A task that ended without a result fails the command, as
	// tasks/result makes it fail in 2025-11-25: exit 5, stdout empty.
	switch {
	case t.Status == protocol.TaskFailed && len(t.Error) > 0:
		return &callError{fmt.Errorf("task %s failed: %s", id, t.Error)}
	case t.Status == protocol.TaskCancelled:
		return &callError{fmt.Errorf("task %s was cancelled", id)}
	}
	if o.json {
		return o.printJSON(t)
	}
	fmt.Fprintf(o.stdout, "%s %s\n", o.text(t.TaskID), o.text(statusText(t)))
	return nil
}

func (o *cli) showResult(res *protocol.CallToolResult, server, id string) error {
	if o.json {
		if err := o.printJSON(res); err != nil {
			return err
		}
	} else {
		o.printResult(res)
	}
	if res.IsError {
		return &toolError{server: server, tool: "task " + id, text: firstText(res.Content)}
	}
	return nil
}

func (o *cli) listTasks(ctx context.Context, c *client.Client, srv *config.Server) error {
	var all []protocol.Task
	cursor := ""
	for {
		page, err := c.ListTasks(ctx, cursor)
		if errors.Is(err, client.ErrNoTasks) {
			return usageErrorf("server %q cannot list its tasks (%v); name the task: %s", srv.Name, err, o.tasksCommandLine(srv, false, "TASKID"))
		}
		if err != nil {
			return err
		}
		all = append(all, page.Tasks...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if o.json {
		return o.printJSON(all)
	}
	for _, t := range all {
		fmt.Fprintf(o.stdout, "%s  %-14s %s  %s\n", safeLine(t.TaskID), safeLine(string(t.Status)), safeLine(t.CreatedAt), safeLine(t.StatusMessage))
	}
	return nil
}
