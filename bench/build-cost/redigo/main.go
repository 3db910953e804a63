// Command redigo makes the calls gateway/shared makes, with
// github.com/gomodule/redigo: for the build cost of that client beside
// go-redis's (bench/build-cost/measure.sh).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
)

var rotate = redis.NewScript(1, `return redis.call('SET', KEYS[1], ARGV[1])`)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(url string) error {
	pool := &redis.Pool{MaxIdle: 4, IdleTimeout: time.Minute, Dial: func() (redis.Conn, error) {
		return redis.DialURL(url, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second))
	}}
	defer pool.Close()
	c := pool.Get()
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		return err
	}
	if _, err := c.Do("SET", "k", "v", "NX"); err != nil {
		return err
	}
	if _, err := redis.String(c.Do("GET", "k")); err != nil {
		return err
	}
	if _, err := rotate.Do(c, "k", "w"); err != nil {
		return err
	}
	c.Send("GET", "level")
	c.Send("SMEMBERS", "subs")
	c.Flush()
	level, _ := redis.String(c.Receive())
	subs, err := redis.Strings(c.Receive())
	if err != nil {
		return err
	}
	c.Send("MULTI")
	c.Send("SET", "level", "debug", "PX", 60000)
	c.Send("SADD", "subs", "a")
	c.Send("PEXPIRE", "subs", 60000)
	c.Send("SREM", "subs", "a")
	c.Send("DEL", "level", "subs")
	c.Send("PUBLISH", "ch", "msg")
	if _, err := c.Do("EXEC"); err != nil {
		return err
	}
	psc := redis.PubSubConn{Conn: pool.Get()}
	defer psc.Close()
	if err := psc.Subscribe("ch"); err != nil {
		return err
	}
	fmt.Println(level, subs, psc.Receive())
	return nil
}
