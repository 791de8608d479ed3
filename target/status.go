package target

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ObjectState is what a remote object's own status says (response.
// status_field read through response.statuses).
type ObjectState struct {
	Outcome ObjectOutcome
	// Status is the value read, when the statuses table lists it; "" for
	// an unlisted value (whatever the target wrote is not repeated) and
	// when the contract has no status_field.
	Status string
	// Documentation is the listed row's citation, if any.
	Documentation string
}

// ObjectStatus reads a create response body or a lookup result. With no
// response.status_field, any JSON object is ObjectSucceeded: the target
// documents no status, so an object that exists is done. With one, the
// value's row in response.statuses decides, and a value the table does
// not list is ObjectPending, the safe reading. The error says why the body
// cannot tell (not an object, the field missing or not a string); it is
// never evidence of completion or failure.
func (c *Contract) ObjectStatus(body []byte) (ObjectState, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return ObjectState{}, fmt.Errorf("object status: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return ObjectState{}, errors.New("object status: the body is not a JSON object")
	}
	f := c.Response.StatusField
	if f == "" {
		return ObjectState{Outcome: ObjectSucceeded}, nil
	}
	s, ok := get(v, f)
	if !ok {
		return ObjectState{}, fmt.Errorf("object status: %s is missing", f)
	}
	status, ok := s.(string)
	if !ok {
		return ObjectState{}, fmt.Errorf("object status: %s is not a string", f)
	}
	for _, r := range c.Response.Statuses {
		if r.Value == status {
			return ObjectState{Outcome: r.Outcome, Status: r.Value, Documentation: r.Documentation}, nil
		}
	}
	return ObjectState{Outcome: ObjectPending}, nil
}

// Completed reports whether a create response body or a lookup result is a
// completed object (ObjectStatus says ObjectSucceeded) rather than one
// still pending or failed. The error is ObjectStatus's.
func (c *Contract) Completed(body []byte) (bool, error) {
	st, err := c.ObjectStatus(body)
	return err == nil && st.Outcome == ObjectSucceeded, err
}

// ErrorObject returns the object an error answer carries at
// response.error_object_field (a declined charge the refused request
// created), re-encoded as JSON for RemoteID, ObjectStatus and References;
// ok is false when the contract names no such field or the body holds no
// JSON object there.
func (c *Contract) ErrorObject(body []byte) (object []byte, ok bool) {
	if c.Response.ErrorObjectField == "" {
		return nil, false
	}
	v, err := decodeJSON(body)
	if err != nil {
		return nil, false
	}
	obj, found := get(v, c.Response.ErrorObjectField)
	if _, isObj := obj.(map[string]any); !found || !isObj {
		return nil, false
	}
	out, err := json.Marshal(obj)
	return out, err == nil
}
