/**
 * Symbols through tree-sitter: web-tree-sitter 0.25.10 with the prebuilt WASM
 * grammars of tree-sitter-wasms 0.1.13 (pinned together: newer runtimes cannot
 * load these grammars). Loaded lazily, one grammar per language on first use.
 * Languages without a grammar here fall back to line anchors.
 *
 * One table (DEFS) says, per language, which syntax nodes define a symbol and
 * of what kind; the few shapes whose name is not simply the node's `name` field
 * (`res.redirect = function …`, `void Foo::bar() {}`, Go receivers, Rust impl
 * blocks, Ruby `def self.x`, C declarators) carry their own name function.
 */
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { hashLines } from './text.js';

export interface SymbolDef {
  /** The symbol's own name (the last part of `qualified`). */
  name: string;
  /** Dotted path within the file: `View.lookup`, `res.redirect`, `net.Server.stop`, `Stack.push`. */
  qualified: string;
  kind: string;
  /** 1-based inclusive line range of the definition (with its export keyword, decorators, template header). */
  start: number;
  end: number;
  bodyHash: string;
  /** The file's package where the language names one (Go `package`, Java `package`): `pkg.Type.Method` resolves. */
  module?: string;
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
  rb: 'ruby',
  rake: 'ruby',
  gemspec: 'ruby',
  c: 'c',
  // headers are read as C++ (its grammar reads C headers too; a C header read as C would miss classes)
  h: 'cpp',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  'c++': 'cpp',
  hh: 'cpp',
  hpp: 'cpp',
  hxx: 'cpp',
  'h++': 'cpp',
  ipp: 'cpp',
  tpp: 'cpp',
};

export function languageOf(path: string): string | undefined {
  const m = /\.([A-Za-z0-9+]+)$/.exec(path);
  const ext = m?.[1].toLowerCase();
  return ext && Object.hasOwn(EXT, ext) ? EXT[ext] : undefined;
}

/** Languages whose symbols can move between each other's files (a function moved from a .c file to a header). */
export function sameLanguageFamily(a: string, b: string): boolean {
  const family = (l: string) => (l === 'c' ? 'cpp' : l === 'tsx' || l === 'javascript' ? 'typescript' : l);
  return family(a) === family(b);
}

// biome-ignore lint/suspicious/noExplicitAny: web-tree-sitter is loaded dynamically
type TSNode = any;

/** What a definition node is called: the path it adds to its scope (its name last) and the nodes that spell it. */
interface Named {
  path: string[];
  /** Nodes holding the name, blanked in the body hash so that a rename keeps the hash. */
  blank: TSNode[];
  /** Overrides the kind of the table. */
  kind?: string;
  /** Only names a scope for what it contains (`const app = { listen() {} }`); not a symbol itself. */
  scopeOnly?: boolean;
  /** Does not name a scope for what it contains (a C `typedef struct {…} T`). */
  closed?: boolean;
}
type Namer = (node: TSNode) => Named | null;
/** A definition's kind, with a name function when its name is not its `name` field. */
type Shape = string | { kind: string; name: Namer };

/** Per language: the node types that define a named symbol, and the kind reported. */
const DEFS: Record<string, Record<string, Shape>> = {
  typescript: {
    function_declaration: 'function',
    generator_function_declaration: 'function',
    class_declaration: 'class',
    abstract_class_declaration: 'class',
    method_definition: 'method',
    interface_declaration: 'interface',
    type_alias_declaration: 'type',
    enum_declaration: 'enum',
    internal_module: 'module',
    // `const f = () => …`, `export const f = …`, `const app = { listen() {} }`
    variable_declarator: { kind: 'function', name: jsVariable },
    // `res.redirect = function redirect() {}`, `View.prototype.lookup = …`, `exports.f = …`
    assignment_expression: { kind: 'function', name: jsAssigned },
    // `{ handle: function () {} }`, `class K { handle = () => {} }`
    pair: { kind: 'method', name: jsMember },
    field_definition: { kind: 'method', name: jsMember },
    public_field_definition: { kind: 'method', name: jsMember },
  },
  python: { function_definition: 'function', class_definition: 'class' },
  go: {
    function_declaration: 'function',
    method_declaration: { kind: 'method', name: goMethod },
    type_spec: 'type',
  },
  rust: {
    function_item: 'function',
    struct_item: 'struct',
    enum_item: 'enum',
    union_item: 'union',
    trait_item: 'trait',
    impl_item: { kind: 'impl', name: rustImpl },
    mod_item: 'module',
    const_item: 'constant',
    static_item: 'constant',
    type_item: 'type',
    macro_definition: 'macro',
  },
  java: {
    class_declaration: 'class',
    interface_declaration: 'interface',
    enum_declaration: 'enum',
    record_declaration: 'record',
    annotation_type_declaration: 'annotation',
    method_declaration: 'method',
    constructor_declaration: 'constructor',
  },
  ruby: {
    class: { kind: 'class', name: rubyConstant },
    module: { kind: 'module', name: rubyConstant },
    method: 'method',
    singleton_method: { kind: 'method', name: rubySingleton },
  },
  c: {
    function_definition: { kind: 'function', name: cFunction },
    struct_specifier: { kind: 'struct', name: cTagged },
    union_specifier: { kind: 'union', name: cTagged },
    enum_specifier: { kind: 'enum', name: cTagged },
    type_definition: { kind: 'type', name: cTypedef },
    preproc_function_def: 'macro',
  },
};
DEFS.tsx = DEFS.typescript;
DEFS.javascript = DEFS.typescript;
DEFS.cpp = {
  ...DEFS.c,
  class_specifier: { kind: 'class', name: cTagged },
  namespace_definition: { kind: 'namespace', name: cppNamespace },
};

/** Nodes that wrap a definition and belong to its lines: `export`, decorators, a C++ template header. */
const WRAPPERS = new Set(['export_statement', 'decorated_definition', 'template_declaration']);
/** Kinds whose functions are methods. */
const CONTAINERS = new Set(['class', 'struct', 'impl', 'trait', 'interface', 'enum', 'record', 'union']);
/** The node naming the file's package, per language. */
const PACKAGE: Record<string, string> = { go: 'package_clause', java: 'package_declaration' };

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

/**
 * Grammars are compiled by V8's baseline compiler only (Liftoff). Its optimizing tier spent 0.3–1 s
 * of CPU per grammar on the first parse (a grammar's lexer and parse tables are huge functions),
 * far more than a one-shot command ever gets back: `add --symbol` on a JavaScript file took 1.5 s
 * instead of 1.0 s, loading and using all ten grammars 4.5 s of CPU instead of 0.6 s, and a parse
 * of a 10,000-line file is as fast either way. The flag is set only while grammars compile, so no
 * other WebAssembly in the process is affected.
 */
let compiling = 0;
async function loadGrammar(
  // biome-ignore lint/suspicious/noExplicitAny: web-tree-sitter is loaded dynamically
  mod: any,
  lang: string,
): Promise<unknown> {
  if (compiling++ === 0) setFlagsFromString('--liftoff-only');
  try {
    return await mod.Language.load(grammarPath(lang));
  } finally {
    if (--compiling === 0) setFlagsFromString('--no-liftoff-only');
  }
}

async function parserFor(lang: string) {
  const mod = await runtime();
  let lp = langs.get(lang);
  if (!lp) {
    lp = loadGrammar(mod, lang);
    langs.set(lang, lp);
  }
  const parser = new mod.Parser();
  parser.setLanguage(await lp);
  return parser;
}

/** All named definitions in a source file, outermost first. */
export async function extractSymbols(lang: string, source: string): Promise<SymbolDef[]> {
  const defs = Object.hasOwn(DEFS, lang) ? DEFS[lang] : undefined;
  if (!defs) return [];
  const parser = await parserFor(lang);
  const tree = parser.parse(source);
  if (!tree) return [];
  const out: SymbolDef[] = [];
  let module: string | undefined;
  /** scope: the qualified path around `node`'s children; owner: the kind of the definition that names it. */
  const walk = (node: TSNode, scope: string[], owner: string | undefined, depth: number) => {
    if (depth > 60) return;
    // namedChild(i) is about 3× faster than namedChildren, which builds every node of the array
    for (let i = 0; i < node.namedChildCount; i++) {
      const child = node.namedChild(i);
      if (!child) continue;
      if (depth === 0 && child.type === PACKAGE[lang]) module = child.namedChild(0)?.text.replace(/\s+/g, '');
      const shape = Object.hasOwn(defs, child.type) ? defs[child.type] : undefined;
      const named = shape ? nameOf(shape, child) : null;
      if (!named) {
        walk(child, scope, owner, depth + 1);
        continue;
      }
      // `a.b = c.d = function …`: every name of the chain is defined where the first one is
      const chained = child.type === 'assignment_expression' && node.type === 'assignment_expression';
      const path = [...(chained ? chainScope(scope, node) : scope), ...named.path];
      let kind = named.kind ?? (typeof shape === 'string' ? shape : shape!.kind);
      if (kind === 'function' && ((owner && CONTAINERS.has(owner)) || named.path.length > 1)) kind = 'method';
      if (!named.scopeOnly) {
        const span = spanOf(child);
        const end = span.endPosition;
        out.push({
          name: path[path.length - 1],
          qualified: path.join('.'),
          kind,
          start: span.startPosition.row + 1,
          // a node ending with its line break (a C macro) ends on the line before
          end: end.column === 0 && end.row > span.startPosition.row ? end.row : end.row + 1,
          bodyHash: bodyHash(span, named.blank),
        });
      }
      if (named.closed) walk(child, scope, owner, depth + 1);
      else walk(child, path, kind, depth + 1);
    }
  };
  walk(tree.rootNode, [], undefined, 0);
  tree.delete?.();
  parser.delete?.();
  if (module) for (const d of out) d.module = module;
  return out;
}

/** The scope of a chained assignment's first name (`res.contentType = res.type = function …`). */
function chainScope(scope: string[], outer: TSNode): string[] {
  // the outer assignment added its own path to `scope`: take it off again
  const own = jsAssigned(outer);
  return own ? scope.slice(0, scope.length - own.path.length) : scope;
}

function nameOf(shape: Shape, node: TSNode): Named | null {
  if (typeof shape !== 'string') return shape.name(node);
  const n = node.childForFieldName('name');
  if (!n) return null;
  return { path: [n.text], blank: [n] };
}

/** The node whose lines a definition covers: with its declaration, its `export`, decorators, template header. */
function spanOf(node: TSNode): TSNode {
  let s = node;
  if (s.type === 'variable_declarator') {
    const decl = s.parent;
    if (decl && decl.namedChildren.filter((c: TSNode) => c?.type === 'variable_declarator').length === 1)
      s = decl;
  }
  if (s.type === 'assignment_expression') {
    while (s.parent?.type === 'assignment_expression') s = s.parent;
    if (s.parent?.type === 'expression_statement') s = s.parent;
  }
  while (s.parent && WRAPPERS.has(s.parent.type)) s = s.parent;
  return s;
}

/** Hash of the definition with its own name blanked, so a rename keeps the hash and an edit changes it. */
function bodyHash(node: TSNode, blank: TSNode[]): string {
  const text: string = node.text;
  let out = '';
  let at = 0;
  for (const b of [...blank].sort((x, y) => x.startIndex - y.startIndex)) {
    const rel = b.startIndex - node.startIndex;
    if (rel < at || rel >= text.length) continue;
    out += `${text.slice(at, rel)}\u0000`;
    at = rel + (b.endIndex - b.startIndex);
  }
  return hashLines((out + text.slice(at)).split('\n'));
}

// ---- JavaScript, TypeScript, TSX

function isFunctionish(v: TSNode): boolean {
  return (
    !!v &&
    ['arrow_function', 'function_expression', 'function', 'class', 'generator_function'].includes(v.type)
  );
}

/**
 * The name a function expression gives itself (`res.redirect = function redirect`): visible only
 * inside it, so it is blanked with the name it is bound to; renaming either keeps the hash.
 */
function ownName(value: TSNode): TSNode[] {
  const n = value?.childForFieldName('name');
  return n ? [n] : [];
}

/** `const f = () => …` (a function), `export const X = …` (a constant), `const app = { … }` (a scope). */
function jsVariable(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (n?.type !== 'identifier') return null;
  const value = node.childForFieldName('value');
  if (isFunctionish(value))
    return {
      path: [n.text],
      blank: [n, ...ownName(value)],
      kind: value.type === 'class' ? 'class' : 'function',
    };
  const decl = node.parent;
  const exported = decl?.parent?.type === 'export_statement';
  if (exported)
    return { path: [n.text], blank: [n], kind: decl.child(0)?.text === 'const' ? 'constant' : 'variable' };
  if (value?.type === 'object') return { path: [n.text], blank: [n], scopeOnly: true };
  return null;
}

/**
 * A function or class assigned to a member (`obj.prop = function …`, `X.prototype.y = …`,
 * `module.exports.f = () => …`): its dotted path without `prototype`, `this`, `module.exports`
 * or `exports`. Null for anything else.
 */
function jsAssigned(node: TSNode): Named | null {
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
  const kind = right.type === 'class' ? 'class' : path.length > 1 ? 'method' : 'function';
  return { path, blank: [prop, ...ownName(right)], kind };
}

/** `{ handle: function () {} }` and class fields holding a function: `handle = () => {}`. */
function jsMember(node: TSNode): Named | null {
  const n =
    node.childForFieldName('key') ?? node.childForFieldName('name') ?? node.childForFieldName('property');
  const value = node.childForFieldName('value');
  if (!n || !isFunctionish(value)) return null;
  const name = n.type === 'string' ? n.text.slice(1, -1) : n.text;
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) return null;
  return { path: [name], blank: [n, ...ownName(value)] };
}

// ---- Go, Rust

/** `func (s *Server) Serve()` is `Server.Serve` (generic receivers too: `(s *Stack[T])`). */
function goMethod(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (!n) return null;
  const recv = node.childForFieldName('receiver');
  const param = recv?.namedChildren.find((c: TSNode) => c?.type === 'parameter_declaration');
  const type = param?.childForFieldName('type')?.text as string | undefined;
  const m = type ? /^\*?\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(type) : null;
  return { path: m ? [m[1], n.text] : [n.text], blank: [n] };
}

/** An impl block is named by the type it implements (`impl<T> fmt::Display for Stack<T>`: `Stack`). */
function rustImpl(node: TSNode): Named | null {
  const t = node.childForFieldName('type');
  if (!t) return null;
  const name = (t.text as string).replace(/<.*$/s, '').split('::').pop()!.trim();
  return name ? { path: [name], blank: [t] } : null;
}

// ---- Ruby

/** `class Foo::Bar` is `Foo.Bar`. */
function rubyConstant(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (!n) return null;
  const last = n.type === 'scope_resolution' ? (n.childForFieldName('name') ?? n) : n;
  const path = (n.text as string).split('::').filter(Boolean);
  return path.length ? { path, blank: [last] } : null;
}

/** `def self.build` in `class Request` is `Request.build`; `def Request.build` elsewhere too. */
function rubySingleton(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (!n) return null;
  const obj = node.childForFieldName('object');
  const path = obj && obj.type !== 'self' ? [...(obj.text as string).split('::'), n.text] : [n.text];
  return { path, blank: [n] };
}

// ---- C, C++

/** `static char *buf_grow(…) {}`, `void Server::stop() {}` (`Server.stop`), `Pool<T>::get`, `operator==`. */
function cFunction(node: TSNode): Named | null {
  let d = node.childForFieldName('declarator');
  for (let i = 0; d && d.type !== 'function_declarator' && i < 8; i++)
    d = d.childForFieldName('declarator') ?? (d.type === 'reference_declarator' ? d.namedChild(0) : null);
  const id = d?.childForFieldName('declarator');
  if (!id) return null;
  const q = cppPath(id);
  return q && { path: q.path, blank: [q.last] };
}

function cppPath(n: TSNode): { path: string[]; last: TSNode } | null {
  if (n.type === 'qualified_identifier') {
    const scope = n.childForFieldName('scope');
    const rest = n.childForFieldName('name');
    const inner = rest ? cppPath(rest) : null;
    if (!inner) return null;
    const head = scope ? [scopeName(scope)] : [];
    return { path: [...head, ...inner.path], last: inner.last };
  }
  if (n.type === 'template_function' || n.type === 'template_type') {
    const name = n.childForFieldName('name');
    return name ? { path: [name.text], last: name } : null;
  }
  if (/identifier|destructor_name|operator_name/.test(n.type))
    return { path: [n.text.replace(/\s+/g, '')], last: n };
  return null;
}

const scopeName = (s: TSNode): string =>
  s.type === 'template_type' ? (s.childForFieldName('name')?.text ?? s.text) : (s.text as string);

/** A struct, union, enum or class with a body (`struct buf *b` only mentions one). */
function cTagged(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (!n || !node.childForFieldName('body')) return null;
  const q = cppPath(n);
  return q && { path: q.path, blank: [q.last] };
}

/** `typedef struct {…} point_t;` is `point_t`; the struct inside keeps its own name, if any. */
function cTypedef(node: TSNode): Named | null {
  const d = node.childForFieldName('declarator');
  if (d?.type !== 'type_identifier') return null;
  return { path: [d.text], blank: [d], closed: true };
}

/** `namespace net {}`, `namespace a::b {}`; an anonymous namespace names nothing. */
function cppNamespace(node: TSNode): Named | null {
  const n = node.childForFieldName('name');
  if (!n) return null;
  return { path: (n.text as string).split('::').map((s) => s.trim()), blank: [n] };
}

// ---- finding a symbol by name

/**
 * A symbol name as people write it, in the dotted form of `SymbolDef.qualified`: `Foo::bar`
 * (C++, Rust, Ruby), `Foo#bar` (Ruby), `(*T).M` and `pkg.(*T).M` (Go), `View.prototype.lookup`,
 * `Stack::<T>::push`.
 */
export function normalizeSymbolName(name: string): string {
  let s = name.trim().replace(/\(\s*\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)/g, '$1');
  if (!/operator/.test(s)) for (let i = 0; i < 4 && /<[^<>]*>/.test(s); i++) s = s.replace(/<[^<>]*>/g, '');
  return s
    .replace(/::|#/g, '.')
    .split('.')
    .filter((p) => p && p !== 'prototype')
    .join('.');
}

/**
 * Definitions a name can mean: the qualified name (`View.lookup`), the same with the file's
 * package (`http.Server.Serve`), else every definition whose qualified name ends with it (the
 * plain name `lookup`, or `Server.stop` for `net.Server.stop`).
 */
export function findSymbol(defs: readonly SymbolDef[], name: string): SymbolDef[] {
  const q = normalizeSymbolName(name);
  const full = (d: SymbolDef) => (d.module ? `${d.module}.${d.qualified}` : d.qualified);
  const exact = defs.filter((d) => d.qualified === q || full(d) === q);
  if (exact.length) return exact;
  return defs.filter((d) => full(d).endsWith(`.${q}`));
}

/**
 * Of several definitions a name matched, the one meant when the others only accompany it: a
 * class over its constructor (`UserService`, `Server::Server`), a type over its impl blocks.
 * Everything when that does not single one out.
 */
export function preferredSymbols<T extends { def: SymbolDef }>(hits: readonly T[]): T[] {
  if (hits.length < 2) return [...hits];
  const quals = new Set(hits.map((h) => h.def.qualified));
  const primary = hits.filter(
    (h) =>
      h.def.kind !== 'impl' &&
      !(
        h.def.qualified.endsWith(`.${h.def.name}.${h.def.name}`) &&
        quals.has(h.def.qualified.slice(0, -h.def.name.length - 1))
      ),
  );
  return primary.length ? primary : [...hits];
}
