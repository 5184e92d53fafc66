package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// jsonObject is a JSON object that keeps its keys in order, so that
// rewriting a person's settings file changes only what it must.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value json.RawMessage
}

// UnmarshalJSON reads a JSON object, keeping its members' order.
func (o *jsonObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	*o = nil
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, jsonMember{tok.(string), v})
	}
	_, err := dec.Token()
	return err
}

// MarshalJSON writes the object's members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b = append(append(b, k...), ':')
		b = append(b, m.value...)
	}
	return append(b, '}'), nil
}

// get returns the value of key (nil when absent).
func (o jsonObject) get(key string) json.RawMessage {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// set sets key to v (appended when new; removed when v is nil).
func (o *jsonObject) set(key string, v json.RawMessage) {
	for i, m := range *o {
		if m.key == key {
			if v == nil {
				*o = slices.Delete(*o, i, i+1)
			} else {
				(*o)[i].value = v
			}
			return
		}
	}
	if v != nil {
		*o = append(*o, jsonMember{key, v})
	}
}
