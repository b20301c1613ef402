// Package apperr holds the error kinds every module returns. A kind says what
// went wrong in terms the caller can act on; platform/httpx maps each kind to
// one HTTP status and an RFC 9457 problem in a single place.
package apperr

import (
	"errors"
	"fmt"
	"maps"
	"sort"
)

// Kind classifies an error for the transport layer.
type Kind int

const (
	KindInternal Kind = iota
	KindValidation
	KindBadRequest // a well-formed request the service refuses (e.g. failed login)
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindTooLarge
	KindUnsupportedMedia
	KindRateLimited
	KindUnavailable
	KindTimeout // the client did not send its request in time
)

// Error is the one error type that carries a kind, a stable machine code and
// a message safe to show to the client.
type Error struct {
	Kind   Kind
	Code   string              // stable machine-readable code, e.g. "duplicate_code"
	Detail string              // human-readable, safe for the client
	Fields map[string][]string // validation messages keyed by PascalCase field
	Extra  map[string]any      // additional problem members (e.g. lockedUntil)
	Err    error               // the cause, logged but never shown
}

func (e *Error) Error() string {
	msg := e.Code
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		msg += fmt.Sprintf(" %v", keys)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// With returns a copy of e carrying an extra problem member.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = maps.Clone(e.Extra)
	if c.Extra == nil {
		c.Extra = map[string]any{}
	}
	c.Extra[key] = value
	return &c
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindOf returns the kind of err; errors without one are internal.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return KindInternal
}

// CodeOf returns the machine code of err, or "internal".
func CodeOf(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return "internal"
}

// New builds an error of the given kind and code.
func New(kind Kind, code, detail string) *Error {
	return &Error{Kind: kind, Code: code, Detail: detail}
}

// Validation reports invalid input, field by field.
func Validation(fields map[string][]string) *Error {
	return &Error{Kind: KindValidation, Code: "validation_failed", Detail: "One or more fields are invalid.", Fields: fields}
}

// FieldError reports one invalid field.
func FieldError(field, message string) *Error {
	return Validation(map[string][]string{field: {message}})
}

// BadRequest reports a request that is well-formed but refused, with its own code.
func BadRequest(code, detail string) *Error { return New(KindBadRequest, code, detail) }

// NotFound reports an unknown or deleted resource.
func NotFound(what string) *Error {
	return New(KindNotFound, "not_found", what+" was not found.")
}

// Forbidden reports a caller who may not do this.
func Forbidden(detail string) *Error { return New(KindForbidden, "forbidden", detail) }

// Unauthorized reports a missing or invalid credential.
func Unauthorized(code, detail string) *Error { return New(KindUnauthorized, code, detail) }

// Conflict reports a state conflict such as a duplicate code or a stale version.
func Conflict(code, detail string) *Error { return New(KindConflict, code, detail) }

// StaleVersion reports a write based on an old version of a record.
func StaleVersion() *Error {
	return Conflict("stale_version", "The record was changed by someone else; reload it and try again.")
}

// Internal wraps an unexpected failure; its cause is logged, never shown.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Code: "internal", Detail: "An unexpected error occurred.", Err: err}
}

// Validation errors collect field messages before returning one error.
type Fields map[string][]string

// Add records a message for a field.
func (f Fields) Add(field, message string) { f[field] = append(f[field], message) }

// Err returns a validation error, or nil when no field failed.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return Validation(f)
}
