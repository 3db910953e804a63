// Command resp makes the calls gateway/shared makes, with the minimal
// RESP client beside it: the floor of what a Redis client costs to build
// (bench/build-cost/measure.sh).
package main

import (
	"fmt"
	"os"
)

var rotate = NewScript(`return redis.call('SET', KEYS[1], ARGV[1])`)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(url string) error {
	o, err := ParseURL(url)
	if err != nil {
		return err
	}
	p := &Pool{opts: o}
	c, err := p.Get()
	if err != nil {
		return err
	}
	defer p.Put(c)
	for _, cmd := range [][]any{{"PING"}, {"SET", "k", "v", "NX"}, {"GET", "k"}} {
		if _, err := c.Do(cmd...); err != nil && err != ErrNil {
			return err
		}
	}
	if _, err := rotate.Run(c, []string{"k"}, "w"); err != nil {
		return err
	}
	got, err := c.Pipeline([]any{"GET", "level"}, []any{"SMEMBERS", "subs"})
	if err != nil && err != ErrNil {
		return err
	}
	if _, err := c.Multi([]any{"SET", "level", "debug", "PX", 60000}, []any{"SADD", "subs", "a"},
		[]any{"PEXPIRE", "subs", 60000}, []any{"SREM", "subs", "a"}, []any{"DEL", "level", "subs"},
		[]any{"PUBLISH", "ch", "msg"}); err != nil {
		return err
	}
	sub, err := Dial(o)
	if err != nil {
		return err
	}
	defer sub.Close()
	if _, err := sub.Do("SUBSCRIBE", "ch"); err != nil {
		return err
	}
	fmt.Println(got)
	return nil
}
