package core

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/search"
)

// routes declares a resource's five endpoints, each behind its policy.
func (r *resource[T, In, PT, PI]) routes(rs *httpx.Routes) {
	key, one := r.Menu.Key, r.Path+"/:id"
	rs.Get(r.Path, httpx.Require(key+".Read"), r.handleList)
	rs.Post(r.Path, httpx.Require(key+".Create"), r.handleCreate)
	rs.Get(one, httpx.Require(key+".Read"), r.handleGet)
	rs.Put(one, httpx.Require(key+".Update"), r.handleUpdate)
	rs.Delete(one, httpx.Require(key+".Delete"), r.handleDelete)
}

func callerID(c *fiber.Ctx) string { return authn.Caller(c.UserContext()).UserID }

// parseList reads paging, sort, search and the resource's filters, and
// reports every invalid parameter at once.
func (r *resource[T, In, PT, PI]) parseList(c *fiber.Ctx) (listQuery, error) {
	f := apperr.Fields{}
	req, err := httpx.ListRequest(c, r.List)
	if err := mergeFields(f, err); err != nil {
		return listQuery{}, err
	}
	q := listQuery{Request: req, Words: search.Words(req.Search)}
	for _, flt := range r.Filters {
		field := strings.ToUpper(flt.Param[:1]) + flt.Param[1:] // PascalCase, as field errors are keyed
		if flt.Values == nil {
			b, err := httpx.QueryBool(c, flt.Param, field)
			if err := mergeFields(f, err); err != nil {
				return listQuery{}, err
			}
			if b != nil {
				q.Where = append(q.Where, condition{flt.Column, *b})
			}
			continue
		}
		v := c.Query(flt.Param)
		switch {
		case v == "":
		case !slices.Contains(flt.Values, v):
			f.Add(field, "Must be one of: "+strings.Join(flt.Values, ", ")+".")
		default:
			q.Where = append(q.Where, condition{flt.Column, v})
		}
	}
	return q, f.Err()
}

func (r *resource[T, In, PT, PI]) handleList(c *fiber.Ctx) error {
	q, err := r.parseList(c)
	if err != nil {
		return err
	}
	page, err := r.list(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(page)
}

func (r *resource[T, In, PT, PI]) handleGet(c *fiber.Ctx) error {
	t, err := r.get(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	if r.extra == nil {
		return c.JSON(t)
	}
	facts, err := r.extra(c.UserContext(), PT(t).record().ID)
	if err != nil {
		return err
	}
	return c.JSON(withFacts(t, facts))
}

// withFacts is the record's JSON object with other modules' facts added;
// a fact never replaces one of the record's own properties.
func withFacts(record any, facts map[string]any) map[string]any {
	b, _ := json.Marshal(record)
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&out)
	for k, v := range facts {
		if _, own := out[k]; !own {
			out[k] = v
		}
	}
	return out
}

func (r *resource[T, In, PT, PI]) handleCreate(c *fiber.Ctx) error {
	in := PI(new(In))
	if err := httpx.Decode(c, in); err != nil {
		return err
	}
	t, err := r.create(c.UserContext(), callerID(c), in)
	if err != nil {
		return err
	}
	return httpx.Created(c, r.Path+"/"+PT(t).record().ID, t)
}

func (r *resource[T, In, PT, PI]) handleUpdate(c *fiber.Ctx) error {
	in := PI(new(In))
	if err := httpx.Decode(c, in); err != nil {
		return err
	}
	t, err := r.update(c.UserContext(), callerID(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(t)
}

func (r *resource[T, In, PT, PI]) handleDelete(c *fiber.Ctx) error {
	if err := r.delete(c.UserContext(), callerID(c), c.Params("id")); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
