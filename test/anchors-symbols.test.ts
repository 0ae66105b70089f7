/**
 * Symbols through syntax trees, per language, on the shapes real code has: Express's
 * `res.redirect = function redirect`, a TypeScript module, Flask, a Go package, a Rust impl, a
 * Java service, a Ruby class, C and C++ files. Which names resolve (plain, qualified, and the
 * spellings each language has), and the verdicts after each symbol is edited, moved within its
 * file or to another one, renamed and removed: one repository, one commit, one check.
 */
import { describe, expect, it } from 'vitest';
import {
  extractSymbols,
  findSymbol,
  languageOf,
  normalizeSymbolName,
  preferredSymbols,
} from '../src/anchors/symbols.js';
import { parseAnchorSpecs } from '../src/anchors/types.js';
import { errorOf, makeRepo } from './helpers.js';

/** One language: its files before, after one commit that edits, moves, renames and removes symbols, and the anchors. */
interface Case {
  lang: string;
  before: Record<string, string>;
  after: Record<string, string>;
  /** --symbol spec, the lines it anchors, the verdict after the commit. */
  anchors: Array<[spec: string, lines: [number, number], verdict: string]>;
}

// ---- JavaScript: Express (lib/response.js, lib/view.js, lib/application.js)

const jsStatus = `res.status = function status(code) {
  this.statusCode = code;
  return this;
};
`;
const jsSend = `res.send = function send(body) {
  var chunk = body;
  this.end(chunk);
  return this;
};
`;
const jsJson = `res.json = function json(obj) {
  var body = JSON.stringify(obj);
  return this.send(body);
};
`;
const jsType = `res.contentType =
res.type = function contentType(type) {
  return this.set('Content-Type', type);
};
`;
const jsRedirect = `res.redirect = function redirect(url) {
  var address = url;
  this.location(address);
  this.end();
};
`;
const jsRender = `res.render = function render(view, options) {
  this.req.app.render(view, options);
};
`;
const jsHead = `'use strict';

var http = require('node:http');
var res = Object.create(http.ServerResponse.prototype);
module.exports = res;

`;
const viewLookup = `View.prototype.lookup = function lookup(name) {
  return path.resolve(this.root, name);
};
`;
const viewRender = `View.prototype.render = function render(options, callback) {
  this.engine(this.path, options, callback);
};
`;
const viewHead = `function View(name, options) {
  this.name = name;
  this.root = options.root;
}

`;
const appJs = `var app = exports = module.exports = {};

app.listen = function listen() {
  var server = http.createServer(this);
  return server.listen.apply(server, arguments);
};

app.render = function render(name, options, callback) {
  callback(null, name);
};

exports.compile = (str) => str.trim();
`;

const JS: Case = {
  lang: 'javascript',
  before: {
    'lib/response.js': [jsHead, jsStatus, jsSend, jsJson, jsType, jsRedirect, jsRender].join('\n'),
    'lib/view.js': [viewHead, viewLookup, viewRender, 'module.exports = View;\n'].join('\n'),
    'lib/application.js': appJs,
  },
  after: {
    'lib/response.js': [
      jsHead,
      jsStatus.replace('res.status = function status', 'res.code = function code'),
      jsJson.replace('JSON.stringify(obj)', 'JSON.stringify(obj, null, 2)'),
      jsType,
      jsRender,
      jsSend,
    ].join('\n'),
    'lib/redirect.js': `var res = require('./response');\n\n${jsRedirect}`,
    'lib/view.js': [viewHead, viewLookup, 'module.exports = View;\n'].join('\n'),
  },
  anchors: [
    ['lib/response.js#json', [19, 22], 'changed'],
    ['lib/response.js#res.send', [13, 17], 'moved'],
    ['lib/response.js#res.redirect', [29, 33], 'moved'],
    ['lib/response.js#res.status', [8, 11], 'symbol_renamed'],
    ['lib/view.js#View.render', [11, 13], 'symbol_removed'],
    ['lib/view.js#View.prototype.lookup', [7, 9], 'fresh'],
    ['lib/response.js#res.type', [24, 27], 'moved'],
    ['lib/application.js#app.listen', [3, 6], 'fresh'],
  ],
};

// ---- TypeScript: a router module

const tsOptions = `export const DEFAULT_OPTIONS = { strict: false, caseSensitive: false };
`;
const tsCompile = `export const compilePath = (path: string): RegExp => {
  return new RegExp('^' + path + '$');
};
`;
const tsMatch = `export function matchRoute(routes: Route[], url: string): Route | undefined {
  return routes.find((r) => compilePath(r.path).test(url));
}
`;
const tsAdd = `  add(path: string, handler: Handler): this {
    this.routes.push({ path, handler });
    return this;
  }
`;
const tsHandle = `  handle = async (req: Request): Promise<Response> => {
    const route = matchRoute(this.routes, req.url);
    return route ? route.handler(req) : new Response(null, { status: 404 });
  };
`;
const tsHead = `export interface Route {
  path: string;
  handler: Handler;
}
export type Handler = (req: Request) => Promise<Response>;
`;
const tsClass = (members: string[]) =>
  `export class Router {\n  private routes: Route[] = [];\n\n${members.join('\n')}}\n`;

const TS: Case = {
  lang: 'typescript',
  before: {
    'src/router.ts': [tsHead, tsOptions, tsCompile, tsMatch, tsClass([tsAdd, tsHandle])].join('\n'),
  },
  after: {
    'src/router.ts': [
      tsHead,
      tsOptions.replace('strict: false', 'strict: true'),
      tsClass([tsAdd.replace('add(', 'register(')]),
      tsCompile,
    ].join('\n'),
    'src/match.ts': `import { compilePath, type Route } from './router';\n\n${tsMatch}`,
  },
  anchors: [
    ['src/router.ts#DEFAULT_OPTIONS', [7, 7], 'changed'],
    ['src/router.ts#compilePath', [9, 11], 'moved'],
    ['src/router.ts#matchRoute', [13, 15], 'moved'],
    ['src/router.ts#Router.add', [20, 23], 'symbol_renamed'],
    ['src/router.ts#Router.handle', [25, 28], 'symbol_removed'],
    ['src/router.ts#Handler', [5, 5], 'fresh'],
  ],
};

// ---- Python: Flask

const pyDebug = `def get_debug_flag() -> bool:
    val = os.environ.get("FLASK_DEBUG")
    return bool(val and val.lower() not in {"0", "false", "no"})
`;
const pyUrlFor = `def url_for(endpoint: str, **values) -> str:
    return current_app.url_for(endpoint, **values)
`;
const pyRedirect = `def redirect(location: str, code: int = 302):
    if current_app:
        return current_app.redirect(location, code=code)
    return _wz_redirect(location, code=code)
`;
const pyRoute = `    @setupmethod
    def route(self, rule: str, **options):
        def decorator(f):
            self.add_url_rule(rule, None, f, **options)
            return f

        return decorator
`;
const pyDispatch = `    def dispatch_request(self):
        req = request
        return self.view_functions[req.url_rule.endpoint](**req.view_args)
`;
const pyHead = `import os

from .globals import current_app, request

`;
const pyClass = (methods: string[]) =>
  `class Flask(App):\n    def __init__(self, import_name: str):\n        super().__init__(import_name)\n\n${methods.join('\n')}`;

const PY: Case = {
  lang: 'python',
  before: {
    'src/flask/app.py': [pyHead, pyDebug, pyUrlFor, pyRedirect, pyClass([pyRoute, pyDispatch])].join('\n\n'),
  },
  after: {
    'src/flask/app.py': [
      pyHead,
      pyUrlFor.replace('def url_for', 'def build_url'),
      pyClass([pyRoute.replace('@setupmethod', '@setupmethod(strict=True)')]),
      pyDebug,
    ].join('\n\n'),
    'src/flask/redirects.py': `from .globals import current_app\n\n\n${pyRedirect}`,
  },
  anchors: [
    ['src/flask/app.py#Flask.route', [26, 32], 'changed'],
    ['src/flask/app.py#get_debug_flag', [7, 9], 'moved'],
    ['src/flask/app.py#redirect', [16, 19], 'moved'],
    ['src/flask/app.py#url_for', [12, 13], 'symbol_renamed'],
    ['src/flask/app.py#dispatch_request', [34, 36], 'symbol_removed'],
  ],
};

// ---- Go: a package with methods on a pointer receiver

const goNew = `func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}
`;
const goListen = `func (srv *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		return err
	}
	return srv.Serve(ln)
}
`;
const goServe = `func (srv *Server) Serve(l net.Listener) error {
	defer l.Close()
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go srv.handle(c)
	}
}
`;
const goShutting = `func (srv *Server) shuttingDown() bool {
	return srv.inShutdown
}
`;
const goString = `func (s Server) String() string {
	return "httpx.Server(" + s.Addr + ")"
}
`;
const goHead = `package httpx

import (
	"net"
	"time"
)

type Server struct {
	Addr        string
	ReadTimeout time.Duration
	inShutdown  bool
}
`;

const GO: Case = {
  lang: 'go',
  before: { 'httpx/server.go': [goHead, goNew, goListen, goServe, goShutting, goString].join('\n') },
  after: {
    'httpx/server.go': [
      goHead,
      goServe.replace('defer l.Close()', 'defer func() { _ = l.Close() }()'),
      goShutting.replace('shuttingDown', 'isShuttingDown'),
      goNew,
    ].join('\n'),
    'httpx/listen.go': `package httpx\n\nimport "net"\n\n${goListen}`,
  },
  anchors: [
    ['httpx/server.go#(*Server).Serve', [26, 35], 'changed'],
    ['httpx/server.go#NewServer', [14, 16], 'moved'],
    ['httpx/server.go#httpx.Server.ListenAndServe', [18, 24], 'moved'],
    ['httpx/server.go#shuttingDown', [37, 39], 'symbol_renamed'],
    ['httpx/server.go#Server.String', [41, 43], 'symbol_removed'],
    ['httpx/server.go#Server', [8, 12], 'fresh'],
  ],
};

// ---- Rust: a generic type, its impl block and a trait impl

const rsNew = `    pub fn new() -> Self {
        Stack { items: Vec::new() }
    }
`;
const rsPush = `    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }
`;
const rsPeek = `    pub fn peek(&self) -> Option<&T> {
        self.items.last()
    }
`;
const rsLen = `    pub fn len(&self) -> usize {
        self.items.len()
    }
`;
const rsDisplay = `impl<T: fmt::Debug> fmt::Display for Stack<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.items)
    }
}
`;
const rsHead = `use std::fmt;

pub struct Stack<T> {
    items: Vec<T>,
}
`;
const rsImpl = (fns: string[]) => `impl<T: Clone> Stack<T> {\n${fns.join('\n')}}\n`;

const RS: Case = {
  lang: 'rust',
  before: { 'src/stack.rs': [rsHead, rsImpl([rsNew, rsPush, rsPeek, rsLen]), rsDisplay].join('\n') },
  after: {
    'src/stack.rs': [
      rsHead,
      rsImpl([
        rsPush.replace('self.items.push(item);', 'self.items.insert(0, item);'),
        rsLen.replace('len(', 'size('),
        rsNew,
      ]),
    ].join('\n'),
    'src/peek.rs': `use crate::stack::Stack;\n\n${rsImpl([rsPeek])}`,
  },
  anchors: [
    ['src/stack.rs#Stack::push', [12, 14], 'changed'],
    ['src/stack.rs#Stack::new', [8, 10], 'moved'],
    ['src/stack.rs#peek', [16, 18], 'moved'],
    ['src/stack.rs#Stack.len', [20, 22], 'symbol_renamed'],
    ['src/stack.rs#fmt', [26, 28], 'symbol_removed'],
    ['src/stack.rs#Stack', [3, 5], 'fresh'],
  ],
};

// ---- Java: a service class and a package-private exception beside it

const javaFind = `  public User find(long id) {
    User u = users.get(id);
    if (u == null) {
      throw new UserNotFoundException(id);
    }
    return u;
  }
`;
const javaSave = `  public void save(User user) {
    users.put(user.getId(), user);
  }
`;
const javaToString = `  @Override
  public String toString() {
    return "UserService(" + users.size() + ")";
  }
`;
const javaCount = `  public int count() {
    return users.size();
  }
`;
const javaException = `class UserNotFoundException extends RuntimeException {
  UserNotFoundException(long id) {
    super("no user " + id);
  }
}
`;
const javaHead = `package com.example.web;

import java.util.HashMap;
import java.util.Map;
`;
const javaClass = (members: string[]) =>
  `@Service\npublic class UserService {\n  private final Map<Long, User> users = new HashMap<>();\n\n  public UserService() {\n  }\n\n${members.join('\n')}}\n`;
const javaDir = 'src/main/java/com/example/web';

const JAVA: Case = {
  lang: 'java',
  before: {
    [`${javaDir}/UserService.java`]: [
      javaHead,
      javaClass([javaFind, javaSave, javaToString, javaCount]),
      javaException,
    ].join('\n'),
  },
  after: {
    [`${javaDir}/UserService.java`]: [
      javaHead,
      javaClass([
        javaFind.replace('users.get(id)', 'users.getOrDefault(id, null)'),
        javaCount.replace('count(', 'size('),
        javaSave,
      ]),
    ].join('\n'),
    [`${javaDir}/UserNotFoundException.java`]: `package com.example.web;\n\n${javaException}`,
  },
  anchors: [
    [`${javaDir}/UserService.java#com.example.web.UserService.find`, [13, 19], 'changed'],
    [`${javaDir}/UserService.java#save`, [21, 23], 'moved'],
    [`${javaDir}/UserService.java#UserNotFoundException`, [35, 39], 'moved'],
    [`${javaDir}/UserService.java#UserService.count`, [30, 32], 'symbol_renamed'],
    [`${javaDir}/UserService.java#toString`, [25, 28], 'symbol_removed'],
    [`${javaDir}/UserService.java#UserService`, [6, 33], 'changed'],
  ],
};

// ---- Ruby: Rack's request, a class in a module, `def self.x`, reopened in another file

const rbFilter = `    def self.ip_filter(ip)
      ip.start_with?("10.")
    end
`;
const rbGet = `    def get?
      request_method == "GET"
    end
`;
const rbParams = `    def params
      @params ||= parse_query(query_string)
    end
`;
const rbPath = `    def path_info
      @env["PATH_INFO"].to_s
    end
`;
const rbHost = `    def host
      @env["HTTP_HOST"]
    end
`;
const rbClass = (defs: string[]) =>
  `module Rack\n  class Request\n    attr_reader :env\n\n${defs.join('\n')}  end\nend\n`;

const RB: Case = {
  lang: 'ruby',
  before: { 'lib/rack/request.rb': rbClass([rbFilter, rbGet, rbParams, rbPath, rbHost]) },
  after: {
    'lib/rack/request.rb': rbClass([
      rbGet.replace('get?', 'get_request?'),
      rbParams.replace('query_string', 'query_string.to_s'),
      rbFilter,
    ]),
    'lib/rack/request/path.rb': rbClass([rbPath]),
  },
  anchors: [
    ['lib/rack/request.rb#Rack::Request#params', [13, 15], 'changed'],
    ['lib/rack/request.rb#Request.ip_filter', [5, 7], 'moved'],
    ['lib/rack/request.rb#path_info', [17, 19], 'moved'],
    ['lib/rack/request.rb#get?', [9, 11], 'symbol_renamed'],
    ['lib/rack/request.rb#host', [21, 23], 'symbol_removed'],
  ],
};

// ---- C: a buffer module

const cMacro = `#define BUF_MIN(a, b) ((a) < (b) ? (a) : (b))
`;
const cStruct = `struct buffer {
  char *data;
  size_t len;
  size_t cap;
};
`;
const cGrow = `static int buf_grow(struct buffer *b, size_t need) {
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  b->data = realloc(b->data, cap);
  b->cap = cap;
  return b->data != NULL;
}
`;
const cNew = `struct buffer *buf_new(void) {
  return calloc(1, sizeof(struct buffer));
}
`;
const cAppend = `int buf_append(struct buffer *b, const char *s, size_t n) {
  if (!buf_grow(b, b->len + n)) return -1;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  return 0;
}
`;
const cFree = `void buf_free(struct buffer *b) {
  free(b->data);
  free(b);
}
`;
const cHead = `#include <stdlib.h>
#include <string.h>
`;

const C: Case = {
  lang: 'c',
  before: { 'src/buffer.c': [cHead, cMacro, cStruct, cGrow, cNew, cAppend, cFree].join('\n') },
  after: {
    'src/buffer.c': [
      cHead,
      cStruct,
      cGrow.replace('buf_grow', 'buf_reserve'),
      cAppend.replace('buf_grow(', 'buf_reserve('),
      cNew,
    ].join('\n'),
    'src/buffer_free.c': `#include <stdlib.h>\n\n${cFree}`,
  },
  anchors: [
    ['src/buffer.c#buf_append', [24, 29], 'changed'],
    ['src/buffer.c#buf_new', [20, 22], 'moved'],
    ['src/buffer.c#buf_free', [31, 34], 'moved'],
    ['src/buffer.c#buf_grow', [12, 18], 'symbol_renamed'],
    ['src/buffer.c#BUF_MIN', [4, 4], 'symbol_removed'],
    ['src/buffer.c#buffer', [6, 10], 'moved'],
  ],
};

// ---- C++: a class in a header, methods defined out of line in a namespace, a template

const cppStart = `void Server::start() {
  running_ = true;
  loop();
}
`;
const cppStop = `void Server::stop() {
  running_ = false;
}
`;
const cppPort = `int Server::port() const {
  return port_;
}
`;
const cppAcquire = `template <typename T>
T *Pool<T>::acquire() {
  return items_.empty() ? nullptr : items_.back();
}
`;
const cppNs = (defs: string[]) =>
  `#include "server.h"\n\nnamespace net {\n\nServer::Server(int port) : port_(port) {}\n\n${defs.join('\n')}\n}  // namespace net\n`;
const cppHeader = (running: boolean) => `#pragma once

namespace net {

class Server {
 public:
  explicit Server(int port);
  void start();
  void stop();
  int port() const;
${running ? '  bool running() const { return running_; }\n' : ''}
 private:
  void loop();
  int port_;
  bool running_ = false;
};

}  // namespace net
`;

const CPP: Case = {
  lang: 'cpp',
  before: {
    'src/server.cpp': cppNs([cppStart, cppStop, cppPort, cppAcquire]),
    'src/server.h': cppHeader(true),
  },
  after: {
    'src/server.cpp': cppNs([
      cppStart.replace('loop();', 'loop(port_);'),
      cppPort.replace('port()', 'listen_port()'),
      cppStop,
    ]),
    'src/pool.cpp': `#include "pool.h"\n\nnamespace net {\n\n${cppAcquire}\n}  // namespace net\n`,
    'src/server.h': cppHeader(false),
  },
  anchors: [
    ['src/server.cpp#Server::start', [7, 10], 'changed'],
    ['src/server.cpp#net::Server::stop', [12, 14], 'moved'],
    ['src/server.cpp#Pool<T>::acquire', [20, 23], 'moved'],
    ['src/server.cpp#port', [16, 18], 'symbol_renamed'],
    ['src/server.h#Server.running', [11, 11], 'symbol_removed'],
    // no path: searched in every tracked file
    ['net::Server', [5, 17], 'changed'],
  ],
};

const CASES = [JS, TS, PY, GO, RS, JAVA, RB, C, CPP];

describe('symbols by language (syntax trees)', () => {
  it('finds the shapes of each language with their qualified names', async () => {
    const names = async (path: string, src: string) =>
      (await extractSymbols(languageOf(path)!, src)).map((d) => `${d.kind} ${d.qualified}`);
    expect(await names('lib/response.js', JS.before['lib/response.js'])).toEqual([
      'method res.status',
      'method res.send',
      'method res.json',
      'method res.contentType',
      'method res.type',
      'method res.redirect',
      'method res.render',
    ]);
    expect(await names('lib/view.js', JS.before['lib/view.js'])).toEqual([
      'function View',
      'method View.lookup',
      'method View.render',
    ]);
    expect(await names('lib/application.js', appJs)).toEqual([
      'method app.listen',
      'method app.render',
      'function compile',
    ]);
    expect(await names('src/router.ts', TS.before['src/router.ts'])).toEqual([
      'interface Route',
      'type Handler',
      'constant DEFAULT_OPTIONS',
      'function compilePath',
      'function matchRoute',
      'class Router',
      'method Router.add',
      'method Router.handle',
    ]);
    expect(
      await names(
        'src/App.tsx',
        'export const Button = ({ label }: Props) => <button>{label}</button>;\nconst store = { get() { return 1; } };\nexport default function App() {\n  return <Button label="x" />;\n}\n',
      ),
    ).toEqual(['function Button', 'method store.get', 'function App']);
    expect(await names('src/flask/app.py', PY.before['src/flask/app.py'])).toEqual([
      'function get_debug_flag',
      'function url_for',
      'function redirect',
      'class Flask',
      'method Flask.__init__',
      'method Flask.route',
      'function Flask.route.decorator',
      'method Flask.dispatch_request',
    ]);
    expect(await names('httpx/server.go', GO.before['httpx/server.go'])).toEqual([
      'type Server',
      'function NewServer',
      'method Server.ListenAndServe',
      'method Server.Serve',
      'method Server.shuttingDown',
      'method Server.String',
    ]);
    expect(await names('src/stack.rs', RS.before['src/stack.rs'])).toEqual([
      'struct Stack',
      'impl Stack',
      'method Stack.new',
      'method Stack.push',
      'method Stack.peek',
      'method Stack.len',
      'impl Stack',
      'method Stack.fmt',
    ]);
    expect(await names('UserService.java', JAVA.before[`${javaDir}/UserService.java`])).toEqual([
      'class UserService',
      'constructor UserService.UserService',
      'method UserService.find',
      'method UserService.save',
      'method UserService.toString',
      'method UserService.count',
      'class UserNotFoundException',
      'constructor UserNotFoundException.UserNotFoundException',
    ]);
    expect(
      await names(
        'lib/rack/request.rb',
        `${RB.before['lib/rack/request.rb']}class Rack::Utils\n  class << self\n    def escape(s) = s\n  end\nend\n`,
      ),
    ).toEqual([
      'module Rack',
      'class Rack.Request',
      'method Rack.Request.ip_filter',
      'method Rack.Request.get?',
      'method Rack.Request.params',
      'method Rack.Request.path_info',
      'method Rack.Request.host',
      'class Rack.Utils',
      'method Rack.Utils.escape',
    ]);
    expect(
      await names('src/buffer.c', `${C.before['src/buffer.c']}typedef struct { int x, y; } point_t;\n`),
    ).toEqual([
      'macro BUF_MIN',
      'struct buffer',
      'function buf_grow',
      'function buf_new',
      'function buf_append',
      'function buf_free',
      'type point_t',
    ]);
    expect(await names('src/server.cpp', CPP.before['src/server.cpp'])).toEqual([
      'namespace net',
      'method net.Server.Server',
      'method net.Server.start',
      'method net.Server.stop',
      'method net.Server.port',
      'method net.Pool.acquire',
    ]);
    expect(await names('src/server.h', CPP.before['src/server.h'])).toEqual([
      'namespace net',
      'class net.Server',
      'method net.Server.running',
    ]);
  });

  it('resolves qualified names in the spellings each language has, and plain names when unique', async () => {
    const at = async (path: string, src: string, name: string) =>
      findSymbol(await extractSymbols(languageOf(path)!, src), name).map((d) => d.qualified);
    const view = JS.before['lib/view.js'];
    expect(await at('v.js', view, 'View.prototype.lookup')).toEqual(['View.lookup']);
    expect(await at('v.js', view, 'View.lookup')).toEqual(['View.lookup']);
    expect(await at('v.js', view, 'lookup')).toEqual(['View.lookup']);
    expect(await at('r.js', JS.before['lib/response.js'], 'redirect')).toEqual(['res.redirect']);
    expect(await at('r.js', JS.before['lib/response.js'], 'type')).toEqual(['res.type']);
    const go = GO.before['httpx/server.go'];
    for (const n of [
      '(*Server).Serve',
      'Server.Serve',
      'httpx.Server.Serve',
      'httpx.(*Server).Serve',
      'Serve',
    ])
      expect(await at('s.go', go, n), n).toEqual(['Server.Serve']);
    expect(await at('s.go', go, 'other.Server.Serve')).toEqual([]);
    const java = JAVA.before[`${javaDir}/UserService.java`];
    for (const n of ['com.example.web.UserService.find', 'web.UserService.find', 'UserService.find', 'find'])
      expect(await at('U.java', java, n), n).toEqual(['UserService.find']);
    for (const n of ['Stack::push', 'Stack::<T>::push', 'Stack.push', 'push'])
      expect(await at('s.rs', RS.before['src/stack.rs'], n), n).toEqual(['Stack.push']);
    for (const n of ['Rack::Request#params', 'Request#params', 'Rack::Request.params', 'params'])
      expect(await at('r.rb', RB.before['lib/rack/request.rb'], n), n).toEqual(['Rack.Request.params']);
    for (const n of ['net::Server::stop', 'Server::stop', 'stop'])
      expect(await at('s.cpp', CPP.before['src/server.cpp'], n), n).toEqual(['net.Server.stop']);
    expect(normalizeSymbolName('Pool<T>::acquire')).toBe('Pool.acquire');
    expect(normalizeSymbolName('operator<')).toBe('operator<');
    // the class over its constructor, the type over its impl blocks; real ties stay ambiguous
    const pick = async (path: string, src: string, name: string) =>
      preferredSymbols(
        findSymbol(await extractSymbols(languageOf(path)!, src), name).map((def) => ({ def })),
      ).map((h) => `${h.def.kind} ${h.def.qualified}`);
    expect(await pick('U.java', java, 'UserService')).toEqual(['class UserService']);
    expect(await pick('s.rs', RS.before['src/stack.rs'], 'Stack')).toEqual(['struct Stack']);
    expect(await pick('x.js', jsRender + viewRender, 'render')).toEqual([
      'method res.render',
      'method View.render',
    ]);
  });

  it('reads PATH#NAME with a name that holds a # of its own (Ruby)', () => {
    expect(
      parseAnchorSpecs(
        [],
        [
          'lib/rack/request.rb#Rack::Request#params',
          'Rack::Request#params',
          'src/m.ts#beta',
          'dir/a#b.py#f',
          'beta',
        ],
      ),
    ).toEqual([
      { path: 'lib/rack/request.rb', symbol: 'Rack::Request#params' },
      { path: '', symbol: 'Rack::Request#params' },
      { path: 'src/m.ts', symbol: 'beta' },
      { path: 'dir/a#b.py', symbol: 'f' },
      { path: '', symbol: 'beta' },
    ]);
  });

  it('keeps the body hash across a rename of either name of `res.x = function x`, and not across an edit', async () => {
    const src = JS.before['lib/response.js'];
    const hash = async (s: string, q: string) =>
      (await extractSymbols('javascript', s)).find((d) => d.qualified === q)?.bodyHash;
    const h = await hash(src, 'res.redirect');
    expect(
      await hash(src.replace('res.redirect = function redirect', 'res.goTo = function goTo'), 'res.goTo'),
    ).toBe(h);
    expect(await hash(src.replace('res.redirect =', 'res.goTo ='), 'res.goTo')).toBe(h);
    expect(
      await hash(src.replace('var address = url;', 'var address = url || "/";'), 'res.redirect'),
    ).not.toBe(h);
  });

  it('anchors each language by plain and qualified name, and judges edits, moves, renames and removals', async () => {
    const r = makeRepo();
    for (const c of CASES) for (const [p, text] of Object.entries(c.before)) r.write(p, text);
    r.commitAll('init');
    await r.memJson(['init']);
    // one memory holds every anchor: one add, one check
    const all = CASES.flatMap((c) =>
      c.anchors.map(([spec, lines, verdict]) => ({ lang: c.lang, spec, lines, verdict })),
    );
    const args = ['add', '--title', 'symbols', '--content', 'x'];
    for (const a of all) args.push('--symbol', a.spec);
    const { id } = await r.memJson(args);
    const shown = (await r.memJson(['show', id])).anchors;
    expect(shown.map((a: { lines: number[]; sym: { lang: string } }) => [a.lines, a.sym.lang])).toEqual(
      all.map((a) => [a.lines, a.lang]),
    );
    // unique across the repository: the class in the header, not its constructor in the .cpp
    expect(shown[all.length - 1]).toMatchObject({ path: 'src/server.h', sym: { qualified: 'net.Server' } });
    // a plain name defined in several files is refused with one line naming the candidates
    const amb = await r.mem(['add', '--title', 'render', '--content', 'x', '--symbol', 'render', '--json']);
    expect(amb.code).toBe(2);
    expect(amb.stderr.trim().split('\n')).toHaveLength(1);
    expect(errorOf(amb).code).toBe('E_ANCHOR');
    // the candidates, each as PATH#NAME to pass instead (no data field holds them)
    expect(String(errorOf(amb).message).match(/[\w./-]+#[\w.]+/g)).toEqual([
      'lib/application.js#app.render',
      'lib/response.js#res.render',
      'lib/view.js#View.render',
    ]);

    for (const c of CASES) for (const [p, text] of Object.entries(c.after)) r.write(p, text);
    r.commitAll('edit, move, rename and remove symbols');
    const rep = await r.memJson(['check', '--verbose']);
    const verdicts = new Map<number, { status: string; to: unknown }>(
      rep.results.map((x: { anchor: number; status: string; to: unknown }) => [x.anchor, x]),
    );
    expect(all.map((a, i) => `${a.lang} ${a.spec} ${verdicts.get(i)?.status}`)).toEqual(
      all.map((a) => `${a.lang} ${a.spec} ${a.verdict}`),
    );
    const to = (spec: string) => verdicts.get(all.findIndex((a) => a.spec === spec))?.to;
    expect(to('lib/response.js#res.status')).toMatchObject({ path: 'lib/response.js', symbol: 'res.code' });
    expect(to('httpx/server.go#shuttingDown')).toMatchObject({ symbol: 'Server.isShuttingDown' });
    expect(to('src/server.cpp#port')).toMatchObject({ symbol: 'net.Server.listen_port' });
    expect(to('lib/rack/request.rb#get?')).toMatchObject({ symbol: 'Rack.Request.get_request?' });
    expect(to('lib/response.js#res.redirect')).toEqual({ path: 'lib/redirect.js', lines: [3, 7] });
    expect(to('src/stack.rs#peek')).toEqual({ path: 'src/peek.rs', lines: [4, 6] });
    expect(to('src/server.cpp#Pool<T>::acquire')).toEqual({ path: 'src/pool.cpp', lines: [5, 8] });
    expect(to('lib/rack/request.rb#path_info')).toEqual({ path: 'lib/rack/request/path.rb', lines: [5, 7] });
  });
});
