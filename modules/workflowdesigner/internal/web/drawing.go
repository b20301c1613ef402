package web

import (
	"fmt"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
)

// A definition is drawn on the server as SVG (DESIGN §12): the steps one
// under another along the normal path, the normal moves between neighbours
// as straight arrows, every other move as an arc — moves down the path on
// the left, moves back up (returns) on the right — coloured by kind. The
// geometry is computed here; the template writes the elements, so phase
// names come out in the reader's language.

// drawing is the geometry of one definition's picture.
type drawing struct {
	Width, Height int
	Boxes         []box
	Arrows        []arrow
}

// box is one step.
type box struct {
	X, Y, W, H int
	TextX      int // the centre, where the labels are anchored
	Step       core.StepDTO
	Initial    bool
	Problem    bool // validation found something wrong in this step
}

// arrow is one move.
type arrow struct {
	D     string // the SVG path
	Class string // the move's kind, "normal" for the step's normal forward move
	Color string
	Move  core.TransitionDTO
}

// arrowColors are the colours of the move kinds (the legend's).
var arrowColors = map[string]string{"normal": "#1d2733", "forward": "#0b5cad", "bypass": "#6b4fbb", "return": "#9a6700", "reject": "#b3261e"}

// Drawing geometry, in SVG user units.
const (
	boxW    = 240
	boxH    = 46
	gap     = 40
	margin  = 16
	laneGap = 18
)

// draw lays out def; bad names the phases and moves validation complained
// about, drawn in red.
func draw(def core.DefinitionDTO, badPhase map[string]bool, badMove map[[2]string]bool) drawing {
	order := stepOrder(def)
	row := map[string]int{}
	for i, p := range order {
		row[p] = i
	}
	steps := map[string]core.StepDTO{}
	for _, s := range def.Steps {
		if _, dup := steps[s.Phase]; !dup {
			steps[s.Phase] = s
		}
	}

	// First pass: which moves are straight and which lane each arc takes.
	type planned struct {
		t          core.TransitionDTO
		from, to   int
		side, lane int // side -1 left, +1 right, 0 straight
	}
	var plan []planned
	straight := map[int]bool{}
	left, right := 0, 0
	for _, t := range def.Transitions {
		fi, okF := row[t.From]
		ti, okT := row[t.To]
		if !okF || !okT {
			continue // a move to or from no step: validation reports it
		}
		p := planned{t: t, from: fi, to: ti}
		switch {
		case ti == fi+1 && !straight[fi]:
			straight[fi] = true
		case ti > fi:
			p.side, p.lane = -1, left
			left++
		default:
			p.side, p.lane = 1, right
			right++
		}
		plan = append(plan, p)
	}

	// An arc of lane k bulges about 1.5·(k+1)·laneGap beside the boxes.
	x := margin + laneGap + 3*left*laneGap/2
	d := drawing{Width: x + boxW + laneGap + 3*right*laneGap/2 + margin, Height: margin*2 + len(order)*(boxH+gap) - gap}
	top := func(i int) int { return margin + i*(boxH+gap) }
	mid := func(i int) int { return top(i) + boxH/2 }
	for i, p := range order {
		d.Boxes = append(d.Boxes, box{X: x, Y: top(i), W: boxW, H: boxH, TextX: x + boxW/2, Step: steps[p],
			Initial: p == def.InitialPhase, Problem: badPhase[p]})
	}
	for _, p := range plan {
		a := arrow{Class: p.t.Kind, Move: p.t}
		if p.t.Kind == "forward" && p.t.Normal {
			a.Class = "normal"
		}
		if _, known := arrowColors[a.Class]; !known {
			a.Class = "forward" // a kind validation refuses, drawn plainly
		}
		a.Color = arrowColors[a.Class]
		if badMove[[2]string{p.t.From, p.t.To}] {
			a.Color = "#e8112d"
		}
		cx := x + boxW/2
		switch p.side {
		case 0:
			a.D = fmt.Sprintf("M %d %d L %d %d", cx, top(p.from)+boxH, cx, top(p.to)-3)
		case -1:
			off := laneGap * (p.lane + 1)
			a.D = fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", x, mid(p.from)+6, x-2*off, mid(p.from)+6, x-2*off, mid(p.to)-6, x-3, mid(p.to)-6)
		default:
			off := laneGap * (p.lane + 1)
			xr := x + boxW
			a.D = fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", xr, mid(p.from)-6, xr+2*off, mid(p.from)-6, xr+2*off, mid(p.to)+6, xr+3, mid(p.to)+6)
		}
		d.Arrows = append(d.Arrows, a)
	}
	return d
}

// stepOrder is the initial step, then the steps its normal moves lead to in
// turn, then the other steps in the order of the definition.
func stepOrder(def core.DefinitionDTO) []string {
	seen := map[string]bool{}
	var order []string
	has := map[string]bool{}
	for _, s := range def.Steps {
		has[s.Phase] = true
	}
	for p := def.InitialPhase; has[p] && !seen[p]; {
		seen[p] = true
		order = append(order, p)
		next := ""
		for _, t := range def.Transitions {
			if t.From == p && t.Normal && t.Guard == "" && t.Kind == "forward" {
				next = t.To
				break
			}
		}
		p = next
	}
	for _, s := range def.Steps {
		if !seen[s.Phase] {
			seen[s.Phase] = true
			order = append(order, s.Phase)
		}
	}
	return order
}
