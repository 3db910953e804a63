package shared

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// Every key of a task expires; a finished task never changes; an owner's
// tasks are listed by page; a lease lapses unless renewed.
func TestTaskStoreInRedis(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := open(t, url)
	now := time.Now().UTC()
	for i := range 3 {
		rec := &gateway.TaskRecord{ID: fmt.Sprint("t", i), Owner: "caller:alice", Server: "up", Tool: "slow", Replica: "r1",
			Status: protocol.TaskWorking, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now,
			TTL: time.Minute, PollInterval: time.Second}
		if err := s.CreateTask(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{s.taskKey("t0"), s.ownerKey("caller:alice")} {
		if ttl := pttl(t, s, k); ttl <= 0 || ttl > time.Minute+time.Second {
			t.Errorf("%s expires in %v", k, ttl)
		}
	}
	got, err := s.GetTask(ctx, "t0")
	if err != nil || got.Status != protocol.TaskWorking || got.TTL != time.Minute || !got.CreatedAt.Equal(now) {
		t.Fatalf("GetTask: %+v, %v", got, err)
	}
	done := *got
	done.Status, done.Result = protocol.TaskCompleted, []byte(`{"content":[]}`)
	if ok, err := s.UpdateTask(ctx, &done); !ok || err != nil {
		t.Fatalf("completing: %v, %v", ok, err)
	}
	again := done
	again.Status = protocol.TaskCancelled
	if ok, err := s.UpdateTask(ctx, &again); ok || err != nil {
		t.Errorf("a finished task changed: %v, %v", ok, err)
	}
	if got, _ := s.GetTask(ctx, "t0"); got.Status != protocol.TaskCompleted || string(got.Result) != `{"content":[]}` {
		t.Errorf("after the refused change: %+v", got)
	}
	if ttl := pttl(t, s, s.taskKey("t0")); ttl <= 0 {
		t.Errorf("an updated task lost its expiry: %v", ttl)
	}
	must(t, s, "DEL", s.taskKey("t1")) // as if it expired
	page, next, err := s.ListTasks(ctx, "caller:alice", "", 1)
	if err != nil || len(page) != 1 || page[0].ID != "t0" || next == "" {
		t.Fatalf("first page: %v, %q, %v", page, next, err)
	}
	page, next, err = s.ListTasks(ctx, "caller:alice", next, 5)
	if err != nil || len(page) != 1 || page[0].ID != "t2" || next != "" {
		t.Errorf("second page: %v, %q, %v", page, next, err)
	}
	if page, _, _ := s.ListTasks(ctx, "caller:bob", "", 5); len(page) != 0 {
		t.Errorf("bob lists alice's tasks: %v", page)
	}
	if _, err := s.GetTask(ctx, "t1"); err != gateway.ErrTaskNotFound {
		t.Errorf("an expired task: %v", err)
	}
	if err := s.Beat(ctx, "r1", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ttl := pttl(t, s, s.leaseKey("r1")); ttl <= 0 || ttl > 50*time.Millisecond {
		t.Errorf("the lease expires in %v", ttl)
	}
	if alive, err := s.Alive(ctx, "r1"); !alive || err != nil {
		t.Errorf("Alive after Beat: %v, %v", alive, err)
	}
	if alive, err := s.Alive(ctx, "r2"); alive || err != nil {
		t.Errorf("Alive without Beat: %v, %v", alive, err)
	}
}

// taskServer is a remote server whose "slow" tool runs as a task.
func taskServer(t *testing.T) *config.Server {
	s := server.New(protocol.Implementation{Name: "up", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "slow", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}},
		func(ctx context.Context, req *server.Request, in struct{ Ms int }) (string, error) {
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return fmt.Sprintf("slept %d", in.Ms), nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
		s.Close()
	})
	return &config.Server{Name: "up", Transport: config.HTTP, URL: ts.URL + "/mcp"}
}

// replicas runs n gateways for up that share the Redis at url, behind a
// round-robin balancer, and returns its URL and the gateways.
func replicas(t *testing.T, ctx context.Context, url string, up *config.Server, n int) (string, []*gateway.Gateway) {
	t.Helper()
	keys, err := open(t, url).Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		t.Fatal(err)
	}
	lb := &roundRobin{}
	var gs []*gateway.Gateway
	for range n {
		g, err := gateway.New([]*config.Server{up}, &gateway.Options{
			Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: open(t, url)},
			Tasks:    gateway.TaskOptions{PollInterval: 20 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		if err := g.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		lb.replicas = append(lb.replicas, g)
		gs = append(gs, g)
	}
	ts := httptest.NewServer(lb)
	t.Cleanup(ts.Close)
	return ts.URL, gs
}

// A task made through one replica is read, and its result fetched,
// through the other, in both eras: each request goes to the next replica.
func TestTasksAcrossReplicas(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lbURL, _ := replicas(t, ctx, url, taskServer(t), 2)
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.Version20260728} {
		t.Run(version, func(t *testing.T) {
			c, err := client.Connect(ctx, &streamable.Transport{URL: lbURL + "/mcp"}, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var id string
			_, err = c.Call(ctx, "up__slow", map[string]int{"Ms": 200}, client.AsTask(&client.TaskOptions{Detach: true,
				WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { id = t.TaskID }}}))
			if err != nil || id == "" {
				t.Fatalf("made no task: %v", err)
			}
			for range 2 { // one on each replica
				if st, err := c.GetTask(ctx, id); err != nil || st.Status != protocol.TaskWorking {
					t.Fatalf("GetTask: %+v, %v", st, err)
				}
			}
			for range 2 {
				res, err := c.WaitTask(ctx, id, nil)
				if err != nil || len(res.Content) != 1 || res.Content[0].Text != "slept 200" {
					t.Fatalf("WaitTask: %+v, %v", res, err)
				}
			}
		})
	}
}

// A task whose replica died (its lease lapsed, the record still
// working) is failed, saying so, by the replica that reads it; with
// Redis gone, making a task fails at once with an error.
func TestTaskOfDeadReplicaFails(t *testing.T) {
	url, stop := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lbURL, _ := replicas(t, ctx, url, taskServer(t), 1)
	s := open(t, url)
	now := time.Now().UTC()
	// What Redis holds once the replica that runs a task is killed.
	dead := &gateway.TaskRecord{ID: "0123456789abcdef0123456789abcdef", Stateless: true, Server: "up", Tool: "slow",
		Replica: "killed-replica", Status: protocol.TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: time.Hour, PollInterval: time.Second}
	if err := s.CreateTask(ctx, dead); err != nil {
		t.Fatal(err)
	}
	c, err := client.Connect(ctx, &streamable.Transport{URL: lbURL + "/mcp"}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.GetTask(ctx, dead.ID)
	if err != nil || st.Status != protocol.TaskFailed || !strings.Contains(st.StatusMessage, "killed-replica") || !strings.Contains(st.StatusMessage, "stopped") {
		t.Fatalf("the dead replica's task: %+v, %v", st, err)
	}
	if rec, _ := s.GetTask(ctx, dead.ID); rec.Status != protocol.TaskFailed {
		t.Errorf("the record stays %s", rec.Status)
	}
	stop()
	start := time.Now()
	_, err = c.Call(ctx, "up__slow", map[string]int{"Ms": 1}, client.AsTask(nil))
	if err == nil || !strings.Contains(err.Error(), "creating the task") {
		t.Errorf("a task with Redis gone: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("it failed after %v", d)
	}
}

// A task that ends while Redis cannot take writes (paused here, as a
// restart or a failover would) still gets its result stored once Redis
// takes them again, rather than staying working for good.
func TestTaskEndStoredAfterRedisPause(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lbURL, _ := replicas(t, ctx, url, taskServer(t), 1)
	c, err := client.Connect(ctx, &streamable.Transport{URL: lbURL + "/mcp"}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	_, err = c.Call(ctx, "up__slow", map[string]int{"Ms": 300}, client.AsTask(&client.TaskOptions{Detach: true,
		WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { id = t.TaskID }}}))
	if err != nil || id == "" {
		t.Fatalf("made no task: %v", err)
	}
	// Writes wait for 6 s: the end, 300 ms in, fails its first attempts
	// (each within the store's timeout).
	s := open(t, url)
	if _, err := s.do(ctx, "CLIENT", "PAUSE", 6000, "WRITE"); err != nil {
		t.Fatal(err)
	}
	res, err := c.WaitTask(ctx, id, &client.WaitOptions{PollInterval: 200 * time.Millisecond})
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "slept 300" {
		t.Fatalf("the task after the pause: %+v, %v", res, err)
	}
}

// A replica that runs no task sends Redis nothing for tasks: a legacy
// call must cost no Redis command, and the lease is only needed by a
// running task.
func TestIdleReplicaSendsNoBeat(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	keys, err := open(t, url).Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New([]*config.Server{taskServer(t)}, &gateway.Options{
		Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: open(t, url)},
		Tasks:    gateway.TaskOptions{Lease: 30 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	s := open(t, url)
	sets := func() string {
		info, _ := redis.String(s.do(ctx, "INFO", "commandstats"))
		for line := range strings.Lines(info) {
			if strings.HasPrefix(line, "cmdstat_set:") {
				return line
			}
		}
		return ""
	}
	before := sets()
	// Ten leases' time: a replica that beat while idle would have, ten
	// times over.
	time.Sleep(300 * time.Millisecond)
	if after := sets(); after != before {
		t.Errorf("an idle replica wrote to Redis: %q, then %q", before, after)
	}
}

// One owner holds at most ownerTasks tasks in Redis: its oldest finished
// one makes room for the next, and with all running it is refused, while
// another owner's tasks stay.
func TestTaskStoreOwnerShare(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := open(t, url)
	now := time.Now().UTC()
	add := func(id, owner string, i int) error {
		return s.CreateTask(ctx, &gateway.TaskRecord{ID: id, Owner: owner, Status: protocol.TaskWorking,
			CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now, TTL: time.Minute})
	}
	if err := add("other", "caller:bob", 0); err != nil {
		t.Fatal(err)
	}
	for i := range ownerTasks {
		if err := add(fmt.Sprint("a", i), "caller:alice", i); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	if err := add("over", "caller:alice", ownerTasks); err == nil || !strings.Contains(err.Error(), "too many tasks") {
		t.Fatalf("a task past the share: %v", err)
	}
	first, _ := s.GetTask(ctx, "a0")
	first.Status = protocol.TaskCompleted
	if ok, err := s.UpdateTask(ctx, first); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := add("over", "caller:alice", ownerTasks); err != nil {
		t.Fatalf("with a finished task to drop: %v", err)
	}
	if _, err := s.GetTask(ctx, "a0"); err != gateway.ErrTaskNotFound {
		t.Errorf("the finished task that made room: %v", err)
	}
	for _, id := range []string{"a1", "over", "other"} {
		if _, err := s.GetTask(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
