package jsonapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Path is a path (or a file name) as the --json documents carry it. A
// file system name is bytes, not always valid UTF-8, and encoding/json
// writes each byte that is not part of valid UTF-8 as U+FFFD, which no
// reader can turn back into the name. Path writes such a byte as
// "\udcXX" instead, the lone surrogate that Python's surrogateescape
// decodes it to (os.fsencode gives the bytes back), and reads "\udcXX"
// (XX from 80 to FF) back as the byte. A valid UTF-8 path is written as
// encoding/json writes any string.
type Path string

// Paths converts a list of paths for a JSON document; never nil.
func Paths(paths []string) []Path {
	out := make([]Path, len(paths))
	for i, p := range paths {
		out[i] = Path(p)
	}
	return out
}

// MarshalJSON writes p as a JSON string, each byte that is not part of
// valid UTF-8 as "\udcXX".
func (p Path) MarshalJSON() ([]byte, error) {
	s := string(p)
	if utf8.ValidString(s) {
		return jsonString(s)
	}
	b := []byte{'"'}
	for len(s) > 0 {
		valid := 0
		for valid < len(s) {
			r, size := utf8.DecodeRuneInString(s[valid:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			valid += size
		}
		if valid > 0 {
			q, err := jsonString(s[:valid])
			if err != nil {
				return nil, err
			}
			b = append(b, q[1:len(q)-1]...)
			s = s[valid:]
			continue
		}
		b = fmt.Appendf(b, `\udc%02x`, s[0])
		s = s[1:]
	}
	return append(b, '"'), nil
}

// jsonString is s, valid UTF-8, as a JSON string, written as the --json
// documents write strings (no HTML escapes).
func jsonString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a JSON string as encoding/json does, except that a
// lone "\udcXX" escape (XX from 80 to FF) is the byte XX. null leaves p
// as it is.
func (p *Path) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	if !strings.Contains(strings.ToLower(string(data)), `\udc`) {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*p = Path(s)
		return nil
	}
	s, err := unquotePath(data)
	if err != nil {
		return err
	}
	*p = Path(s)
	return nil
}

var errPathString = errors.New("a path in JSON is not a well-formed JSON string")

// unquotePath decodes the JSON string literal data, a lone low surrogate
// escape from \udc80 to \udcff as the byte it stands for.
func unquotePath(data []byte) (string, error) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", errPathString
	}
	in := string(data[1 : len(data)-1])
	var b strings.Builder
	for len(in) > 0 {
		c := in[0]
		if c != '\\' {
			if c < 0x20 || c == '"' {
				return "", errPathString
			}
			b.WriteByte(c)
			in = in[1:]
			continue
		}
		if len(in) < 2 {
			return "", errPathString
		}
		switch e := in[1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(in[2:])
			if !ok {
				return "", errPathString
			}
			in = in[6:]
			switch {
			case 0xdc80 <= r && r <= 0xdcff:
				b.WriteByte(byte(r - 0xdc00))
			case utf16.IsSurrogate(r):
				low, ok := rune(0), false
				if len(in) >= 6 && in[0] == '\\' && in[1] == 'u' {
					low, ok = hex4(in[2:])
				}
				if pair := utf16.DecodeRune(r, low); ok && pair != utf8.RuneError {
					b.WriteRune(pair)
					in = in[6:]
				} else {
					b.WriteRune(utf8.RuneError)
				}
			default:
				b.WriteRune(r)
			}
			continue
		default:
			return "", errPathString
		}
		in = in[2:]
	}
	return b.String(), nil
}

// hex4 reads the four hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	return rune(n), err == nil
}
