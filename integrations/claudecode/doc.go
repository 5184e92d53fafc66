// Package claudecode is casckpt's Claude Code hook: what it does on each
// hook event Claude Code sends, where it keeps its log of misses, and the
// hooks block it installs into, and removes from, a Claude Code
// settings.json. cmd/casckpt's `hook claude-code` command wires it to
// stdin, stdout and the store; this package reads no environment.
//
// Vocabulary: an Event is the part of one hook event (the JSON object
// Claude Code writes on the hook's stdin) that the hook reads. A prompt
// (UserPromptSubmit) starts a turn, labelled with the event's session_id
// and prompt_id; a write tool's PreToolUse snapshots the projects it
// touches once per prompt, its PostToolUse records the write; Stop ends
// the turn. A Hook acts on one event against one store (Hook.Run). The
// hook's state is a directory (Hook.Dir: the store's, or a bucket store's
// cache directory) holding hook.log, one line per failure or miss
// (RecentMisses reads it back for casckpt status), and hook.told, the
// sessions already told of a failing checkpoint. Install and Uninstall
// change a settings file; WriteSettings prints the block they merge.
//
// Caveats: the hook never fails: every failure is logged, and the user is
// told (once per session, through the systemMessage Claude Code shows)
// only when a prompt got no checkpoint. The store is opened only for an
// event the hook acts on, through Hook.Open, which the caller bounds by
// Wait. Install and Uninstall keep every other setting and hook as it
// is, in its order, and write the file through a temporary file.
package claudecode
