// Command train12306 is a stand-in for the 12306 train-ticket MCP server
// (the npm package 12306-mcp, which queries China Railway's 12306 site)
// with a small made-up timetable, written with ferry's server library. It
// offers the tools of the real server that a "which trains go from
// Beijing to Shanghai tomorrow?" agent uses, with their names, arguments
// and kinds of answer, so that the flow of ../../../shared/seeds/001 (a
// ReAct agent on the 12306 server) runs without the internet:
//
//	get-current-date           today in China (yyyy-MM-dd)
//	get-stations-code-in-city  the stations of a city
//	get-station-code-of-citys  a city's main station ("北京|上海")
//	get-tickets                the trains between two stations on a date
//	get-train-route-stations   the stops of a train
//
// TRAIN12306_TODAY=yyyy-MM-dd fixes today, for tests.
//
//	go run ./examples/train12306
package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The connection ends when the client closes stdin: not an error.
	if err := New().Run(ctx, stdio.ServerStream()); err != nil && ctx.Err() == nil && !errors.Is(err, jsonrpc.ErrClosed) {
		fmt.Fprintln(os.Stderr, "train12306:", err)
	}
}

type station struct{ name, code, city string }

var stations = []station{
	{"北京", "BJP", "北京"}, {"北京南", "VNP", "北京"}, {"北京西", "BXP", "北京"}, {"北京丰台", "FTP", "北京"},
	{"上海", "SHH", "上海"}, {"上海虹桥", "AOH", "上海"}, {"上海南", "SNH", "上海"},
	{"天津南", "TIP", "天津"}, {"济南西", "JGK", "济南"}, {"南京南", "NKH", "南京"}, {"杭州东", "HGH", "杭州"},
}

type stop struct {
	station    string
	arr, dep   string
	dayOfStart int
}

type train struct {
	code  string
	stops []stop
	// seats are the classes and prices in yuan.
	seats []seat
}

type seat struct {
	class string
	price int
}

var highSpeed = []seat{{"商务座", 2318}, {"一等座", 1060}, {"二等座", 662}}
var sleeper = []seat{{"软卧", 703}, {"硬卧", 457}, {"二等座", 309}}

var trains = []train{
	{"G1", []stop{{"北京南", "", "07:00", 0}, {"南京南", "10:10", "10:12", 0}, {"上海虹桥", "11:29", "", 0}}, highSpeed},
	{"G3", []stop{{"北京南", "", "08:00", 0}, {"济南西", "09:24", "09:26", 0}, {"上海虹桥", "12:32", "", 0}}, highSpeed},
	{"G101", []stop{{"北京南", "", "06:36", 0}, {"天津南", "07:11", "07:13", 0}, {"济南西", "08:13", "08:15", 0}, {"南京南", "10:26", "10:28", 0}, {"上海虹桥", "12:38", "", 0}}, highSpeed},
	{"G7", []stop{{"北京南", "", "19:00", 0}, {"上海虹桥", "23:18", "", 0}}, highSpeed},
	{"D705", []stop{{"北京", "", "19:36", 0}, {"南京南", "03:02", "03:06", 1}, {"上海", "07:39", "", 1}}, sleeper},
	{"G2", []stop{{"上海虹桥", "", "07:00", 0}, {"南京南", "08:13", "08:15", 0}, {"北京南", "11:29", "", 0}}, highSpeed},
	{"G7301", []stop{{"上海虹桥", "", "09:00", 0}, {"杭州东", "09:45", "", 0}}, []seat{{"一等座", 117}, {"二等座", 73}}},
}

// New returns the server.
func New() *server.Server {
	s := server.New(protocol.Implementation{Name: "12306-mcp (ferry stand-in)", Version: "0.1.0"},
		&server.Options{Instructions: "Train tickets of China Railway 12306 (a made-up timetable)."})
	readOnly := &protocol.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)}
	server.AddTool(s, &protocol.Tool{Name: "get-current-date", Annotations: readOnly,
		Description: "Returns today's date in China (Asia/Shanghai), as yyyy-MM-dd. Use it to turn relative dates such as 'tomorrow' into the date get-tickets wants."},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return today().Format(time.DateOnly), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "get-stations-code-in-city", Annotations: readOnly,
		Description: "Lists every station of a city with its station code."},
		func(ctx context.Context, req *server.Request, in struct {
			City string `json:"city" description:"the city's Chinese name, such as 北京"`
		}) (string, error) {
			var list []map[string]string
			for _, st := range stations {
				if st.city == in.City {
					list = append(list, map[string]string{"station_code": st.code, "station_name": st.name})
				}
			}
			if len(list) == 0 {
				return "", fmt.Errorf("no stations found in %q", in.City)
			}
			return marshal(list), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "get-station-code-of-citys", Annotations: readOnly,
		Description: "Returns the station code of the main station of each city: citys holds city names joined by |, such as 北京|上海. The codes are what get-tickets takes."},
		func(ctx context.Context, req *server.Request, in struct {
			Citys string `json:"citys" description:"city names joined by |"`
		}) (string, error) {
			out := map[string]any{}
			for _, city := range strings.Split(in.Citys, "|") {
				city = strings.TrimSpace(city)
				if st, ok := mainStation(city); ok {
					out[city] = map[string]string{"station_code": st.code, "station_name": st.name}
				} else {
					out[city] = map[string]string{"error": "no station found"}
				}
			}
			return marshal(out), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "get-tickets", Annotations: readOnly,
		Description: "Lists the trains from one station (or city) to another on a date, with times and the tickets left in each class. fromStation and toStation are station codes (from get-station-code-of-citys)."},
		func(ctx context.Context, req *server.Request, in ticketsIn) (*protocol.CallToolResult, error) {
			return tickets(in), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "get-train-route-stations", Annotations: readOnly,
		Description: "Lists the stops of a train, with arrival and departure times."},
		func(ctx context.Context, req *server.Request, in struct {
			TrainCode string `json:"trainCode" description:"the train, such as G1"`
		}) (string, error) {
			for _, t := range trains {
				if t.code == strings.ToUpper(in.TrainCode) {
					var b strings.Builder
					for i, st := range t.stops {
						fmt.Fprintf(&b, "%d %s 到达 %s 出发 %s\n", i+1, st.station, orDash(st.arr), orDash(st.dep))
					}
					return b.String(), nil
				}
			}
			return "", fmt.Errorf("no train %q", in.TrainCode)
		})
	return s
}

type ticketsIn struct {
	Date        string `json:"date" description:"the date of travel, yyyy-MM-dd (not before today)"`
	FromStation string `json:"fromStation" description:"the station code of departure, such as BJP"`
	ToStation   string `json:"toStation" description:"the station code of arrival, such as SHH"`
}

// tickets answers get-tickets: the trains that stop at a station of the
// departure's city and, later, at one of the arrival's.
func tickets(in ticketsIn) *protocol.CallToolResult {
	fail := func(msg string) *protocol.CallToolResult {
		return &protocol.CallToolResult{IsError: true, Content: []protocol.Content{protocol.TextContent("Error: " + msg)}}
	}
	day, err := time.ParseInLocation(time.DateOnly, in.Date, china)
	if err != nil {
		return fail("the date must be yyyy-MM-dd")
	}
	if day.Before(today()) {
		return fail("the date cannot be earlier than today")
	}
	from, ok1 := byCode(in.FromStation)
	to, ok2 := byCode(in.ToStation)
	if !ok1 || !ok2 {
		return fail("unknown station code; use get-station-code-of-citys")
	}
	var b strings.Builder
	b.WriteString("车次|出发站 -> 到达站|出发时间 -> 到达时间|历时\n")
	n := 0
	for _, t := range trains {
		i, j := stopIn(t, from.city, 0), -1
		if i >= 0 {
			j = stopIn(t, to.city, i+1)
		}
		if i < 0 || j < 0 {
			continue
		}
		dep, arr := t.stops[i], t.stops[j]
		fmt.Fprintf(&b, "%s %s(telecode:%s) -> %s(telecode:%s) %s -> %s 历时：%s\n",
			t.code, dep.station, code(dep.station), arr.station, code(arr.station), dep.dep, arr.arr, duration(dep, arr))
		for _, s := range t.seats {
			fmt.Fprintf(&b, "- %s: %s %d元\n", s.class, left(in.Date, t.code, s.class), s.price)
		}
		n++
	}
	if n == 0 {
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("没有查询到相关车次信息")}}
	}
	return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(b.String())}}
}

func stopIn(t train, city string, from int) int {
	for k := from; k < len(t.stops); k++ {
		if st, ok := byName(t.stops[k].station); ok && st.city == city {
			return k
		}
	}
	return -1
}

// left is a made-up, stable number of tickets left.
func left(date, train, class string) string {
	h := fnv.New32a()
	h.Write([]byte(date + train + class))
	switch n := h.Sum32() % 25; {
	case n == 0:
		return "无票"
	case n > 20:
		return "有票"
	default:
		return fmt.Sprintf("剩余%d张票", n)
	}
}

func duration(dep, arr stop) string {
	d, _ := time.Parse("15:04", dep.dep)
	a, _ := time.Parse("15:04", arr.arr)
	m := int(a.Sub(d).Minutes()) + (arr.dayOfStart-dep.dayOfStart)*24*60
	return fmt.Sprintf("%02d:%02d", m/60, m%60)
}

func mainStation(city string) (station, bool) {
	for _, st := range stations {
		if st.name == city {
			return st, true
		}
	}
	return station{}, false
}

func byCode(c string) (station, bool) {
	for _, st := range stations {
		if st.code == strings.ToUpper(c) {
			return st, true
		}
	}
	return station{}, false
}

func byName(n string) (station, bool) {
	for _, st := range stations {
		if st.name == n {
			return st, true
		}
	}
	return station{}, false
}

func code(name string) string {
	st, _ := byName(name)
	return st.code
}

var china = time.FixedZone("CST", 8*3600)

// today is the date in China, or TRAIN12306_TODAY.
func today() time.Time {
	if s := os.Getenv("TRAIN12306_TODAY"); s != "" {
		if d, err := time.ParseInLocation(time.DateOnly, s, china); err == nil {
			return d
		}
	}
	y, m, d := time.Now().In(china).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, china)
}

func marshal(v any) string {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(errors.New("train12306: " + err.Error()))
	}
	return string(b)
}

func orDash(s string) string {
	if s == "" {
		return "----"
	}
	return s
}

func ptr[T any](v T) *T { return &v }
