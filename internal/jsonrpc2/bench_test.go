package jsonrpc2

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var smallToolsCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris","units":"metric"},"_meta":{"progressToken":"tok-42"}}}`)

func largeToolsCall() []byte {
	return []byte(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"` +
		strings.Repeat("lorem ipsum dolor sit amet, ", 64<<10/28+1)[:64<<10] + `"},"_meta":{"progressToken":7}}}`)
}

func benchmarkDecode(b *testing.B, msg []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		m, err := Decode(msg, Limits{})
		if err != nil || m.Method != "tools/call" {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSmall(b *testing.B) { benchmarkDecode(b, smallToolsCall) }

func BenchmarkDecode64KiB(b *testing.B) { benchmarkDecode(b, largeToolsCall()) }

// BenchmarkDecodeResult is the decoding of a tools/call's answer, with a
// text of 20 bytes and of 64 KiB.
func BenchmarkDecodeResult(b *testing.B) {
	for _, size := range []int{20, 64 << 10} {
		msg := []byte(`{"jsonrpc":"2.0","id":43,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}]}}`)
		name := "20B"
		if size > 20 {
			name = "64KiB"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				m, err := Decode(msg, Limits{})
				if err != nil || m.Result == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode64KiBUnicode(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"` +
		strings.Repeat("héllo wörld ☃ 😀 ", 64<<10/24) + `"}}}`)
	benchmarkDecode(b, msg)
}

func BenchmarkValid64KiB(b *testing.B) {
	msg := largeToolsCall()
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := valid(msg, DefaultMaxDepth); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendMessageSmall(b *testing.B) {
	m := &Message{ID: Int64ID(42), Result: jsontext.Value(`{"content":[{"type":"text","text":"18°C, sunny"}],"isError":false}`)}
	buf, _ := AppendMessage(nil, m)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf, _ = AppendMessage(buf[:0], m)
	}
}

func BenchmarkAppendMessageBody(b *testing.B) {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type result struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError"`
	}
	m := &Message{ID: Int64ID(42), Body: &result{Content: []content{{"text", "18°C, sunny"}}}}
	buf, _ := AppendMessage(nil, m)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf, _ = AppendMessage(buf[:0], m)
	}
}

func BenchmarkConnRoundTrip(b *testing.B) {
	a, s := newPipe()
	client := newConn(context.Background(), a, nil)
	server := newConn(context.Background(), s, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
		return m.Params, nil
	})})
	defer func() {
		client.Close()
		server.Close()
		client.Wait()
		server.Wait()
	}()
	params := jsontext.Value(`{"name":"get_weather","arguments":{"city":"Paris"}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Call(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConnRoundTripParallel(b *testing.B) {
	a, s := newPipe()
	client := newConn(context.Background(), a, nil)
	server := newConn(context.Background(), s, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
		return m.Params, nil
	})})
	defer func() {
		client.Close()
		server.Close()
		client.Wait()
		server.Wait()
	}()
	params := jsontext.Value(`{"name":"get_weather","arguments":{"city":"Paris"}}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.Call(context.Background(), "tools/call", params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
