package web

import (
	"fmt"
	"html"
	"html/template"
	"strings"
)

// The dashboard's charts are SVG drawn on the server (DESIGN §12): no
// charting library, nothing run in the browser, readable without
// JavaScript. Each has a <title> and <desc> for screen readers, and the page
// shows the same figures in a table next to it.

// bar is one labelled value of a bar chart.
type bar struct {
	Label string
	Value int64
}

// Bar chart geometry: a label column, then bars up to barsWidth.
const (
	barLabelWidth = 190
	barsWidth     = 380
	barRow        = 30
	barHeight     = 20
)

// barChart draws horizontal bars, one per row, their value at the end.
func barChart(title, desc string, bars []bar) template.HTML {
	var peak int64 = 1
	for _, b := range bars {
		peak = max(peak, b.Value)
	}
	width, height := barLabelWidth+barsWidth+60, len(bars)*barRow+10
	var s strings.Builder
	openSVG(&s, "chart-phases", width, height, title, desc)
	for i, b := range bars {
		y := 5 + i*barRow
		w := int(float64(b.Value) / float64(peak) * barsWidth)
		fmt.Fprintf(&s, `<g class="bar"><text x="%d" y="%d" text-anchor="end" font-size="13" fill="#1d2733">%s</text>`,
			barLabelWidth-8, y+barHeight-5, esc(b.Label))
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%d" height="%d" rx="3" fill="#0b5cad"><title>%s: %d</title></rect>`,
			barLabelWidth, y, max(w, 1), barHeight, esc(b.Label), b.Value)
		fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="13" fill="#1d2733">%d</text></g>`, barLabelWidth+max(w, 1)+6, y+barHeight-5, b.Value)
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// point is one month of the line chart.
type point struct {
	Label string // "11/2026"
	Value int64
	Tip   string // the point's tooltip
}

// Line chart geometry.
const (
	lineLeft   = 48
	lineTop    = 16
	lineWidth  = 600
	lineHeight = 200
	lineBottom = 44 // the month labels
)

// lineChart draws values over months: a y axis from zero with a few round
// ticks, a polyline and a dot per month with its figures as tooltip.
func lineChart(title, desc string, pts []point) template.HTML {
	var peak int64
	for _, p := range pts {
		peak = max(peak, p.Value)
	}
	step := tickStep(peak)
	top := step * ((peak + step - 1) / step)
	if top == 0 {
		top = step
	}
	width, height := lineLeft+lineWidth+36, lineTop+lineHeight+lineBottom
	x := func(i int) int {
		if len(pts) < 2 {
			return lineLeft + lineWidth/2
		}
		return lineLeft + i*lineWidth/(len(pts)-1)
	}
	y := func(v int64) int { return lineTop + lineHeight - int(float64(v)/float64(top)*lineHeight) }

	var s strings.Builder
	openSVG(&s, "chart-monthly", width, height, title, desc)
	s.WriteString(`<g class="axis" font-size="12" fill="#5b6675">`)
	for v := int64(0); v <= top; v += step {
		fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d5dbe3"/>`, lineLeft, y(v), lineLeft+lineWidth, y(v))
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%d</text>`, lineLeft-6, y(v)+4, v)
	}
	for i, p := range pts {
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, x(i), lineTop+lineHeight+18+(i%2)*14, esc(p.Label))
	}
	s.WriteString(`</g>`)
	if len(pts) > 0 {
		coords := make([]string, len(pts))
		for i, p := range pts {
			coords[i] = fmt.Sprintf("%d,%d", x(i), y(p.Value))
		}
		fmt.Fprintf(&s, `<polyline points="%s" fill="none" stroke="#0b5cad" stroke-width="2.5"/>`, strings.Join(coords, " "))
		for i, p := range pts {
			fmt.Fprintf(&s, `<circle cx="%d" cy="%d" r="4" fill="#0b5cad"><title>%s</title></circle>`, x(i), y(p.Value), esc(p.Tip))
		}
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// tickStep is a round distance between the y axis's ticks, about four
// ticks up to peak: 1, 2 or 5 times a power of ten.
func tickStep(peak int64) int64 {
	if peak <= 4 {
		return 1
	}
	raw := float64(peak) / 4
	for mag := int64(1); ; mag *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if float64(m*mag) >= raw {
				return m * mag
			}
		}
	}
}

// openSVG writes the root element, scaled to its container, and its
// accessible name and description.
func openSVG(s *strings.Builder, id string, width, height int, title, desc string) {
	fmt.Fprintf(s, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="%s-title %s-desc" font-family="system-ui, sans-serif">`,
		id, width, height, id, id)
	fmt.Fprintf(s, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(desc))
}

// esc escapes text for SVG, which is XML: the five predefined entities.
func esc(s string) string { return html.EscapeString(s) }
