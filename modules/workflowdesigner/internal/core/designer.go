package core

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/modules/identity"
	"github.com/contractflow/contractflow/modules/workflowdesigner/internal/engine"
	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
)

// Designer is the administrators' side of definitions (DESIGN §4.1):
// drafts that may be saved half-done, validation against the document
// kind, publishing, deletion of drafts and the assignments new documents
// pin. Published definitions never change; a change is a new version.
type Designer struct {
	svc   *Service
	kinds func() []engine.Kind
}

// NewDesigner returns the designer over svc; kinds lists the registered
// document kinds, asked on every request because kinds register while the
// modules that own them are provisioned.
func NewDesigner(svc *Service, kinds func() []engine.Kind) *Designer {
	return &Designer{svc: svc, kinds: kinds}
}

// Limits of a definition's text and size: the columns it is published into
// and a bound on the work validation does.
const (
	maxName        = 200
	maxSteps       = 100
	maxTransitions = 500
	// createAttempts bounds the retries of a draft whose version another
	// draft of the same key took at the same moment.
	createAttempts = 10
)

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (d *Designer) kind(name string) (engine.Kind, bool) {
	for _, k := range d.kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return engine.Kind{Name: name}, false
}

func (d *Designer) kindNames() string {
	var names []string
	for _, k := range d.kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// row reads a definition's row; an unknown id is 404.
func (d *Designer) row(ctx context.Context, id string) (*definitionRow, error) {
	row, err := d.svc.store.row(ctx, id)
	if db.IsNotFound(err) {
		return nil, apperr.NotFound("Workflow definition")
	}
	if err != nil {
		return nil, fmt.Errorf("load workflow definition %s: %w", id, err)
	}
	return row, nil
}

// spec is the content of row: a published definition's from the cache.
func (d *Designer) spec(ctx context.Context, row *definitionRow) (engine.Spec, error) {
	if row.Status == statusPublished {
		def, err := d.svc.Definition(ctx, row.ID)
		if err != nil {
			return engine.Spec{}, err
		}
		return def.Spec, nil
	}
	return d.svc.store.spec(ctx, row)
}

// List returns the definitions of a registered document kind, or of every
// kind when documentKind is empty, by key and version.
func (d *Designer) List(ctx context.Context, documentKind string) ([]DefinitionDTO, error) {
	if documentKind != "" {
		if _, ok := d.kind(documentKind); !ok {
			return nil, apperr.FieldError("DocumentKind", "Must be one of: "+d.kindNames()+".")
		}
	}
	rows, err := d.svc.store.list(ctx, documentKind)
	if err != nil {
		return nil, fmt.Errorf("list workflow definitions: %w", err)
	}
	out := make([]DefinitionDTO, 0, len(rows))
	for i := range rows {
		spec, err := d.spec(ctx, &rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, dtoOf(&rows[i], spec))
	}
	return out, nil
}

// Get returns one definition.
func (d *Designer) Get(ctx context.Context, id string) (DefinitionDTO, error) {
	row, err := d.row(ctx, id)
	if err != nil {
		return DefinitionDTO{}, err
	}
	spec, err := d.spec(ctx, row)
	if err != nil {
		return DefinitionDTO{}, err
	}
	return dtoOf(row, spec), nil
}

// Create stores a new draft of key, one version above the key's highest,
// empty or with the content of in.FromID (a definition of the same kind).
// Two drafts of one key created at once get distinct versions: the loser
// of the unique (key, version) retries with the next one.
func (d *Designer) Create(ctx context.Context, by authn.Principal, in CreateRequest) (DefinitionDTO, error) {
	f := apperr.Fields{}
	_, kindOK := d.kind(in.DocumentKind)
	switch {
	case in.DocumentKind == "":
		f.Add("DocumentKind", "Is required.")
	case !kindOK:
		f.Add("DocumentKind", "Must be one of: "+d.kindNames()+".")
	}
	switch {
	case in.Key == "":
		f.Add("Key", "Is required.")
	case !keyPattern.MatchString(in.Key):
		f.Add("Key", "Must be 1 to 64 letters, digits, '.', '-' or '_', starting with a letter or digit.")
	}
	if strings.TrimSpace(in.Name) == "" {
		f.Add("Name", "Is required.")
	}
	checkName(f, in.Name)
	content := draftContent{Steps: []engine.Step{}, Transitions: []engine.Transition{}}
	if in.FromID != nil && *in.FromID != "" {
		src, err := d.svc.store.row(ctx, *in.FromID)
		switch {
		case db.IsNotFound(err):
			f.Add("FromId", "No workflow definition has this id.")
		case err != nil:
			return DefinitionDTO{}, fmt.Errorf("load workflow definition %s: %w", *in.FromID, err)
		case kindOK && src.DocumentKind != in.DocumentKind:
			f.Add("FromId", fmt.Sprintf("Is a workflow of the %s kind, not of %s.", src.DocumentKind, in.DocumentKind))
		default:
			spec, err := d.spec(ctx, src)
			if err != nil {
				return DefinitionDTO{}, err
			}
			content = draftContent{InitialPhase: spec.InitialPhase, Steps: spec.Steps, Transitions: spec.Transitions}
		}
	}
	if err := f.Err(); err != nil {
		return DefinitionDTO{}, err
	}
	doc, err := json.Marshal(content)
	if err != nil {
		return DefinitionDTO{}, fmt.Errorf("encode workflow draft: %w", err)
	}
	draft := string(doc)
	now, byID := d.svc.now(), userID(by)
	for attempt := 1; ; attempt++ {
		row := definitionRow{ID: uuid.Must(uuid.NewV7()).String(), DefKey: in.Key, DocumentKind: in.DocumentKind, Name: in.Name,
			Status: statusDraft, CreatedAt: now, CreatedBy: byID, UpdatedAt: now, UpdatedBy: byID, Draft: &draft}
		err := d.svc.db.InTx(ctx, func(ctx context.Context) error {
			highest, kind, err := d.svc.store.highestVersion(ctx, in.Key)
			if err != nil {
				return err
			}
			if kind != "" && kind != in.DocumentKind {
				return apperr.FieldError("Key", fmt.Sprintf("Is the key of a workflow of the %s kind; choose another.", kind))
			}
			row.Version = highest + 1
			return d.svc.store.insertRow(ctx, row)
		})
		if db.IsUniqueViolation(err) && attempt < createAttempts {
			continue
		}
		if err != nil {
			return DefinitionDTO{}, fmt.Errorf("create workflow draft %s: %w", in.Key, err)
		}
		return dtoOf(&row, specOf(&row, content)), nil
	}
}

// Update replaces a draft's name and content. Anything well-typed is
// stored, so an administrator can save work in progress; a published
// definition is 409 not_editable.
func (d *Designer) Update(ctx context.Context, by authn.Principal, id string, in DraftRequest) (DefinitionDTO, error) {
	row, err := d.row(ctx, id)
	if err != nil {
		return DefinitionDTO{}, err
	}
	if err := checkDraft(in); err != nil {
		return DefinitionDTO{}, err
	}
	if row.Status == statusPublished {
		return DefinitionDTO{}, notEditable(row)
	}
	content := in.content()
	doc, err := json.Marshal(content)
	if err != nil {
		return DefinitionDTO{}, fmt.Errorf("encode workflow draft: %w", err)
	}
	now, byID := d.svc.now(), userID(by)
	ok, err := d.svc.store.updateDraft(ctx, id, in.Name, string(doc), now, byID)
	if err != nil {
		return DefinitionDTO{}, fmt.Errorf("update workflow draft %s: %w", id, err)
	}
	if !ok { // published or deleted since it was read
		return DefinitionDTO{}, d.lost(ctx, id, notEditable)
	}
	draft := string(doc)
	row.Name, row.Draft, row.UpdatedAt, row.UpdatedBy = in.Name, &draft, now, byID
	return dtoOf(row, specOf(row, content)), nil
}

// Validate checks a definition against its kind and the roles: every rule
// of DESIGN §4, each problem with its code and the step or move it is in.
func (d *Designer) Validate(ctx context.Context, id string) (ValidationDTO, error) {
	row, err := d.row(ctx, id)
	if err != nil {
		return ValidationDTO{}, err
	}
	spec, err := d.spec(ctx, row)
	if err != nil {
		return ValidationDTO{}, err
	}
	problems := d.problems(spec, row.DocumentKind)
	return ValidationDTO{Valid: len(problems) == 0, Problems: problems}, nil
}

func (d *Designer) problems(spec engine.Spec, kind string) engine.Problems {
	k, _ := d.kind(kind) // a kind no longer registered has no phases: every step is reported
	problems := engine.Validate(spec, k, identity.Roles())
	if problems == nil {
		problems = engine.Problems{}
	}
	return problems
}

// Publish makes a valid draft the immutable version documents may pin. An
// invalid one is 400 with its problems; a published one 409 not_editable;
// a draft edited after it was validated here 409 stale_version.
func (d *Designer) Publish(ctx context.Context, by authn.Principal, id string) (DefinitionDTO, error) {
	row, err := d.row(ctx, id)
	if err != nil {
		return DefinitionDTO{}, err
	}
	if row.Status == statusPublished {
		return DefinitionDTO{}, notEditable(row)
	}
	spec, err := d.spec(ctx, row)
	if err != nil {
		return DefinitionDTO{}, err
	}
	if problems := d.problems(spec, row.DocumentKind); len(problems) > 0 {
		return DefinitionDTO{}, invalid(problems)
	}
	now, byID := d.svc.now(), userID(by)
	var ok bool
	err = d.svc.db.InTx(ctx, func(ctx context.Context) error {
		if ok, err = d.svc.store.publish(ctx, id, row.Revision, spec, now, byID); ok && err == nil {
			err = d.svc.published(ctx)
		}
		return err
	})
	if err != nil {
		return DefinitionDTO{}, fmt.Errorf("publish workflow %s: %w", id, err)
	}
	if !ok {
		return DefinitionDTO{}, d.lost(ctx, id, notEditable)
	}
	row.Status, row.Draft, row.InitialPhase, row.PublishedAt, row.UpdatedAt, row.UpdatedBy = statusPublished, nil, spec.InitialPhase, &now, now, byID
	return dtoOf(row, spec), nil
}

// Delete removes a draft; a published definition is 409 not_deletable.
func (d *Designer) Delete(ctx context.Context, id string) error {
	row, err := d.row(ctx, id)
	if err != nil {
		return err
	}
	if row.Status == statusPublished {
		return notDeletable(row)
	}
	ok, err := d.svc.store.deleteDraft(ctx, id)
	if err != nil {
		return fmt.Errorf("delete workflow draft %s: %w", id, err)
	}
	if !ok {
		return d.lost(ctx, id, notDeletable)
	}
	return nil
}

// lost explains a compare-and-set on a draft that matched nothing: the
// definition was deleted (404), published (published's error) or edited
// (409 stale_version) since it was read.
func (d *Designer) lost(ctx context.Context, id string, published func(*definitionRow) error) error {
	row, err := d.row(ctx, id)
	switch {
	case err != nil:
		return err
	case row.Status == statusPublished:
		return published(row)
	}
	return apperr.Conflict("stale_version", "The draft was changed by someone else meanwhile; reload it, check it and try again.")
}

// Assignments lists every document type of every registered kind with the
// definition its new documents pin.
func (d *Designer) Assignments(ctx context.Context) ([]AssignmentDTO, error) {
	assigned, err := d.svc.store.assignments(ctx)
	if err != nil {
		return nil, fmt.Errorf("list workflow assignments: %w", err)
	}
	ids := make([]string, 0, len(assigned))
	for _, a := range assigned {
		ids = append(ids, a.DefinitionID)
	}
	rows, err := d.svc.store.rows(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("list workflow assignments: %w", err)
	}
	out := []AssignmentDTO{}
	for _, k := range d.kinds() {
		for _, t := range k.DocumentTypes {
			a := AssignmentDTO{DocumentType: t}
			if as, ok := assigned[t]; ok {
				if row, ok := rows[as.DefinitionID]; ok {
					a = assignmentOf(t, &row)
				}
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// Assign makes new documents of a type pin a published definition of its
// kind; documents already created keep the definition they pinned.
func (d *Designer) Assign(ctx context.Context, by authn.Principal, in AssignRequest) (AssignmentDTO, error) {
	f := apperr.Fields{}
	var kind *engine.Kind
	for _, k := range d.kinds() {
		if slices.Contains(k.DocumentTypes, in.DocumentType) {
			kind = &k
			break
		}
	}
	switch {
	case in.DocumentType == "":
		f.Add("DocumentType", "Is required.")
	case kind == nil:
		f.Add("DocumentType", "Is not a document type of a registered kind.")
	}
	var row *definitionRow
	if in.WorkflowDefinitionID == "" {
		f.Add("WorkflowDefinitionId", "Is required.")
	} else {
		r, err := d.svc.store.row(ctx, in.WorkflowDefinitionID)
		switch {
		case db.IsNotFound(err):
			f.Add("WorkflowDefinitionId", "No workflow definition has this id.")
		case err != nil:
			return AssignmentDTO{}, fmt.Errorf("load workflow definition %s: %w", in.WorkflowDefinitionID, err)
		case r.Status != statusPublished:
			f.Add("WorkflowDefinitionId", "Is a draft; publish it first.")
		case kind != nil && r.DocumentKind != kind.Name:
			f.Add("WorkflowDefinitionId", fmt.Sprintf("Is a workflow of the %s kind; %s documents are of the %s kind.", r.DocumentKind, in.DocumentType, kind.Name))
		default:
			row = r
		}
	}
	if err := f.Err(); err != nil {
		return AssignmentDTO{}, err
	}
	a := assignmentRow{DocumentType: in.DocumentType, DefinitionID: row.ID, UpdatedAt: d.svc.now(), UpdatedBy: userID(by)}
	if err := d.svc.assign(ctx, a, true); err != nil {
		return AssignmentDTO{}, fmt.Errorf("assign workflow %s to %s: %w", row.ID, in.DocumentType, err)
	}
	return assignmentOf(in.DocumentType, row), nil
}

func assignmentOf(documentType string, row *definitionRow) AssignmentDTO {
	id, key, version := row.ID, row.DefKey, row.Version
	return AssignmentDTO{DocumentType: documentType, WorkflowDefinitionID: &id, Key: &key, Version: &version}
}

func specOf(row *definitionRow, c draftContent) engine.Spec {
	return engine.Spec{Key: row.DefKey, Name: row.Name, InitialPhase: c.InitialPhase, Steps: c.Steps, Transitions: c.Transitions}
}

func userID(p authn.Principal) *string {
	if p.UserID == "" {
		return nil
	}
	id := p.UserID
	return &id
}

func notEditable(row *definitionRow) error {
	return apperr.Conflict("not_editable", fmt.Sprintf("Workflow %s version %d is published and never changes; create a new draft from it (fromId).", row.DefKey, row.Version))
}

func notDeletable(row *definitionRow) error {
	return apperr.Conflict("not_deletable", fmt.Sprintf("Workflow %s version %d is published; documents may be pinned to it.", row.DefKey, row.Version))
}

// invalid is publish's refusal: the problems' messages under the property
// each is in, and the problems themselves as the validate answer has them.
func invalid(problems engine.Problems) error {
	f := apperr.Fields{}
	for _, p := range problems {
		f.Add(p.Field, p.Message)
	}
	e := apperr.Validation(f)
	e.Detail = fmt.Sprintf("The definition breaks %d rule(s); fix them and publish again.", len(problems))
	return e.With("problems", problems)
}

// checkDraft refuses what a draft cannot hold whatever its rules: text
// with control characters (DESIGN §1), a name longer than its column, more
// steps or moves than any document kind needs.
func checkDraft(in DraftRequest) error {
	f := apperr.Fields{}
	checkName(f, in.Name)
	checkText(f, "InitialPhase", in.InitialPhase)
	if len(in.Steps) > maxSteps {
		f.Add("Steps", fmt.Sprintf("Must hold at most %d items.", maxSteps))
	}
	if len(in.Transitions) > maxTransitions {
		f.Add("Transitions", fmt.Sprintf("Must hold at most %d items.", maxTransitions))
	}
	for i, s := range in.Steps {
		at := fmt.Sprintf("Steps[%d].", i)
		checkText(f, at+"Phase", s.Phase)
		checkText(f, at+"OnSlaBreach", s.OnSLABreach)
		for j, r := range s.InboxRoles {
			checkText(f, fmt.Sprintf("%sInboxRoles[%d]", at, j), r)
		}
	}
	for i, t := range in.Transitions {
		at := fmt.Sprintf("Transitions[%d].", i)
		checkText(f, at+"From", t.From)
		checkText(f, at+"To", t.To)
		checkText(f, at+"Kind", t.Kind)
		checkText(f, at+"Guard", t.Guard)
		checkText(f, at+"Precondition", t.Precondition)
		for j, r := range t.Roles {
			checkText(f, fmt.Sprintf("%sRoles[%d]", at, j), r)
		}
	}
	return f.Err()
}

func checkName(f apperr.Fields, name string) {
	if utf8.RuneCountInString(name) > maxName {
		f.Add("Name", fmt.Sprintf("Must be at most %d characters long.", maxName))
	}
	checkText(f, "Name", name)
}

// checkText refuses NUL and the other C0 control characters but tab, line
// feed and carriage return (DESIGN §1).
func checkText(f apperr.Fields, field, v string) {
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }) {
		f.Add(field, "Must not contain control characters.")
	}
}
