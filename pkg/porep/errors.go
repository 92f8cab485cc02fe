package porep

import "encoding/json"

// domainTypeError builds the error Domain.UnmarshalJSON returns; encoding/json
// fills in the field path of an *json.UnmarshalTypeError.
func domainTypeError(what string) error {
	return &json.UnmarshalTypeError{Value: what + " (want 32 integers 0..255)", Type: domainType}
}
