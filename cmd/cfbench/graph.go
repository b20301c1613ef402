package main

import (
	"context"
	"fmt"
	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"net/http"
	"slices"
	"strings"
)

// graph is the contract workflow the data set is built on, read from the
// engine (GET /api/workflows/assignments, then the definition assigned to
// the contract types) rather than copied here: a designer change changes
// the data set and the scenarios with it.
type graph struct {
	ID      string // the definition every bulk contract pins
	Key     string
	Version int
	Initial string
	steps   map[string]graphStep
	moves   []graphMove
	Normal  []string // from Initial along the normal moves, bypass guard false, to a terminal phase
	Reject  string   // the terminal phase of the reject move furthest along Normal ("" when none)
	// RejectFrom is the phase Reject is reached from.
	RejectFrom string
}

type graphStep struct {
	Phase      string   `json:"phase"`
	SLAHours   int      `json:"slaHours"`
	Terminal   bool     `json:"terminal"`
	InboxRoles []string `json:"inboxRoles"`
}

// graphMove is a move as the engine declares it.
type graphMove = workflowdesigner.Transition

// bypassFact is the contract kind's guard fact of the bypass moves.
const bypassFact = "bypassProcurementAndCCM"

// fetchGraph reads the published definition assigned to the first
// document type starting with docType ("contract." for the contract types,
// "purchaseEvaluation.A" for policy A) as the administrator.
func fetchGraph(ctx context.Context, c *client, docType string) (*graph, error) {
	var login struct{ AccessToken string }
	if err := c.call(ctx, http.MethodPost, "/api/auth/login", "", mustJSON(map[string]string{"email": adminEmail, "password": adminPassword}), 200, &login); err != nil {
		return nil, fmt.Errorf("admin login: %w", err)
	}
	var as []struct {
		DocumentType         string
		WorkflowDefinitionID *string
	}
	if err := c.call(ctx, http.MethodGet, "/api/workflows/assignments", login.AccessToken, nil, 200, &as); err != nil {
		return nil, err
	}
	id := ""
	for _, a := range as {
		if strings.HasPrefix(a.DocumentType, docType) && a.WorkflowDefinitionID != nil {
			id = *a.WorkflowDefinitionID
			break
		}
	}
	if id == "" {
		return nil, fmt.Errorf("no document type %s… has a workflow definition assigned", docType)
	}
	var def struct {
		ID, Key, InitialPhase string
		Version               int
		Steps                 []graphStep
		Transitions           []graphMove
	}
	if err := c.call(ctx, http.MethodGet, "/api/workflows/"+id, login.AccessToken, nil, 200, &def); err != nil {
		return nil, err
	}
	g := &graph{ID: def.ID, Key: def.Key, Version: def.Version, Initial: def.InitialPhase, steps: map[string]graphStep{}, moves: def.Transitions}
	for _, s := range def.Steps {
		g.steps[s.Phase] = s
	}
	return g, g.derive()
}

// derive walks the normal path and finds the rejection.
func (g *graph) derive() error {
	g.Normal = g.walk(false)
	if len(g.Normal) < 3 {
		return fmt.Errorf("workflow %s v%d: the normal path %v is too short for the data set", g.Key, g.Version, g.Normal)
	}
	for _, p := range g.Normal {
		for _, m := range g.moves {
			if m.From == p && m.Kind == workflowdesigner.Reject && g.steps[m.To].Terminal {
				g.RejectFrom, g.Reject = p, m.To
			}
		}
	}
	return nil
}

func (g *graph) walk(bypass bool) []string {
	out := []string{g.Initial}
	for p := g.Initial; !g.steps[p].Terminal && len(out) <= len(g.steps); {
		m, ok := (&workflowdesigner.Definition{Spec: workflowdesigner.Spec{Transitions: g.moves}}).NormalMove(p, workflowdesigner.Facts{bypassFact: bypass})
		if !ok {
			break
		}
		p = m.To
		out = append(out, p)
	}
	return out
}

func (g *graph) slaHours(phase string) int { return g.steps[phase].SLAHours }

func (g *graph) terminal(phase string) bool { return g.steps[phase].Terminal }

// inboxPhase is the first phase of the normal path in the role's inbox,
// "" when none.
func (g *graph) inboxPhase(role string) string {
	for _, p := range g.Normal {
		if slices.Contains(g.steps[p].InboxRoles, role) {
			return p
		}
	}
	return ""
}
