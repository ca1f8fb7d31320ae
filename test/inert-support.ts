/** Run-written text that would drive a terminal, and how the human outputs must show it (test/inert-*.test.ts). */

/** OSC 52 (writes the clipboard), clear screen, right-to-left override. */
export const HOSTILE = 'osc\u001b]52;c;aGk=\u0007 clear\u001b[2J rlo\u202e end'
/** HOSTILE as every human output shows it. */
export const HOSTILE_SHOWN = 'osc\\e]52;c;aGk=\\x07 clear\\e[2J rlo\\u202e end'
/** Anything a terminal acts on: C0 but newline and tab, DEL, C1, the bidi controls. */
export const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
