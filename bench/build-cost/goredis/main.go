// Command goredis makes the calls gateway/shared makes with go-redis
// (github.com/redis/go-redis/v9): what the build of that package costs is
// measured with it by bench/build-cost/measure.sh.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

var rotate = redis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1])`)

func main() {
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string) error {
	ro, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.MaxRetries = time.Second, time.Second, time.Second, 1
	rdb := redis.NewClient(ro)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return err
	}
	if err := rdb.SetNX(ctx, "k", "v", 0).Err(); err != nil {
		return err
	}
	if _, err := rdb.Get(ctx, "k").Result(); err != nil {
		return err
	}
	if err := rotate.Run(ctx, rdb, []string{"k"}, "w").Err(); err != nil {
		return err
	}
	var level *redis.StringCmd
	var subs *redis.StringSliceCmd
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		level = p.Get(ctx, "level")
		subs = p.SMembers(ctx, "subs")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "level", "debug", time.Minute)
		p.SAdd(ctx, "subs", "a")
		p.Expire(ctx, "subs", time.Minute)
		p.SRem(ctx, "subs", "a")
		p.Del(ctx, "level", "subs")
		p.Publish(ctx, "ch", "msg")
		return nil
	})
	if err != nil {
		return err
	}
	sub := rdb.Subscribe(ctx, "ch")
	defer sub.Close()
	_ = sub.Channel()
	fmt.Println(level.Val(), subs.Val())
	return nil
}
