package core

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/httpx"
	"github.com/contractflow/contractflow/platform/paging"
)

// Base is where the endpoints live.
const Base = "/api/purchase-evaluations"

// Routes declares the evaluation endpoints (DESIGN §7). Moves need only
// PurchaseEvaluations.Read: the workflow's roles decide who may make them.
// Handlers adapt HTTP to the service and hold no logic of their own.
func (s *Service) Routes(r *httpx.Routes) {
	const one = Base + "/:id"
	r.Get(Base, httpx.Require("PurchaseEvaluations.Read"), httpx.JSON(s.list))
	r.Get(Base+"/inbox", httpx.Require("PurchaseEvaluations.Read"), httpx.JSON(func(c *fiber.Ctx) (paging.Page[InboxItem], error) {
		req, err := httpx.ListRequest(c, InboxSpec)
		if err != nil {
			return paging.Page[InboxItem]{}, err
		}
		return s.Inbox(c.UserContext(), caller(c), req)
	}))
	r.Post(Base, httpx.Require("PurchaseEvaluations.Create"), func(c *fiber.Ctx) error {
		var in CreateRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		d, err := s.Create(c.UserContext(), caller(c), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, Base+"/"+d.ID, d)
	})
	r.Get(one, httpx.Require("PurchaseEvaluations.Read"), httpx.JSON(func(c *fiber.Ctx) (Detail, error) {
		return s.Get(c.UserContext(), caller(c), c.Params("id"))
	}))
	r.Put(one, httpx.Require("PurchaseEvaluations.Update"), httpx.JSONBody(func(c *fiber.Ctx, in UpdateRequest) (Detail, error) {
		return s.Update(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Delete(one, httpx.Require("PurchaseEvaluations.Delete"), func(c *fiber.Ctx) error {
		if err := s.Delete(c.UserContext(), caller(c), c.Params("id")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post(one+"/quotations", httpx.Require("PurchaseEvaluations.Update"), func(c *fiber.Ctx) error {
		var in QuotationRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		d, err := s.AddQuotation(c.UserContext(), caller(c), c.Params("id"), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, Base+"/"+d.ID, d)
	})
	r.Put(one+"/quotations/:quotationId", httpx.Require("PurchaseEvaluations.Update"), httpx.JSONBody(func(c *fiber.Ctx, in QuotationRequest) (Detail, error) {
		return s.UpdateQuotation(c.UserContext(), caller(c), c.Params("id"), c.Params("quotationId"), in)
	}))
	r.Delete(one+"/quotations/:quotationId", httpx.Require("PurchaseEvaluations.Update"), func(c *fiber.Ctx) error {
		if err := s.DeleteQuotation(c.UserContext(), caller(c), c.Params("id"), c.Params("quotationId")); err != nil {
			return err
		}
		return httpx.NoContent(c)
	})
	r.Post(one+"/select-winner", httpx.Require("PurchaseEvaluations.Update"), httpx.JSONBody(func(c *fiber.Ctx, in WinnerRequest) (Detail, error) {
		return s.SelectWinner(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Post(one+"/transitions", httpx.Require("PurchaseEvaluations.Read"), httpx.JSONBody(func(c *fiber.Ctx, in TransitionRequest) (Detail, error) {
		return s.Transition(c.UserContext(), caller(c), c.Params("id"), in)
	}))
	r.Put(one+"/opinions/:kind", httpx.Require("PurchaseEvaluations.Update"), httpx.JSONBody(func(c *fiber.Ctx, in OpinionRequest) (Detail, error) {
		return s.SaveOpinion(c.UserContext(), caller(c), c.Params("id"), c.Params("kind"), in)
	}))
	r.Post(one+"/contract", httpx.Require("PurchaseEvaluations.Update"), func(c *fiber.Ctx) error {
		var in ContractRequest
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		d, contractID, err := s.CreateContract(c.UserContext(), caller(c), c.Params("id"), in)
		if err != nil {
			return err
		}
		return httpx.Created(c, "/api/contracts/"+contractID, d)
	})
}

func caller(c *fiber.Ctx) authn.Principal { return authn.Caller(c.UserContext()) }

func (s *Service) list(c *fiber.Ctx) (paging.Page[Summary], error) {
	req, err := httpx.ListRequest(c, ListSpec)
	if err != nil {
		return paging.Page[Summary]{}, err
	}
	return s.List(c.UserContext(), caller(c), FilterOf(func(k string) string { return c.Query(k) }, req), req)
}
