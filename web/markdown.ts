/**
 * Memory text as Markdown, made safe to show. Memory comes from teammates
 * and agents, so it is untrusted:
 *   - raw HTML in the Markdown is shown as text, never parsed (a `<script>`
 *     or `<img onerror>` reads as what it is);
 *   - an image is shown only from a data: URL; any other becomes a line of
 *     text naming it (no request leaves the page);
 *   - links keep http(s), mailto and in-page targets only, and open apart;
 *   - DOMPurify then cleans the result (no script, no event handler, no
 *     javascript: URL), and the server's Content-Security-Policy stands
 *     behind both.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const escapeHtml = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

const SAFE_LINK = /^(https?:|mailto:|#)/i;
const DATA_IMAGE = /^data:image\/(png|gif|jpeg|webp);base64,/i;

const md = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return `<code class="raw-html">${escapeHtml(text)}</code>`;
    },
    image({ href, text }: Tokens.Image) {
      if (DATA_IMAGE.test(href)) return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}">`;
      return `<span class="blocked-image" title="remote images are not loaded">[image: ${escapeHtml(text || 'untitled')} — ${escapeHtml(href)} (not loaded)]</span>`;
    },
  },
});

let hooked = false;
function hook() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (!SAFE_LINK.test(href)) {
        node.removeAttribute('href');
        node.setAttribute('class', 'unsafe-link');
        node.setAttribute(
          'title',
          `link removed: only http(s), mailto and # links are kept (was ${href.slice(0, 80)})`,
        );
      } else if (!href.startsWith('#')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    }
    if (node.tagName === 'IMG' && !DATA_IMAGE.test(node.getAttribute('src') ?? '')) node.remove();
  });
}

/** Markdown → sanitised HTML. */
export function renderMarkdown(text: string): string {
  hook();
  const html = md.parse(text ?? '') as string;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: [
      'style',
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'object',
      'embed',
      'svg',
      'math',
      'video',
      'audio',
      'source',
      'link',
      'meta',
      'base',
    ],
    FORBID_ATTR: ['style', 'srcset', 'formaction', 'action', 'background', 'poster'],
    ALLOW_DATA_ATTR: false,
  });
}
