package main

import (
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"strings"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

func chartCmd(args []string) error {
	fs := flag.NewFlagSet("loadgen chart", flag.ExitOnError)
	out := fs.String("o", "", "write the SVG here (default stdout)")
	title := fs.String("title", "MCP benchmark", "title of the chart")
	fs.Parse(args)
	rs, err := load(fs.Args())
	if err != nil {
		return err
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	_, err = io.WriteString(w, chart(rs, *title))
	return err
}

// Geometry of the chart, in pixels.
const (
	left      = 70
	groupW    = 230
	barArea   = 80
	rowH      = 140
	panelHead = 26
	legendH   = 40
)

// palette colours the implementations: ferry stands out, the ceilings
// are grey, the peers share the rest in a fixed order.
var palette = []string{"#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7"}

func colour(impl string, others map[string]string) string {
	switch impl {
	case "ferry", "ferry-serve", "2-replicas-haproxy":
		return "#1f5fbf"
	case "raw", "ferry-http", "bound", "1-replica":
		return "#9a9a9a"
	}
	if c, ok := others[impl]; ok {
		return c
	}
	c := palette[len(others)%len(palette)]
	others[impl] = c
	return c
}

type panel struct {
	title string
	t     results
}

func panels(rs results) []panel {
	var ps []panel
	for _, suite := range suites {
		for _, era := range eras {
			for _, tr := range transports {
				if t := rs.where(suite, era, tr); len(t) > 0 {
					ps = append(ps, panel{fmt.Sprintf("%s · %s · %s", suiteTitle[suite], era, tr), t})
				}
			}
		}
	}
	return ps
}

// chart draws, for every table of the report, the calls/s and the p99
// latency of each cell, one bar per implementation, each group of bars
// scaled to its own largest value (the figures are written on the bars).
func chart(rs results, title string) string {
	ps := panels(rs)
	others := map[string]string{}
	var impls []string
	for _, p := range ps {
		for _, r := range p.t {
			if !strings.Contains(strings.Join(impls, "\x00")+"\x00", r.Impl+"\x00") {
				impls = append(impls, r.Impl)
			}
		}
	}
	width := left + len(cells)*groupW + 10
	height := legendH + 20 + len(ps)*(panelHead+2*rowH)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/><text x="10" y="18" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	x := 10
	for _, impl := range impls {
		fmt.Fprintf(&b, `<rect x="%d" y="28" width="12" height="12" fill="%s"/><text x="%d" y="38">%s</text>`+"\n", x, colour(impl, others), x+16, html.EscapeString(impl))
		x += 24 + 7*len(impl)
	}
	y := legendH + 20
	for _, p := range ps {
		fmt.Fprintf(&b, `<text x="10" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", y+16, html.EscapeString(p.title))
		y += panelHead
		for _, metric := range []string{"calls/s", "p99 µs"} {
			drawRow(&b, p.t, metric, y, others)
			y += rowH
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func metricOf(p *harness.Phase, metric string) float64 {
	if p == nil || p.Verified == 0 {
		return 0
	}
	if metric == "calls/s" {
		return p.CallsPerS
	}
	return p.P99us
}

func drawRow(b *strings.Builder, t results, metric string, y int, others map[string]string) {
	base := y + 36 + barArea
	fmt.Fprintf(b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", base-barArea/2, metric)
	for gi, c := range cells {
		gx := left + gi*groupW
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", gx, base+14, c)
		top := 0.0
		for _, r := range t {
			top = max(top, metricOf(phase(r, c, "closed"), metric))
		}
		barW := min(36, (groupW-20)/max(len(t), 1))
		for i, r := range t {
			v := metricOf(phase(r, c, "closed"), metric)
			bx := gx + i*barW
			if v == 0 || top == 0 {
				fmt.Fprintf(b, `<text x="%d" y="%d" fill="#999">–</text>`+"\n", bx+barW/2-3, base-2)
				continue
			}
			h := max(1, int(float64(barArea)*v/top))
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %s %s: %s</title></rect>`+"\n",
				bx, base-h, barW-3, h, colour(r.Impl, others), html.EscapeString(r.Impl), c, metric, num(v))
			fmt.Fprintf(b, `<text x="%d" y="%d" font-size="9" transform="rotate(-90 %d %d)">%s</text>`+"\n",
				bx+barW/2+3, base-h-3, bx+barW/2+3, base-h-3, short(v))
		}
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", gx, base, gx+len(t)*barW, base)
	}
}

// short writes a figure in three digits: 950, 12.3k, 1.2M.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
