package fakemodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

var route = regexp.MustCompile(`从\s*(\p{Han}+?)\s*(?:站)?\s*到\s*(\p{Han}+?)\s*(?:站)?(?:的|有|，|,|？|\?|$)`)

// Train12306 is the ReAct agent of the seeds (../../../../shared/seeds/001)
// on the 12306 server's tools, for a question such as
// "明天从北京到上海有哪些火车？": it asks the server for today's date, then
// for the cities' station codes, then for the trains of the day, and
// answers from what the tools returned, one step per request as a model
// that reasons and acts would. Other requests go to [Directives].
func Train12306(req *api.ChatRequest) Reply {
	v := Read(req)
	m := route.FindStringSubmatch(v.Question)
	if m == nil || len(v.Tools) == 0 {
		return Directives(req)
	}
	from, to := m[1], m[2]
	date, codes, tickets := v.result("get-current-date"), v.result("get-station-code-of-citys"), v.result("get-tickets")
	switch {
	case date == "":
		return Reply{Text: "我先查一下今天的日期。", Calls: []Call{{Name: v.resolve("get-current-date"), Args: map[string]any{}}}}
	case codes == "":
		return Reply{Text: "再查两个城市的车站代码。", Calls: []Call{{Name: v.resolve("get-station-code-of-citys"), Args: map[string]any{"citys": from + "|" + to}}}}
	case tickets == "":
		day, err := time.Parse(time.DateOnly, strings.TrimSpace(date))
		if err != nil {
			return Reply{Text: "日期看不懂：" + date}
		}
		switch {
		case strings.Contains(v.Question, "后天"):
			day = day.AddDate(0, 0, 2)
		case strings.Contains(v.Question, "明天"):
			day = day.AddDate(0, 0, 1)
		}
		var c map[string]struct {
			Code string `json:"station_code"`
		}
		if err := json.Unmarshal([]byte(codes), &c); err != nil || c[from].Code == "" || c[to].Code == "" {
			return Reply{Text: "没有找到车站代码：" + codes}
		}
		return Reply{Calls: []Call{{Name: v.resolve("get-tickets"), Args: map[string]any{
			"date": day.Format(time.DateOnly), "fromStation": c[from].Code, "toStation": c[to].Code}}}}
	}
	return Reply{Text: answer(v, from, to, tickets)}
}

// result is the content of the latest result of a tool (by its server's
// name for it).
func (v View) result(tool string) string {
	for i := len(v.Results) - 1; i >= 0; i-- {
		r := v.Results[i]
		if r.Name == tool || strings.HasSuffix(r.Name, "__"+tool) {
			return r.Content
		}
	}
	return ""
}

// answer sums up get-tickets' answer: one line per train, with its
// second-class seats (or the cheapest class).
func answer(v View, from, to, tickets string) string {
	var date string
	for _, c := range v.Req.Messages {
		for _, tc := range c.ToolCalls {
			if strings.HasSuffix(tc.Function.Name, "get-tickets") {
				if d, ok := tc.Function.Arguments.Get("date"); ok {
					date = fmt.Sprint(d)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s从%s到%s的火车有：\n", date, from, to)
	n := 0
	var seats []string
	flush := func() {
		if len(seats) > 0 {
			b.WriteString("（" + strings.Join(seats, "；") + "）")
		}
		b.WriteString("\n")
		seats = nil
	}
	for _, line := range strings.Split(tickets, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "车次"):
		case strings.HasPrefix(line, "- "):
			if strings.Contains(line, "二等座") || strings.Contains(line, "硬卧") {
				seats = append(seats, strings.TrimPrefix(line, "- "))
			}
		default:
			if n > 0 {
				flush()
			}
			n++
			fmt.Fprintf(&b, "%d. %s", n, trainLine(line))
		}
	}
	if n == 0 {
		return "没有查到" + from + "到" + to + "的车次：" + tickets
	}
	flush()
	fmt.Fprintf(&b, "共 %d 趟。", n)
	return b.String()
}

var trainRE = regexp.MustCompile(`^(\S+) (\S+?)\(telecode:\w+\) -> (\S+?)\(telecode:\w+\) (\S+) -> (\S+) 历时：(\S+)`)

func trainLine(line string) string {
	m := trainRE.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	return fmt.Sprintf("%s %s %s 开，%s %s 到，历时 %s", m[1], m[2], m[4], m[3], m[5], m[6])
}
