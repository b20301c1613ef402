package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/core"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/web"
)

// The draft editor is one plain form over the draft's fields: a row per
// step and per move, a few blank rows to add more, a "remove" box on each.
// It sends the designer's PUT request; whatever the draft holds is checked
// by validate and publish, never here.

// blankSteps and blankMoves are the empty rows offered for new ones.
const (
	blankSteps = 2
	blankMoves = 3
)

type editData struct {
	Def           core.DefinitionDTO
	Name          string
	InitialPhase  string
	Steps         []stepForm
	Moves         []moveForm
	Phases        []string // the kind's phases (and any others the draft names)
	Roles         []string
	Facts         []string
	Preconditions []string
	MoveKinds     []string
	Breaches      []string
	// The lists above as hints: "Drafter, DeptManager, …"; "—" when empty.
	RolesText, FactsText, PreconditionsText string
}

type stepForm struct {
	I                      int
	Phase, SLAHours, Roles string
	Terminal               bool
	OnSLABreach            string
}

type moveForm struct {
	I                                          int
	From, To, Kind, Roles, Guard, Precondition string
	Normal                                     bool
}

func (h handlers) edit(c *fiber.Ctx) error {
	def, err := h.d.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	if def.Status != core.StatusDraft {
		return web.RedirectWithFlash(c, "/admin/workflows/"+def.ID, "wf.flash.notEditable")
	}
	in := core.DraftRequest{Name: def.Name, InitialPhase: def.InitialPhase, Steps: def.Steps, Transitions: def.Transitions}
	return web.Render(c, pages, "edit", "wf.edit.title", h.editData(def, in))
}

// editData is the form over in, with blank rows after the draft's own.
func (h handlers) editData(def core.DefinitionDTO, in core.DraftRequest) *editData {
	k := h.kind(def.DocumentKind)
	data := &editData{Def: def, Name: in.Name, InitialPhase: in.InitialPhase, Roles: roles(), Facts: k.Facts,
		Preconditions: k.Preconditions, Phases: append([]string{}, k.Phases...),
		MoveKinds: []string{string(engine.Forward), string(engine.Return), string(engine.Reject), string(engine.Bypass)},
		Breaches:  []string{engine.BreachAdvance, engine.BreachRemind}}
	data.RolesText, data.FactsText, data.PreconditionsText = hint(data.Roles), hint(data.Facts), hint(data.Preconditions)
	known := func(p string) {
		if p != "" && !slices.Contains(data.Phases, p) {
			data.Phases = append(data.Phases, p) // shown, so the draft reads back as it is; validate names it
		}
	}
	known(in.InitialPhase)
	for i, s := range in.Steps {
		known(s.Phase)
		data.Steps = append(data.Steps, stepForm{I: i, Phase: s.Phase, SLAHours: strconv.Itoa(s.SLAHours), Terminal: s.Terminal,
			Roles: strings.Join(s.InboxRoles, ", "), OnSLABreach: s.OnSLABreach})
	}
	for i := range blankSteps {
		data.Steps = append(data.Steps, stepForm{I: len(in.Steps) + i})
	}
	for i, t := range in.Transitions {
		known(t.From)
		known(t.To)
		data.Moves = append(data.Moves, moveForm{I: i, From: t.From, To: t.To, Kind: t.Kind, Roles: strings.Join(t.Roles, ", "),
			Guard: t.Guard, Precondition: t.Precondition, Normal: t.Normal})
	}
	for i := range blankMoves {
		data.Moves = append(data.Moves, moveForm{I: len(in.Transitions) + i})
	}
	return data
}

// save stores the form as the draft (the designer's Update); a refusal is
// shown on the form as it was sent.
func (h handlers) save(c *fiber.Ctx) error {
	def, err := h.d.Get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	in, err := draftOf(c)
	if err == nil {
		_, err = h.d.Update(c.UserContext(), authn.Caller(c.UserContext()), def.ID, in)
	}
	if err != nil {
		return web.RenderProblem(c, pages, "edit", "wf.edit.title", h.editData(def, in), err)
	}
	return web.RedirectWithFlash(c, "/admin/workflows/"+def.ID, "wf.flash.saved")
}

// draftOf reads the form: rows marked for removal and blank rows are left
// out; a number that is not one is a field error, as malformed JSON is 400
// in the API.
func draftOf(c *fiber.Ctx) (core.DraftRequest, error) {
	in := core.DraftRequest{Name: c.FormValue("name"), InitialPhase: c.FormValue("initialPhase"),
		Steps: []core.StepDTO{}, Transitions: []core.TransitionDTO{}}
	f := apperr.Fields{}
	for i := range count(c, "steps.count") {
		at := func(name string) string { return strings.TrimSpace(c.FormValue(fmt.Sprintf("steps.%d.%s", i, name))) }
		s := core.StepDTO{Phase: at("phase"), Terminal: at("terminal") != "", InboxRoles: splitRoles(at("inboxRoles")),
			OnSLABreach: at("onSlaBreach")}
		sla := at("slaHours")
		if at("remove") != "" || (s.Phase == "" && sla == "" && len(s.InboxRoles) == 0) {
			continue
		}
		if sla != "" {
			n, err := strconv.Atoi(sla)
			if err != nil {
				f.Add(fmt.Sprintf("Steps[%d].SlaHours", len(in.Steps)), "Must be a whole number.")
			}
			s.SLAHours = n
		}
		in.Steps = append(in.Steps, s)
	}
	for i := range count(c, "moves.count") {
		at := func(name string) string { return strings.TrimSpace(c.FormValue(fmt.Sprintf("moves.%d.%s", i, name))) }
		t := core.TransitionDTO{From: at("from"), To: at("to"), Kind: at("kind"), Roles: splitRoles(at("roles")),
			Guard: at("guard"), Normal: at("normal") != "", Precondition: at("precondition")}
		if at("remove") != "" || (t.From == "" && t.To == "" && len(t.Roles) == 0) {
			continue
		}
		in.Transitions = append(in.Transitions, t)
	}
	return in, f.Err()
}

// count reads a row count the form carries; at most a thousand rows.
func count(c *fiber.Ctx, field string) int {
	n, err := strconv.Atoi(c.FormValue(field))
	if err != nil || n < 0 {
		return 0
	}
	return min(n, 1000)
}

// splitRoles reads "Drafter, DeptManager" (commas or spaces).
func splitRoles(s string) []string {
	out := []string{}
	for _, r := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		out = append(out, r)
	}
	return out
}

func hint(list []string) string {
	if len(list) == 0 {
		return "—"
	}
	return strings.Join(list, ", ")
}
