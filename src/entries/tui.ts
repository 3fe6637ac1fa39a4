/**
 * `tack/tui`: the full-screen terminal chat (Ink) over an agent session, as `tack chat` runs it. Its own entry so
 * that Ink, React and marked load only for a program (or the CLI, lazily) that draws it.
 */

export { type ChatTui, createChatTui, type RunChatOptions, runChatTui } from '../tui/run.js';
