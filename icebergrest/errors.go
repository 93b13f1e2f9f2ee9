package icebergrest

import (
	"encoding/json"
	"net/http"

	"github.com/fluxgate-io/fluxgate/errs"
)

// errorBody is the spec's IcebergErrorResponse.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	var b errorBody
	b.Error.Message, b.Error.Type, b.Error.Code = msg, typ, code
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(b)
}

// writeErr answers an engine error with the status and type of its kind;
// notFound is the type of a NOT_FOUND (NoSuchTableException or
// NoSuchNamespaceException, by what was asked for).
func writeErr(w http.ResponseWriter, err error, notFound string) {
	code, typ := http.StatusInternalServerError, "InternalServerError"
	switch errs.KindOf(err) {
	case errs.NotFound:
		code, typ = http.StatusNotFound, notFound
	case errs.InvalidArgument:
		code, typ = http.StatusBadRequest, "BadRequestException"
	case errs.PermissionDenied:
		code, typ = http.StatusForbidden, "ForbiddenException"
	case errs.Unavailable:
		code, typ = http.StatusServiceUnavailable, "ServiceUnavailableException"
	}
	writeError(w, code, typ, err.Error())
}
