//go:build !casckpt_lean

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mcpStdio stands between the process's stdin and stdout and the SDK's
// transport, so that no input ends the session before stdin does:
//   - it passes on each line of stdin that is a JSON-RPC message or batch,
//     and answers any other line with a JSON-RPC parse error (the SDK ends
//     the session on an undecodable line), and a line over maxRequestLine
//     with an invalid-request error naming the request's id when the line
//     has one (the SDK ends the session on it too);
//   - it passes on a batch's notifications alone and its requests as a
//     batch (see passBatch), and refuses a batch the SDK would end the
//     session on (in protocol version 2025-06-18 or later, or with an id
//     in use) with an invalid-request error for each request in it;
//   - when stdin ends, it holds the end back until every request it passed
//     on has been answered on stdout: the SDK cancels the requests in
//     flight when its input ends, and a client that closed its end of
//     stdin may still be reading stdout for their answers.
//
// It is the transport's Writer too, writing one whole message per Write.
type mcpStdio struct {
	mu       sync.Mutex // held while a line is written to out, and for the fields below
	out      io.Writer
	pending  map[jsonrpc.ID]bool // the requests passed on and not answered yet
	answered *sync.Cond          // signalled when pending shrinks
	initID   *jsonrpc.ID         // the initialize request's id, once one is passed on
	noBatch  bool                // the protocol version agreed has no batches
	// atEOF, when set, is called once stdin has ended, before waiting for
	// the answers (a hook for tests).
	atEOF func()
}

func newMCPStdio(out io.Writer) *mcpStdio {
	s := &mcpStdio{out: out, pending: map[jsonrpc.ID]bool{}}
	s.answered = sync.NewCond(&s.mu)
	return s
}

// reader returns what the SDK's transport reads of in: its JSON-RPC lines,
// then in's end once every request among them has been answered. A
// goroutine reads in until its end.
func (s *mcpStdio) reader(in io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, over, err := readLine(r, maxRequestLine)
			if over != nil {
				s.refuse(over.id(), jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("request refused: it is longer than %d MiB, the most one message may be: send less in one request", maxRequestLine>>20))
			} else if len(bytes.TrimSpace(line)) > 0 {
				msgs, raws, batch, derr := decodeLine(line)
				switch {
				case derr != nil:
					s.refuse(nil, jsonrpc.CodeParseError, "parse error: not a JSON-RPC message: "+strings.ReplaceAll(derr.Error(), "\n", " "))
				case !batch:
					s.track(msgs)
					if _, werr := pw.Write(line); werr != nil {
						return // the session has ended
					}
				default:
					if !s.passBatch(pw, msgs, raws) {
						return // the session has ended
					}
				}
			}
			if err != nil {
				if s.atEOF != nil {
					s.atEOF()
				}
				s.waitAnswered()
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// passBatch passes on a batch, or refuses each request in it with an
// error. Its notifications and responses go on alone, each on its own line,
// and its requests as a batch of requests only: the SDK would never answer
// a batch that holds a notification, so a request in it would never be
// answered. A batch is refused when the session's protocol version has
// none, or when its requests' ids are not unique among the requests in
// flight (the SDK ends the session on one). It returns false once the
// session has ended.
func (s *mcpStdio) passBatch(pw io.Writer, msgs []jsonrpc.Message, raws []json.RawMessage) bool {
	var calls []jsonrpc.Message
	var callRaws [][]byte
	var others [][]byte
	for i, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			calls, callRaws = append(calls, m), append(callRaws, raws[i])
		} else {
			others = append(others, raws[i])
		}
	}
	why := ""
	switch {
	case s.batchRefused():
		why = "request refused: the protocol version of this session has no batches: send one message per line"
	case !s.uniqueIDs(calls):
		why = "request refused: its batch reuses an id of a request in flight: give each request its own id"
	}
	if why != "" {
		for _, m := range calls {
			id, _ := json.Marshal(m.(*jsonrpc.Request).ID.Raw())
			s.refuse(id, jsonrpc.CodeInvalidRequest, why)
		}
		return true
	}
	for _, o := range others {
		if _, err := pw.Write(append(o, '\n')); err != nil {
			return false
		}
	}
	if len(calls) == 0 {
		return true
	}
	s.track(calls)
	_, err := pw.Write(append(append([]byte{'['}, bytes.Join(callRaws, []byte{','})...), ']', '\n'))
	return err == nil
}

// uniqueIDs says whether the ids of the requests calls differ from each
// other and from those of the requests in flight.
func (s *mcpStdio) uniqueIDs(calls []jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[jsonrpc.ID]bool{}
	for _, m := range calls {
		id := m.(*jsonrpc.Request).ID
		if seen[id] || s.pending[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

// Write writes p, one message or batch of the SDK's, and notes the answers
// among it. When stdout fails, no request will be answered: none is
// waited for.
func (s *mcpStdio) Write(p []byte) (int, error) {
	msgs, _, _, _ := decodeLine(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.out.Write(p)
	if err != nil {
		clear(s.pending)
	}
	for _, m := range msgs {
		r, ok := m.(*jsonrpc.Response)
		if !ok {
			continue
		}
		delete(s.pending, r.ID)
		if s.initID != nil && r.ID == *s.initID && r.Error == nil {
			s.noBatch = batchless(r.Result)
		}
	}
	s.answered.Broadcast()
	return n, err
}

// Close does nothing: stdout outlives the session.
func (s *mcpStdio) Close() error { return nil }

// track notes the requests among msgs, which are passed on to the SDK.
func (s *mcpStdio) track(msgs []jsonrpc.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			s.pending[r.ID] = true
			if r.Method == "initialize" {
				// The version asked for, until the answer says which one.
				s.initID, s.noBatch = &r.ID, batchless(r.Params)
			}
		}
	}
}

// batchless says whether the protocolVersion in doc (initialize's
// parameters or result) has no batches: 2025-06-18 or later.
func batchless(doc json.RawMessage) bool {
	var v struct{ ProtocolVersion string }
	_ = json.Unmarshal(doc, &v)
	return v.ProtocolVersion >= "2025-06-18" // versions are dates
}

// batchRefused says whether a batch is refused: the protocol version the
// session agreed has none.
func (s *mcpStdio) batchRefused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noBatch
}

// waitAnswered waits until every request passed on has been answered.
func (s *mcpStdio) waitAnswered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.pending) > 0 {
		s.answered.Wait()
	}
}

// refuse answers the request id (null when nil) with a JSON-RPC error.
func (s *mcpStdio) refuse(id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	if err != nil {
		panic(err) // a programming error: the document is fixed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write(append(b, '\n')) // a failure shows in the SDK's next write
}

// decodeLine decodes line, one JSON-RPC message or a batch of them, and
// returns each message with its encoding.
func decodeLine(line []byte) (msgs []jsonrpc.Message, raws []json.RawMessage, batch bool, err error) {
	if batch = json.Unmarshal(line, &raws) == nil; !batch {
		raws = []json.RawMessage{line}
	} else if len(raws) == 0 {
		return nil, nil, true, errors.New("an empty batch") // the SDK ends the session on one
	}
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, nil, batch, err
		}
		msgs = append(msgs, m)
	}
	return msgs, raws, batch, nil
}

// readLine reads one line of r, its newline included. A line longer than
// max is not kept: it goes through an idFinder, which readLine returns.
func readLine(r *bufio.Reader, max int) (line []byte, over *idFinder, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case over != nil:
			over.Write(chunk)
		case len(line)+len(chunk) > max:
			over = &idFinder{}
			over.Write(line)
			over.Write(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, over, err
		}
	}
}

// maxIDLen is the longest request id an idFinder keeps.
const maxIDLen = 256

// idFinder reads a JSON object a piece at a time and keeps only the value
// of its top-level "id" member, so that a request too long to be read can
// still be answered. It is no validator: id says what it found.
type idFinder struct {
	depth            int  // nesting outside strings: 1 inside the top-level object
	inString, escape bool // in a string; after its backslash
	expectName       bool // at depth 1, the next string is a member's name
	inName           bool // reading a depth-1 member's name
	name             []byte
	inID             bool // reading the value of the member "id"
	value            []byte
	found            []byte // the last complete "id" value
}

// Write reads the next piece of the object. It never fails.
func (f *idFinder) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		if f.inString && !f.escape && !f.inName && !f.inID {
			// Skip the string's plain bytes: all a long request is made of.
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				break
			}
			i += j
		}
		f.step(p[i])
	}
	return len(p), nil
}

// step reads byte c.
func (f *idFinder) step(c byte) {
	if f.inID && !f.inString && f.depth == 1 && (c == ',' || c == '}') {
		f.found, f.inID = bytes.TrimSpace(f.value), false
	}
	if f.inID {
		f.value = append(f.value, c)
		f.inID = len(f.value) <= maxIDLen
	}
	if f.inString {
		switch {
		case f.escape:
			f.escape = false
		case c == '\\':
			f.escape = true
		case c == '"':
			f.inString, f.inName = false, false
			return
		}
		if f.inName && len(f.name) <= len("id") {
			f.name = append(f.name, c)
		}
		return
	}
	switch c {
	case '"':
		f.inString = true
		if f.depth == 1 && f.expectName {
			f.inName, f.expectName, f.name = true, false, f.name[:0]
		}
	case '{', '[':
		f.depth++
		f.expectName = f.depth == 1 && c == '{'
	case '}', ']':
		f.depth--
	case ',':
		f.expectName = f.depth == 1
	case ':':
		if f.depth == 1 && string(f.name) == "id" {
			f.inID, f.value = true, f.value[:0]
		}
	}
}

// id returns the "id" found, as JSON, when it is a JSON-RPC id (a string
// or a number), else nil.
func (f *idFinder) id() json.RawMessage {
	var v any
	if json.Unmarshal(f.found, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return json.RawMessage(f.found)
	}
	return nil
}
