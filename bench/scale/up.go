package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cluster is what `scale up` runs.
type cluster struct {
	ferry, echo, redis, state string
	maxSessions               int
	drain                     time.Duration
	replicas                  []*replica
	haproxy                   *exec.Cmd
}

// replica is one `ferry serve` and how to start it again.
type replica struct {
	name   string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

func upCmd(args []string) error {
	fs := flag.NewFlagSet("scale up", flag.ExitOnError)
	c := &cluster{}
	fs.StringVar(&c.ferry, "ferry", "bin/ferry", "the ferry command")
	fs.StringVar(&c.echo, "echo", "bin/ferry-server-stdio", "the stdio server behind each replica")
	fs.StringVar(&c.redis, "redis", "", "the Redis URL the replicas share (--redis)")
	fs.StringVar(&c.state, "state", "", "folder of the pid files, logs and HAProxy's configuration")
	fs.IntVar(&c.maxSessions, "max-sessions", 10000, "--max-sessions of each replica")
	fs.DurationVar(&c.drain, "drain", 10*time.Second, "--drain of each replica: what a restart waits for at most")
	n := fs.Int("replicas", 2, "how many replicas")
	lb := fs.Bool("haproxy", false, "put HAProxy in front (else one replica listens on -port)")
	port := fs.Int("port", 0, "the port clients connect to")
	every := fs.Duration("restart-every", 0, "restart one replica in turn this often (0: never)")
	fs.Parse(args)
	switch {
	case c.redis == "" || c.state == "" || *port == 0:
		return errors.New("-redis, -state and -port are required")
	case *n < 1 || (*n > 1 && !*lb):
		return errors.New("more than one replica needs -haproxy")
	}
	log.SetPrefix("scale: ")
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	if err := os.MkdirAll(c.state, 0o755); err != nil {
		return err
	}
	// The scripts end a cluster by this pid, whichever subshell started it.
	if err := os.WriteFile(filepath.Join(c.state, "scale.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer c.down()
	if err := c.start(*n, *lb, *port); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.state, "ready"), nil, 0o644); err != nil {
		return err
	}
	c.run(stop, *every)
	return nil
}

// start starts the replicas, each ready before the next, then HAProxy.
func (c *cluster) start(n int, lb bool, port int) error {
	for i := range n {
		r := &replica{name: fmt.Sprintf("r%d", i+1), port: port}
		if lb {
			p, err := freePort()
			if err != nil {
				return err
			}
			r.port = p
		}
		c.replicas = append(c.replicas, r)
		if err := c.startReplica(r); err != nil {
			return err
		}
	}
	if !lb {
		return nil
	}
	cfg := filepath.Join(c.state, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(port, c.replicas)), 0o644); err != nil {
		return err
	}
	c.haproxy = exec.Command("haproxy", "-db", "-f", cfg)
	c.haproxy.Stderr = c.logFile("haproxy")
	c.haproxy.SysProcAttr = orphanless()
	if err := c.haproxy.Start(); err != nil {
		return fmt.Errorf("haproxy: %w (apt-get install -y haproxy)", err)
	}
	return waitListening(port, 20*time.Second)
}

// run restarts one replica in turn every interval until a signal comes,
// the first after one and a half intervals: half an interval away from
// the whole minutes a soak samples on, so that no sample falls on one.
func (c *cluster) run(stop <-chan os.Signal, every time.Duration) {
	var next <-chan time.Time
	if every > 0 {
		next = time.After(every + every/2)
	}
	for restarts := 0; ; restarts++ {
		select {
		case <-stop:
			return
		case <-next:
		}
		next = time.After(every)
		r := c.replicas[restarts%len(c.replicas)]
		took, err := c.restart(r)
		if err != nil {
			log.Printf("restart of %s: %v", r.name, err)
		}
		log.Printf("restarted %s (SIGTERM, exit, start, ready) in %v", r.name, took.Round(time.Millisecond))
		os.WriteFile(filepath.Join(c.state, "restarts"), []byte(strconv.Itoa(restarts+1)), 0o644)
	}
}

// restart stops r with SIGTERM (SIGKILL after the drain and 5 s more)
// and starts it again on its port.
func (c *cluster) restart(r *replica) (time.Duration, error) {
	start := time.Now()
	r.stop(c.drain + 5*time.Second)
	err := c.startReplica(r)
	return time.Since(start), err
}

func (c *cluster) startReplica(r *replica) error {
	r.cmd = exec.Command(c.ferry, "serve", "--prefix", "never", "--addr", fmt.Sprintf("127.0.0.1:%d", r.port),
		"--redis", c.redis, "--max-sessions", strconv.Itoa(c.maxSessions), "--drain", c.drain.String(), "--", c.echo)
	r.cmd.Stderr = c.logFile(r.name)
	r.cmd.SysProcAttr = orphanless()
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(r.cmd, r.exited)
	if err := waitReady(r.port, r.exited, 30*time.Second); err != nil {
		return fmt.Errorf("%s: %w (its log: %s)", r.name, err, filepath.Join(c.state, r.name+".log"))
	}
	return os.WriteFile(filepath.Join(c.state, r.name+".pid"), []byte(strconv.Itoa(r.cmd.Process.Pid)+"\n"), 0o644)
}

// stop sends SIGTERM and waits for the exit, at most grace before SIGKILL.
func (r *replica) stop(grace time.Duration) {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(grace):
		log.Printf("%s did not exit %v after SIGTERM: SIGKILL", r.name, grace)
		r.cmd.Process.Kill()
		<-r.exited
	}
}

// orphanless keeps a child in scale's process group, so that the group's
// signal (loadgen ends a spawned server by its group) reaches it and its
// own children, and kills it if scale dies first.
func orphanless() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// down stops HAProxy, then every replica.
func (c *cluster) down() {
	if c.haproxy != nil && c.haproxy.Process != nil {
		c.haproxy.Process.Signal(syscall.SIGTERM)
		c.haproxy.Wait()
	}
	for _, r := range c.replicas {
		r.stop(c.drain + 5*time.Second)
	}
}

// logFile is the log of one process in the state folder (stderr if it
// cannot be made).
func (c *cluster) logFile(name string) *os.File {
	f, err := os.OpenFile(filepath.Join(c.state, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return os.Stderr
	}
	return f
}

// haproxyConfig mirrors deploy/haproxy/haproxy.cfg on loopback:
// round-robin with no affinity, health checks on /readyz, connection
// failures sent again to another replica (so nothing runs twice).
func haproxyConfig(port int, rs []*replica) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
  maxconn 8192
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
  retry-on conn-failure
frontend mcp
  bind 127.0.0.1:%d
  default_backend ferry
backend ferry
  balance roundrobin
  option httpchk
  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1
  default-server check inter 500ms fall 1 rise 1
`, port)
	for _, r := range rs {
		fmt.Fprintf(&b, "  server %s 127.0.0.1:%d\n", r.name, r.port)
	}
	return b.String()
}

// waitReady polls /readyz every 20 ms until it answers 200, the process
// exits, or limit passes.
func waitReady(port int, exited <-chan struct{}, limit time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	hc := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("exited before it was ready")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready after %v", limit)
}

// waitListening polls until something accepts connections on port.
func waitListening(port int, limit time.Duration) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("nothing listens on %s after %v", addr, limit)
}

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
