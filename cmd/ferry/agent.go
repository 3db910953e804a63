package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/providers"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// agentFlags are the flags of ferry run and ferry chat.
// declare declares the flags run and chat share; run adds -p.
func (f *agentFlags) declare(fs *flag.FlagSet, run bool) {
	fs.StringVar(&f.model, "model", "", "the model `PROVIDER/MODEL` (or FERRY_MODEL, or the configuration's \"agent\" settings): openai/gpt-4o, anthropic/claude-sonnet-4-5, ollama/llama3.2, deepseek/..., dashscope/qwen-plus, ...")
	fs.StringVar(&f.baseURL, "base-url", "", "the provider's `URL` (OpenAI's ends in /v1)")
	fs.StringVar(&f.approval, "approval", "", "`MODE` ask (at a terminal), auto or deny tool calls and sampling requests (the configuration's allow/deny lists and the project's permissions first); plan runs the read-only tools and refuses the rest")
	fs.StringVar(&f.system, "system", "", "the system prompt `TEXT`")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "model requests `N` per turn (default 25)")
	fs.Int64Var(&f.maxTokens, "max-tokens", 0, "tokens `N` per turn (default: no limit)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "duration `D` of a turn (default: no limit)")
	if run {
		fs.StringVar(&f.prompt, "p", "", "the `PROMPT` (- reads stdin)")
	} else {
		fs.BoolVar(&f.resume, "continue", false, "go on with the last conversation")
	}
}

type agentFlags struct {
	model, baseURL, approval, system string
	maxSteps                         int
	maxTokens                        int64
	timeLimit                        time.Duration
	prompt                           string // run
	resume                           bool   // chat: go on with the last conversation
}

// agentRun is what run and chat share: the settings, the model, the
// servers and the agent.
type agentRun struct {
	o        *cli
	flags    *agentFlags
	settings *agent.Settings
	spec     string // PROVIDER/MODEL
	// baseFor is the provider --base-url is for: that of the first model.
	baseFor string
	sess    *session
	agent   *agent.Agent
	policy  *agent.Policy
}

// agentSettings reads the "agent" member of the configuration files of
// the run (those of --config, or those found), the first file's settings
// winning.
func (o *cli) agentSettings() (*agent.Settings, error) {
	var s *agent.Settings
	vars := config.DefaultOptions().Vars
	for _, f := range o.files {
		fs, err := agent.ReadSettings(f, &vars)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		s = s.Merge(fs)
	}
	if s == nil {
		s = &agent.Settings{}
	}
	return s, nil
}

// modelSpec is the model of the run: --model, else FERRY_MODEL, else the
// configuration's.
func (r *agentRun) modelSpec() (string, error) {
	spec := r.flags.model
	if spec == "" {
		spec = os.Getenv("FERRY_MODEL")
	}
	if spec == "" {
		spec = r.settings.Model
	}
	if spec == "" {
		return "", usageErrorf(`no model: give --model PROVIDER/MODEL (such as openai/gpt-4o or anthropic/claude-sonnet-4-5), ` +
			`set FERRY_MODEL, or set "model" in the configuration's "agent" settings`)
	}
	if _, _, err := providers.Split(spec); err != nil {
		return "", usageErrorf("%v", err)
	}
	return spec, nil
}

// openModel opens a model: its key from the provider's variable or the
// configuration, its base URL from base, else --base-url, else the
// configuration. --base-url is the URL of the provider of the run's
// first model: a chat's /model that switches to another provider does
// not take it (an OpenAI URL ends in /v1, Anthropic's SDK adds
// /v1/messages to its own).
func (r *agentRun) openModel(spec, base string) (agent.Model, error) {
	provider, _, _ := providers.Split(spec)
	ps := r.settings.Providers[provider]
	if base == "" && provider == r.baseFor {
		base = r.flags.baseURL
	}
	if base == "" {
		base = ps.BaseURL
	}
	m, err := providers.Open(spec, providers.Options{APIKey: ps.APIKey, BaseURL: base})
	if err != nil {
		var me *agent.ModelError
		if errors.As(err, &me) {
			return nil, err
		}
		return nil, usageErrorf("%v", err)
	}
	return m, nil
}

// policy builds the approval policy: --approval, else the
// configuration's, else ask at a terminal (and refuse elsewhere, saying
// so to the model).
func (r *agentRun) makePolicy(ask func(ctx context.Context, q *agent.Question) (agent.Answer, error)) (*agent.Policy, error) {
	mode := r.flags.approval
	if mode == "" {
		mode = r.settings.Approval
	}
	if mode == "" {
		mode = string(agent.Ask)
	}
	m, err := agent.ParseMode(mode)
	if err != nil {
		return nil, usageErrorf("--approval: %v", err)
	}
	s := r.settings
	p := &agent.Policy{Mode: m, Allow: s.Allow, Deny: s.Deny, SamplingAllow: s.Sampling.Allow, SamplingDeny: s.Sampling.Deny, Ask: ask}
	// A "never" the user set must hold: a file that cannot be read
	// stops the run rather than run without it.
	perms, err := projectPermissions(projectDir())
	if err != nil {
		return nil, fmt.Errorf("the permissions kept for this project: %w", err)
	}
	for target, perm := range perms {
		p.SetPermission(target, perm)
	}
	return p, nil
}

// projectDir is the project the permissions are kept for: the folder
// ferry runs in.
func projectDir() string { return config.HostEnv().Dir }

// startAgent loads the configuration, opens the model, starts the
// servers with the agent answering their sampling requests, and returns
// the run. elicit answers the servers' questions; ask the approvals.
func (o *cli) startAgent(f *agentFlags, watch bool,
	elicit func(ctx context.Context, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error),
	ask func(ctx context.Context, q *agent.Question) (agent.Answer, error)) (*agentRun, error) {
	servers, err := o.loadServersOrNone()
	if err != nil {
		return nil, err
	}
	r := &agentRun{o: o, flags: f}
	if r.settings, err = o.agentSettings(); err != nil {
		return nil, err
	}
	if r.spec, err = r.modelSpec(); err != nil {
		return nil, err
	}
	r.baseFor, _, _ = providers.Split(r.spec)
	model, err := r.openModel(r.spec, "")
	if err != nil {
		return nil, err
	}
	if r.policy, err = r.makePolicy(ask); err != nil {
		return nil, err
	}
	a := &agent.Agent{Model: model, ModelName: r.spec, Policy: r.policy, System: f.system}
	if a.System == "" {
		a.System = r.settings.System
	}
	a.Limits = r.settings.Limits()
	a.Limits.MaxSteps = firstNonZero(f.maxSteps, a.Limits.MaxSteps)
	a.Limits.MaxTokens = firstNonZero(f.maxTokens, a.Limits.MaxTokens)
	a.Limits.MaxTime = f.timeLimit
	if dir := stateDir(); dir != "" {
		// Where the results over their budget are kept, for the user to
		// open and --continue to read again.
		a.ResultDir = filepath.Join(dir, "results")
	}
	r.agent = a
	opts := o.hostOptions()
	opts.WatchTools = watch
	base := opts.Client
	roots := o.agentRoots()
	opts.Client = func(server string) *client.Options {
		co := base(server)
		co.Sampling = func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return a.Sample(ctx, server, p)
		}
		co.Elicitation = func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return a.Elicit(ctx, server, p, elicit)
		}
		co.ElicitationModes = []string{protocol.ElicitForm, protocol.ElicitURL}
		co.Roots = func(context.Context) ([]protocol.Root, error) { return roots, nil }
		return co
	}
	sess, err := o.startServersWith(context.Background(), servers, opts)
	if err != nil {
		return nil, err
	}
	r.sess = sess
	a.Tools = sess.Host
	a.Skills = agent.HostSkills(sess.Host)
	return r, nil
}

// loadServersOrNone is loadServers, except that an agent may run without
// any server: no configuration found is not an error.
func (o *cli) loadServersOrNone() ([]*config.Server, error) {
	servers, err := o.loadServers()
	var ue *usageError
	if err != nil && len(o.configs) == 0 && errors.As(err, &ue) && strings.HasPrefix(ue.msg, "no configuration file found") {
		return nil, nil
	}
	return servers, err
}

// agentRoots are the roots offered to the servers: --root, else the
// working directory.
func (o *cli) agentRoots() []protocol.Root {
	dirs := []string(o.roots)
	if len(dirs) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		dirs = []string{wd}
	}
	var roots []protocol.Root
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		roots = append(roots, protocol.Root{URI: (&url.URL{Scheme: "file", Path: abs}).String(), Name: filepath.Base(abs)})
	}
	return roots
}

func firstNonZero[T int | int64](a, b T) T {
	if a != 0 {
		return a
	}
	return b
}

// exitNotApproved is ferry run's exit code when a tool call or sampling
// request was refused because it needed approval and there was no
// terminal to ask: the answer lacks what the model asked for.
const exitNotApproved = 7

// agentExitCode maps the agent's errors: a model that refused the key
// (3), that could not be reached (4), that failed or a limit reached
// (2), calls refused for want of approval (7).
func agentExitCode(err error) (int, bool) {
	var na *notApprovedError
	if errors.As(err, &na) {
		return exitNotApproved, true
	}
	if k, ok := agent.ModelErrorKind(err); ok {
		switch k {
		case agent.ModelAuth:
			return exitAuth, true
		case agent.ModelUnreachable:
			return exitUnreachable, true
		}
		return exitError, true
	}
	var le *agent.LimitError
	if errors.As(err, &le) {
		return exitError, true
	}
	return 0, false
}

// toolLabel is a tool as people read it: its name in the host's list
// (server__tool), the one name the model, /tools, the allow and deny
// lists and /permissions use too.
func toolLabel(c *agent.CallRecord) string { return c.Name }

// serverCount says how many servers and tools the agent has.
func (r *agentRun) serverCount() (servers, tools int) {
	list, _ := r.sess.Tools(context.Background())
	return len(r.sess.Servers()), len(list)
}

// hostTools lists the tools for /tools.
func (r *agentRun) hostTools(ctx context.Context) ([]host.Tool, error) { return r.sess.Tools(ctx) }
