/**
 * The fuzzer's inputs (e2e/fuzz.test.ts): a fixed, deterministic list of malformed requests, each
 * made for any route from its method and path alone, so that a route added tomorrow is fuzzed
 * without an edit here. What the list holds is what an outside review sent the site (issue 19):
 * wrong content types, bodies past every limit, 10,000-deep JSON, prototype keys, NUL bytes and
 * invalid UTF-8 in paths, query strings, form fields and JSON, bad and oversized cookies and
 * tokens, odd path parameters, duplicated parameters, and arrays or objects where text belongs;
 * and, from issue 30, redirect targets outside ASCII.
 *
 * No input holds the words the leak check looks for (a stack frame, "node_modules", "stack"), so
 * a page that echoes its input is never taken for one that leaks.
 */

/** A route as Fastify registered it: `/accounts/saml/:organization/acs/`, `/spa/*`. */
export interface FuzzRoute {
  method: string;
  url: string;
}

/** What a case adds to a request; the caller adds the host, the identity and the CSRF pair. */
export interface FuzzRequest {
  /** The path and query, percent-encoded as a client would put them on the request line. */
  url: string;
  headers?: Record<string, string>;
  /** Cookies that replace the identity's (a bad session cookie means no good one beside it). */
  cookies?: string;
  payload?: string | Buffer;
}

/** One malformed request for a route (its method and path, parameters filled in), or undefined when it does not apply. */
export type FuzzVariant = (route: FuzzRoute, path: string) => FuzzRequest | undefined;

export interface FuzzCase {
  name: string;
  /**
   * Whether the input gets past parsing to the handlers, where who is signed in and which database
   * answers matter. Inputs refused while the request is read (a body over a limit, an unknown
   * content type, JSON that does not parse) and those that replace the identity's cookie answer
   * alike for every identity and database, so they are sent once: anonymously, on SQLite.
   */
  reachesHandlers: boolean;
  variants: readonly FuzzVariant[];
  /**
   * How many of the variants each route gets (all when absent). The routes take them in turn,
   * the n-th route starting where the one before stopped, so that every variant reaches many
   * routes of every door while the walk stays under a minute; the choice depends only on the
   * route's place in the table, so a run repeats exactly.
   */
  perRoute?: number;
}

/** The requests a case makes for the route at `index` in the route table. */
export function requestsOf(fuzzCase: FuzzCase, route: FuzzRoute, path: string, index: number): FuzzRequest[] {
  const { variants } = fuzzCase;
  const count = Math.min(fuzzCase.perRoute ?? variants.length, variants.length);
  const chosen = Array.from({ length: count }, (_, offset) => variants[(index * count + offset) % variants.length]!);
  return chosen.map((variant) => variant(route, path)).filter((request) => request !== undefined);
}

/** Field names of every door (the pages' form fields of docs/accounts.md, the headless API's JSON, the admin's), sent together. */
const FIELDS = [
  'login', 'password', 'email', 'username', 'password1', 'password2', 'oldpassword', 'remember', 'code', 'key',
  'token', 'name', 'next', 'process', 'provider', 'callback_url', 'state', 'id', 'session_ids', 'credential',
  'action', 'action_add', 'action_remove', 'action_primary', 'q', 'o', 'is_staff', 'is_superuser', 'client_id', 'settings',
] as const;

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const takesBody = (route: FuzzRoute): boolean => UNSAFE_METHODS.has(route.method);

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

function formText(pairs: [string, string][]): string {
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** Each field twice (Fastify makes it an array), with raw percent-encoded values: NUL, invalid UTF-8, a stray %, SQL. */
const BAD_FORM = formText(
  FIELDS.flatMap((name): [string, string][] => [
    [name, '%00'],
    [name, '%FF%FE%C0%AF%ED%A0%80'],
    [`${name}[]`, "%27%20OR%20%271%27%3D%271%27%20--"],
    [name, '%'],
  ]),
);
const PROTOTYPE_FORM = formText([
  ['__proto__', '1'], ['__proto__[is_staff]', 'true'], ['constructor', '1'], ['constructor[prototype][is_staff]', 'true'],
  ['hasOwnProperty', '1'], ['toString', '1'], ['valueOf', '1'], ...FIELDS.map((name): [string, string] => [name, 'x']),
]);
const PLAUSIBLE_FORM = formText([
  ['login', 'nobody'], ['password', 'wrong%20password%201'], ['email', 'nobody%40example.com'], ['username', 'nobody'],
  ['password1', 'a%20new%20passphrase%201'], ['password2', 'another%20passphrase%202'], ['oldpassword', 'wrong'],
  ['code', '000000'], ['key', 'abc'], ['name', '%3Cscript%3Ealert(1)%3C%2Fscript%3E'], ['next', '%2F%2Fevil.example'],
  ['action_add', ''], ['remember', 'on'], ['state', 'x'], ['process', 'login'],
]);
/** Under the pages' 64 KB form limit: a 50 KB password reaches the flows, which must refuse it before hashing. */
const LONG_FORM = formText([['password', 'p'.repeat(50_000)], ['login', 'l'.repeat(2000)], ['email', `${'e'.repeat(3000)}%40example.com`], ['code', '9'.repeat(2000)]]);
const OVER_LIMIT_FORM = formText([['password', 'p'.repeat(200_000)]]);

const WRONG_TYPES_JSON = JSON.stringify(
  Object.fromEntries(FIELDS.map((name, index) => [name, [['x'], { $ne: '' }, null, 1e308, true, [], {}, -1][index % 8]])),
);
const PLAUSIBLE_JSON = JSON.stringify({
  login: 'nobody', password: 'wrong password 1', email: 'nobody@example.com', username: "nobody' OR '1'='1' --", code: '000000',
  key: 'abc', provider: 'dummy', process: 'login', callback_url: '//evil.example', token: { id_token: 'x', client_id: 'y' },
  session_ids: [1, 2, -1, 1e20], credential: { id: 'x', response: {} }, name: '<script>alert(1)</script>', is_staff: true,
});
const PROTOTYPE_JSON = '{"__proto__":{"is_staff":true},"constructor":{"prototype":{"is_staff":true}},"email":"a@example.com"}';
/** NUL in every field, and UTF-16 halves without their other half (JSON.stringify writes them as \ud800 escapes). */
const NUL_JSON = JSON.stringify({ ...Object.fromEntries(FIELDS.map((name) => [name, 'a\u0000b'])), login: '\ud800', password: 'a\udfffb\ud800' });
/** Bytes that are not UTF-8 at all, inside JSON strings. */
const INVALID_UTF8_JSON = Buffer.concat([Buffer.from('{"email":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('","password":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
const DEEP_JSON = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
const DEEP_ARRAY_JSON = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const DUPLICATE_KEYS_JSON = '{"email":"a@example.com","email":["b@example.com"],"password":"x","password":{"$gt":""}}';

/** "A few MB": past the app's 1 MB body limit. The same buffer for every request. */
const LARGE_BODY = Buffer.alloc(3 * 1024 * 1024, 'a');
/** Sent once per door (fuzz.test.ts), not per route. */
export const HUGE_BODY = Buffer.alloc(10 * 1024 * 1024, 'a');

/**
 * Values a path parameter should never be. The first ones go to every route with a parameter:
 * NUL (which PostgreSQL refuses to compare), a number past every integer type, traversal. The
 * rest (bytes that are not UTF-8, a negative id, too long, prototype names...) are shared out.
 */
const ODD_PARAMETERS = ['%00', '99999999999999999999999', '..'];
const MORE_ODD_PARAMETERS = [
  '%FF%FE', '-1', '%2e%2e%2f%2e%2e', '%C3%28', 'x'.repeat(1000), 'x'.repeat(290), '1e999', '0x1F', '1.5', '__proto__', 'constructor', '%20', '%F0%9F%94%91',
];

const query = (text: string): FuzzVariant => (_route, path) => ({ url: `${path}?${text}` });
const withHeaders = (headers: Record<string, string>): FuzzVariant => (_route, path) => ({ url: path, headers });
const withCookies = (cookies: string): FuzzVariant => (_route, path) => ({ url: path, cookies });
const body = (headers: Record<string, string>, payload: string | Buffer): FuzzVariant => (route, path) => (takesBody(route) ? { url: path, headers, payload } : undefined);
const form = (text: string): FuzzVariant => body(FORM, text);
const json = (text: string | Buffer): FuzzVariant => body(JSON_TYPE, text);

/**
 * Where-to-next values that once passed the same-site check and then broke the redirect (issue 30):
 * characters outside ASCII (encoded, raw, percent-encoded as Latin-1), control characters, and a
 * path that serialises to another host; in every field naming where the browser goes next. A route
 * that takes a body gets them in a form (raw characters as UTF-8), any other in its query.
 */
const REDIRECT_TARGETS = ['%2F%E3%80%82x', '%2Fx%3Fq%3D%E3%80%82', '/\u3002x', '/caf\u00e9', '%2Fcaf%E9', '%2F%0D%0ASet-Cookie%3A%20a%3Db', '%2F%09%2Fevil.example', '%2F.%2F%2Fevil.example%2F'];
function redirectTarget(value: string): FuzzVariant {
  const fields = (text: string) => formText(['next', 'callback_url', 'RelayState'].map((name): [string, string] => [name, text]));
  // On the request line a client percent-encodes what is not ASCII.
  const onRequestLine = value.replace(/[^\p{ASCII}]/gu, (character) => encodeURIComponent(character));
  return (route, path) => (takesBody(route) ? { url: path, headers: FORM, payload: fields(value) } : { url: `${path}?${fields(onRequestLine)}` });
}

const REDIRECT_TARGET_CASE: FuzzCase = {
  name: 'redirect targets outside ASCII',
  reachesHandlers: true,
  perRoute: 3,
  variants: REDIRECT_TARGETS.map(redirectTarget),
};

/** The query parameters the doors read, duplicated, as arrays and objects, and under prototype names. */
const QUERY_CASE: FuzzCase = {
  name: 'duplicated and array query parameters',
  reachesHandlers: true,
  variants: [
    query(`${formText(FIELDS.flatMap((name): [string, string][] => [[name, 'a'], [name, 'b'], [`${name}[]`, '1'], [`${name}[x]`, '2']]))}&page=-1&p=abc&all=&__proto__[is_staff]=1&constructor[prototype][x]=1&__proto__=1&hasOwnProperty=1`),
  ],
};

/** NUL and bytes that are not UTF-8 in every query parameter a door reads: what a database may choke on. */
const NUL_QUERY_CASE: FuzzCase = {
  name: 'NUL and invalid UTF-8 in the query',
  reachesHandlers: true,
  variants: [query(`${formText(FIELDS.map((name): [string, string] => [name, '%00%FF%C0%AF%ED%A0%80%']))}&%FF=%00&%=%`)],
};

/** The same in bodies, form and JSON. */
const NUL_BODY_CASE: FuzzCase = {
  name: 'NUL and invalid UTF-8 in the body',
  reachesHandlers: true,
  perRoute: 1,
  variants: [form(BAD_FORM), json(NUL_JSON), json(INVALID_UTF8_JSON)],
};

const LONG_QUERY_CASE: FuzzCase = {
  name: 'a long query',
  reachesHandlers: false,
  variants: [query(`q=${'q'.repeat(20_000)}&next=%2F${'n'.repeat(5000)}&key=${'k'.repeat(5000)}`)],
};

/** Every parameter of the route at once set to the value; a route without any gets it as a bad tail instead (once). */
function oddPath(value: string, tail: boolean): FuzzVariant {
  return (route, path) => (/[:*]/.test(route.url) ? { url: pathWith(route.url, () => value) } : tail ? { url: `${path}${value}/` } : undefined);
}

const PATH_CASE: FuzzCase = {
  name: 'odd path parameters',
  reachesHandlers: true,
  variants: ODD_PARAMETERS.map((value, index) => oddPath(value, index === 0)),
};

const MORE_PATH_CASE: FuzzCase = {
  name: 'more odd path parameters',
  reachesHandlers: true,
  perRoute: 2,
  variants: MORE_ODD_PARAMETERS.map((value) => oddPath(value, false)),
};

const TOKEN_CASE: FuzzCase = {
  name: 'bad token headers',
  reachesHandlers: true,
  perRoute: 1,
  variants: [
    withHeaders({ authorization: 'Token x', 'x-session-token': 'x' }),
    withHeaders({ authorization: 'Bearer abc.def.ghi', 'x-session-token': '../../etc', 'x-password-reset-key': '%00', 'x-email-verification-key': 'k'.repeat(1000) }),
    withHeaders({ authorization: `Token ${'t'.repeat(10_000)}`, 'x-session-token': 's'.repeat(10_000) }),
    withHeaders({ authorization: 'Token \u00e9\u00ff a b', 'x-session-token': '\u00e9\u00ff' }),
    withHeaders({ authorization: 'Basic Zm9vOmJhcg==' }),
  ],
};

const COOKIE_CASE: FuzzCase = {
  name: 'bad and oversized cookies',
  reachesHandlers: false,
  perRoute: 1,
  variants: [
    withCookies('sessionid=%FF%00; csrftoken=short; sessionid=dup; csrftoken=dup; mfa_trust=%00'),
    withCookies(`sessionid=${'s'.repeat(8000)}; csrftoken=${'c'.repeat(8000)}`),
    withCookies('sessionid; csrftoken==; =; ;;'),
  ],
};

const FORM_CASE: FuzzCase = {
  name: 'odd forms',
  reachesHandlers: true,
  perRoute: 1,
  variants: [form(PLAUSIBLE_FORM), form(PROTOTYPE_FORM), form(LONG_FORM)],
};

const JSON_CASE: FuzzCase = {
  name: 'odd JSON',
  reachesHandlers: true,
  perRoute: 1,
  variants: [json(WRONG_TYPES_JSON), json(PLAUSIBLE_JSON), json(DUPLICATE_KEYS_JSON), json('["a", 1]'), body({ ...JSON_TYPE, 'content-length': '0' }, '')],
};

/** Bodies that a handler reads, if at all, as something other than it expects: a string, or a form whose one key is JSON. */
const CONTENT_TYPE_CASE: FuzzCase = {
  name: 'unexpected content types',
  reachesHandlers: true,
  perRoute: 1,
  variants: [body({ 'content-type': 'text/plain' }, PLAUSIBLE_JSON), form(PLAUSIBLE_JSON), body({}, PLAUSIBLE_FORM)],
};

/**
 * Bodies refused while the request is read: too deep, too large, prototype keys. Each is cheap
 * to refuse, so every route that takes a body gets them all (the 10,000-deep JSON that once
 * answered "Maximum call stack size exceeded" included).
 */
const UNREADABLE_BODY_CASE: FuzzCase = {
  name: 'unreadable bodies',
  reachesHandlers: false,
  variants: [json(DEEP_JSON), json(LARGE_BODY), json(PROTOTYPE_JSON)],
};

/** More of them, shared out: unparseable, over the form limit, a type or charset no door reads. */
const MORE_UNREADABLE_BODY_CASE: FuzzCase = {
  name: 'more unreadable bodies',
  reachesHandlers: false,
  perRoute: 2,
  variants: [
    json(DEEP_ARRAY_JSON), json('{"email": "a@example.com", "password": '), form(OVER_LIMIT_FORM), json(PLAUSIBLE_FORM),
    body({ 'content-type': 'application/xml' }, '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'),
    body({ 'content-type': 'multipart/form-data; boundary=zzz' }, '--zzz\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--zzz--'),
    body({ 'content-type': 'application/json; charset=utf-16' }, PLAUSIBLE_JSON),
  ],
};

export const FUZZ_CASES: readonly FuzzCase[] = [
  { name: 'no input', reachesHandlers: true, variants: [(_route, path) => ({ url: path })] },
  QUERY_CASE,
  NUL_QUERY_CASE,
  NUL_BODY_CASE,
  LONG_QUERY_CASE,
  REDIRECT_TARGET_CASE,
  PATH_CASE,
  MORE_PATH_CASE,
  TOKEN_CASE,
  COOKIE_CASE,
  FORM_CASE,
  JSON_CASE,
  CONTENT_TYPE_CASE,
  UNREADABLE_BODY_CASE,
  MORE_UNREADABLE_BODY_CASE,
];

/**
 * The route's path with each parameter filled in: `valueOf(name)` for `:name` (a regular
 * expression after it included) and for the wildcard `*` (named '*').
 */
export function pathWith(url: string, valueOf: (name: string) => string): string {
  return url.replace(/:(\w+)(\([^)]*\))?|\*/g, (match, name: string | undefined) => valueOf(name ?? match));
}

/**
 * Ordinary values, for the cases that fuzz something else: the configured provider and SAML
 * organisation (so that their routes go past "unknown app"), an id nobody has, a word.
 */
export function ordinaryParameter(name: string, known: Record<string, string>): string {
  return known[name] ?? (/id$/i.test(name) ? '987654' : 'fuzz');
}
