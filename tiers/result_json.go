package tiers

import (
	"bytes"
	"encoding/json"
)

// JSON encodes the result compactly without HTML escaping, so evidence such as "score 3 < 4"
// reads the same in record.json as on the terminal.
func (res *Result) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
