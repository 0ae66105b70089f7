/**
 * Text headed to a terminal. A record's title, tags or body come from anyone
 * who can push to the shared memory, and a terminal obeys the control
 * characters in what it prints: ESC starts sequences that move the cursor
 * (and so hide or overwrite a line), set the window title, write the
 * clipboard (OSC 52) or make a link (OSC 8); a lone CR returns to the start
 * of the line; bidirectional overrides reorder what is shown. Every human
 * view prints through `terminalText`, which shows each of them as a visible
 * symbol instead (C0 controls and DEL as their Unicode control pictures,
 * ␛ for ESC; C1 controls and bidirectional controls as U+FFFD), keeping line
 * feeds, tabs and CR LF line ends. JSON output needs none of it: JSON
 * escapes every control character. Pure.
 */

/** What a terminal would obey: C0 but tab and line feed, CR not before LF, DEL, C1, bidirectional embeddings, overrides and isolates. */
const UNSAFE = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

/** The colours git-mem writes itself (src/cli/output.ts: yellow, red, dim, reset), kept when colour is on. */
const OWN_SGR = /\x1b\[(?:2|31|33)?m/g;

function visible(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return '\ufffd';
}

function neutralise(s: string): string {
  return s.replace(UNSAFE, visible);
}

/**
 * `s` fit for a terminal: every control character a terminal would act on
 * shown as a visible symbol; line feeds, tabs and CR LF kept. With `color`,
 * the four SGR sequences git-mem's own colours use pass (they change a
 * colour, nothing else); every other escape sequence is neutralised.
 */
export function terminalText(s: string, color = false): string {
  // the common case: nothing to do
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(s)) return s;
  UNSAFE.lastIndex = 0;
  if (!color) return neutralise(s);
  let out = '';
  let at = 0;
  OWN_SGR.lastIndex = 0;
  for (let m = OWN_SGR.exec(s); m; m = OWN_SGR.exec(s)) {
    out += neutralise(s.slice(at, m.index)) + m[0];
    at = m.index + m[0].length;
  }
  return out + neutralise(s.slice(at));
}
