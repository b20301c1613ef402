package core

import (
	"github.com/contractflow/contractflow/platform/search"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
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
	return c.JSON(t)
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
