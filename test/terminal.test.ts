/**
 * Text headed to a terminal (src/safety/terminal.ts): every control character
 * a record could hold is shown as a symbol, never obeyed.
 */
import { describe, expect, it } from 'vitest';
import { terminalText } from '../src/safety/terminal.js';

const ESC_OSC52 = '\u001b]52;c;SGVsbG8=\u0007';

describe('terminalText: what a terminal would obey is shown, not obeyed', () => {
  it('shows ESC, BEL, a lone CR, DEL, C1 and bidirectional overrides as symbols; keeps LF, tab and CR LF', () => {
    const s = `a${ESC_OSC52}b\u001b[2K\rc\u007fd\u009be\u202ef\n\tg\r\n`;
    const out = terminalText(s);
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f\u202e]/);
    expect(out).toBe('a␛]52;c;SGVsbG8=␇b␛[2K␍c␡d\ufffde\ufffdf\n\tg\r\n');
  });

  it('with colour on, only git-mem\u2019s own colours pass', () => {
    const ours = '\u001b[33mid\u001b[m \u001b[2mdim\u001b[m';
    expect(terminalText(`${ours} \u001b[8mhidden\u001b]52;c;x\u0007`, true)).toBe(
      `${ours} ␛[8mhidden␛]52;c;x␇`,
    );
    // colour off: every ESC is shown
    expect(terminalText(ours)).not.toContain('\u001b');
  });
});
