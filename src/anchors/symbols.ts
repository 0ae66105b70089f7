/**
 * Symbols through tree-sitter: web-tree-sitter 0.25.10 with the prebuilt WASM
 * grammars of tree-sitter-wasms 0.1.13 (pinned together: newer runtimes cannot
 * load these grammars). Loaded lazily, one grammar per language on first use.
 * Languages without a grammar here fall back to line anchors.
 */
import { createRequire } from 'node:module';
import { hashLines } from './text.js';

export interface SymbolDef {
  name: string;
  qualified: string;
  kind: string;
  /** 1-based inclusive line range of the definition (with its export keyword). */
  start: number;
  end: number;
  bodyHash: string;
}

const EXT: Record<string, string> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  go: 'go',
  rs: 'rust',
  java: 'java',
};

export function languageOf(path: string): string | undefined {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? EXT[m[1].toLowerCase()] : undefined;
}

/** Node types that define a named symbol, per grammar, with the kind we report. */
const DEFS: Record<string, Record<string, string>> = {
  typescript: {
    function_declaration: 'function',
    generator_function_declaration: 'function',
    class_declaration: 'class',
    abstract_class_declaration: 'class',
    method_definition: 'method',
    interface_declaration: 'interface',
    type_alias_declaration: 'type',
    enum_declaration: 'enum',
    variable_declarator: 'variable',
    internal_module: 'module',
  },
  python: { function_definition: 'function', class_definition: 'class' },
  go: { function_declaration: 'function', method_declaration: 'method', type_spec: 'type' },
  rust: {
    function_item: 'function',
    struct_item: 'struct',
    enum_item: 'enum',
    trait_item: 'trait',
    impl_item: 'impl',
    mod_item: 'module',
    const_item: 'constant',
  },
  java: {
    class_declaration: 'class',
    interface_declaration: 'interface',
    enum_declaration: 'enum',
    record_declaration: 'record',
    method_declaration: 'method',
    constructor_declaration: 'constructor',
  },
};
DEFS.tsx = DEFS.typescript;
DEFS.javascript = DEFS.typescript;

// biome-ignore lint/suspicious/noExplicitAny: web-tree-sitter is loaded dynamically
type TSNode = any;
// biome-ignore lint/suspicious/noExplicitAny: web-tree-sitter is loaded dynamically
let modP: Promise<any> | undefined;
// biome-ignore lint/suspicious/noExplicitAny: web-tree-sitter is loaded dynamically
const langs = new Map<string, Promise<any>>();

async function runtime() {
  modP ??= (async () => {
    const mod = await import('web-tree-sitter');
    await mod.Parser.init();
    return mod;
  })();
  return modP;
}

function grammarPath(lang: string): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('tree-sitter-wasms/package.json');
  return pkg.replace(/package\.json$/, `out/tree-sitter-${lang}.wasm`);
}

async function parserFor(lang: string) {
  const mod = await runtime();
  let lp = langs.get(lang);
  if (!lp) {
    lp = mod.Language.load(grammarPath(lang)) as Promise<unknown>;
    langs.set(lang, lp);
  }
  const parser = new mod.Parser();
  parser.setLanguage(await lp);
  return parser;
}

/** All named definitions in a source file, outermost first. */
export async function extractSymbols(lang: string, source: string): Promise<SymbolDef[]> {
  const defs = DEFS[lang];
  if (!defs) return [];
  const parser = await parserFor(lang);
  const tree = parser.parse(source);
  if (!tree) return [];
  const out: SymbolDef[] = [];
  const lines = source.split('\n');
  const walk = (node: TSNode, scope: string[], depth: number) => {
    if (depth > 60) return;
    for (let i = 0; i < node.namedChildCount; i++) {
      const child = node.namedChild(i);
      if (!child) continue;
      const kind = defs[child.type];
      let next = scope;
      const assigned = JS_LIKE.has(lang) ? assignedFunction(child) : null;
      if (assigned) {
        // `res.redirect = function redirect() {}`, `View.prototype.lookup = function () {}`
        const span = child.parent?.type === 'expression_statement' ? child.parent : child;
        const qualified = [...scope, assigned.path].join('.');
        out.push({
          name: assigned.name.text,
          qualified,
          kind: qualified.includes('.') ? 'method' : 'function',
          start: span.startPosition.row + 1,
          end: span.endPosition.row + 1,
          bodyHash: bodyHash(lines, span, assigned.name),
        });
        next = qualified.split('.');
      } else if (kind) {
        const name = symbolName(lang, child);
        const valueOk =
          child.type !== 'variable_declarator' || isFunctionish(child.childForFieldName('value'));
        if (name && valueOk) {
          const span = child.type === 'variable_declarator' ? (child.parent?.parent ?? child) : child;
          const outer = span.parent?.type === 'export_statement' ? span.parent : span;
          const start = outer.startPosition.row + 1;
          const end = outer.endPosition.row + 1;
          const qualified = [...scope, name.text].join('.');
          out.push({
            name: name.text,
            qualified,
            kind: child.type === 'variable_declarator' ? 'function' : kind,
            start,
            end,
            bodyHash: bodyHash(lines, outer, name),
          });
          next = [...scope, name.text];
        }
      }
      walk(child, next, depth + 1);
    }
  };
  walk(tree.rootNode, [], 0);
  tree.delete?.();
  parser.delete?.();
  return out;
}

const JS_LIKE = new Set(['javascript', 'typescript', 'tsx']);

/**
 * A function or class assigned to a member (`obj.prop = function …`, `X.prototype.y = …`,
 * `module.exports.f = () => …`): its dotted path without `prototype`, `this`, `module.exports`
 * or `exports`, and the node of its last name. Null for anything else.
 */
function assignedFunction(node: TSNode): { path: string; name: TSNode } | null {
  if (node.type !== 'assignment_expression') return null;
  const left = node.childForFieldName('left');
  let right = node.childForFieldName('right');
  // `a.b = exports.b = function …`: the innermost value decides
  while (right?.type === 'assignment_expression') right = right.childForFieldName('right');
  if (left?.type !== 'member_expression' || !isFunctionish(right)) return null;
  const prop = left.childForFieldName('property');
  if (!prop) return null;
  const parts = left.text.replace(/\s+/g, '').split('.');
  if (parts.some((p: string) => !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(p))) return null;
  let path = parts.filter((p: string) => p !== 'prototype');
  if (path[0] === 'this') path = path.slice(1);
  if (path[0] === 'module' && path[1] === 'exports') path = path.slice(2);
  else if (path[0] === 'exports') path = path.slice(1);
  if (!path.length) return null;
  return { path: path.join('.'), name: prop };
}

function isFunctionish(v: TSNode): boolean {
  return (
    !!v &&
    ['arrow_function', 'function_expression', 'function', 'class', 'generator_function'].includes(v.type)
  );
}

/** The identifier that names a definition (Rust impl blocks: the implemented type; Go methods: receiver type). */
function symbolName(
  lang: string,
  node: TSNode,
): { text: string; startIndex: number; endIndex: number } | null {
  if (lang === 'rust' && node.type === 'impl_item') {
    const t = node.childForFieldName('type');
    return t ? { text: t.text.replace(/<.*$/, ''), startIndex: t.startIndex, endIndex: t.endIndex } : null;
  }
  const n = node.childForFieldName('name');
  if (!n) return null;
  if (lang === 'go' && node.type === 'method_declaration') {
    const recv = node.childForFieldName('receiver');
    const m = recv ? /([A-Za-z_][A-Za-z0-9_]*)\s*\)?\s*$/.exec(recv.text.replace(/\)$/, '')) : null;
    if (m) return { text: `${m[1]}.${n.text}`, startIndex: n.startIndex, endIndex: n.endIndex };
  }
  return { text: n.text, startIndex: n.startIndex, endIndex: n.endIndex };
}

/** Hash of the definition with its own name blanked, so a rename keeps the hash and an edit changes it. */
function bodyHash(lines: string[], node: TSNode, name: { startIndex: number; endIndex: number }): string {
  const text: string = node.text;
  const rel = name.startIndex - node.startIndex;
  const blanked =
    rel >= 0 && rel < text.length
      ? text.slice(0, rel) + '\u0000' + text.slice(rel + (name.endIndex - name.startIndex))
      : text;
  void lines;
  return hashLines(blanked.split('\n'));
}

/** Finds a definition by qualified name, or by simple name when that is unique. */
export function findSymbol(defs: readonly SymbolDef[], name: string): SymbolDef[] {
  const exact = defs.filter((d) => d.qualified === name);
  if (exact.length) return exact;
  const last = name.includes('.') ? name : undefined;
  if (last) {
    const tail = defs.filter((d) => d.qualified.endsWith(`.${name}`));
    if (tail.length) return tail;
  }
  return defs.filter((d) => d.name === name || d.name.endsWith(`.${name}`));
}
