// Package httpx holds the service's HTTP conventions, each in one place:
// problem responses, JSON binding and validation, list parameters, routes
// with their access rules, and the middleware every request passes through.
package httpx

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/contractflow/contractflow/platform/apperr"
)

// ProblemContentType is the media type of every error response (RFC 9457).
const ProblemContentType = "application/problem+json"

// statusOf is the one mapping from error kind to HTTP status.
func statusOf(k apperr.Kind) int {
	switch k {
	case apperr.KindValidation, apperr.KindBadRequest:
		return http.StatusBadRequest
	case apperr.KindUnauthorized:
		return http.StatusUnauthorized
	case apperr.KindForbidden:
		return http.StatusForbidden
	case apperr.KindNotFound:
		return http.StatusNotFound
	case apperr.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.KindConflict:
		return http.StatusConflict
	case apperr.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.KindUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case apperr.KindRateLimited:
		return http.StatusTooManyRequests
	case apperr.KindUnavailable:
		return http.StatusServiceUnavailable
	case apperr.KindTimeout:
		return http.StatusRequestTimeout
	default:
		return http.StatusInternalServerError
	}
}

// Status is the HTTP status of an error kind, for pages that show errors
// themselves (platform/web).
func Status(k apperr.Kind) int { return statusOf(k) }

// FromFiber turns the framework's own errors (unknown route, body over the
// server limit, …) into application errors.
func FromFiber(fe *fiber.Error) *apperr.Error {
	switch fe.Code {
	case http.StatusNotFound:
		return apperr.New(apperr.KindNotFound, "not_found", "No resource matches this path.")
	case http.StatusMethodNotAllowed:
		return apperr.New(apperr.KindMethodNotAllowed, "method_not_allowed", "This path does not accept this method.")
	case http.StatusRequestEntityTooLarge:
		return apperr.New(apperr.KindTooLarge, "payload_too_large", "The request body is too large.")
	case http.StatusUnsupportedMediaType:
		return apperr.New(apperr.KindUnsupportedMedia, "unsupported_media_type", fe.Message)
	case http.StatusTooManyRequests:
		return apperr.New(apperr.KindRateLimited, "rate_limited", "Too many requests.")
	case http.StatusServiceUnavailable:
		return apperr.New(apperr.KindUnavailable, "unavailable", "The service is not ready.")
	case http.StatusRequestTimeout:
		return apperr.New(apperr.KindTimeout, "request_timeout", "The request did not arrive in time.")
	}
	if fe.Code >= 400 && fe.Code < 500 {
		return apperr.New(apperr.KindValidation, "validation_failed", fe.Message)
	}
	return apperr.Internal(fe)
}

// ErrorHandler is the server's one error handler: every error a handler or
// middleware returns becomes a problem response here. Unknown errors are
// logged with the request id and answered with a plain 500.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var ae *apperr.Error
		var fe *fiber.Error
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &fe):
			ae = FromFiber(fe)
		default:
			ae = apperr.Internal(err)
		}
		status := statusOf(ae.Kind)
		if status >= 500 {
			log.ErrorContext(c.UserContext(), "request failed",
				"requestId", RequestID(c), "method", c.Method(), "path", c.Path(), "err", err)
		}
		return WriteProblem(c, status, ae)
	}
}

// WriteProblem writes e as an RFC 9457 problem with the given status.
func WriteProblem(c *fiber.Ctx, status int, e *apperr.Error) error {
	detail := e.Detail
	if status >= 500 {
		detail = "An unexpected error occurred. Quote the traceId when reporting it."
	}
	body := map[string]any{
		"type":     "urn:contractflow:problem:" + e.Code,
		"title":    http.StatusText(status),
		"status":   status,
		"detail":   detail,
		"instance": c.OriginalURL(),
		"traceId":  RequestID(c),
		"code":     e.Code,
	}
	if len(e.Fields) > 0 {
		body["errors"] = e.Fields
	}
	for k, v := range e.Extra {
		if _, taken := body[k]; !taken {
			body[k] = v
		}
	}
	if v, ok := e.Extra["retryAfter"]; ok {
		if secs, ok := v.(int); ok {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
		}
	}
	c.Status(status)
	if err := c.JSON(body); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, ProblemContentType)
	return nil
}
