import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { parse } from 'yaml';
import type { TestLatchkey } from './latchkey.js';

/**
 * Test support for the headless API: allauth's published contract (kept as test data in
 * test/reference/allauth-headless), a validator that checks a response body against the schema
 * of its operation and status, and a client that validates every response it receives.
 */
const SPEC_FILE = new URL('../../test/reference/allauth-headless/openapi.yaml', import.meta.url);

type Json = Record<string, unknown>;

/**
 * Responses the contract describes for every operation rather than per operation ("all
 * authentication related responses have status 401 or 410"; rate limits are 429), used when an
 * operation does not list the status itself.
 */
const GENERAL_RESPONSES: Record<number, string> = {
  410: '#/components/responses/SessionGone',
  429: '#/components/responses/TooManyRequests',
};

/**
 * Success responses the contract leaves out, validated against what the reference server sends:
 * a password change answers the session's authentication status, a regeneration of recovery codes
 * the new codes.
 */
const OMITTED_SUCCESS: Record<string, string> = {
  'POST /_allauth/{client}/v1/account/password/change 200': '#/components/responses/Authenticated',
  'POST /_allauth/{client}/v1/account/authenticators/recovery-codes 200': '#/components/responses/RecoveryCodes',
  // The contract lists only the redirect; a callback_url that cannot be returned to (and no
  // socialaccount_login_error route to go to instead) is refused in its error shape.
  'POST /_allauth/browser/v1/auth/provider/redirect 400': '#/components/responses/Error',
};

/**
 * Answers the contract describes wrongly, validated against what the reference server sends: the
 * passkey signup's GET hands out creation options (allauth's SignupWebAuthnView answers with its
 * AddWebAuthnResponse, and its own test reads `creation_options`), where the contract names
 * request options.
 */
const CORRECTED: Record<string, string> = {
  'GET /_allauth/{client}/v1/auth/webauthn/signup 200': '#/components/responses/WebAuthnCreationOptionsResponse',
};

/**
 * Refusals outside the contract, Latchkey's own, in the contract's error shape: a CSRF failure
 * (403), a body that is not JSON (415), an unknown route (404), a busy server or mail server (503).
 */
const LATCHKEY_ERROR = {
  type: 'object',
  required: ['status', 'errors'],
  properties: {
    status: { type: 'integer' },
    errors: { type: 'array', minItems: 1, items: { type: 'object', required: ['message', 'code'], properties: { message: { type: 'string' }, code: { type: 'string' }, param: { type: 'string' } } } },
  },
};
const LATCHKEY_STATUSES: Record<number, Json> = {
  403: LATCHKEY_ERROR,
  404: { type: 'object', required: ['status'], properties: { status: { enum: [404] } } },
  415: LATCHKEY_ERROR,
  503: LATCHKEY_ERROR,
};

/** OpenAPI 3.0's `nullable` next to a `$ref` is not JSON Schema: rewritten as "this or null". */
function toJsonSchema(node: unknown): Json {
  return rewriteNullable(node) as Json;
}

function rewriteNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteNullable);
  if (node === null || typeof node !== 'object') return node;
  const object: Json = Object.fromEntries(Object.entries(node).map(([key, value]): [string, unknown] => [key, rewriteNullable(value)]));
  if (object.nullable === true && typeof object.$ref === 'string') return { anyOf: [{ $ref: object.$ref }, { type: 'null' }] };
  return object;
}

function pointer(...segments: string[]): string {
  return segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

export class HeadlessSpec {
  private readonly document: Json;
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.document = toJsonSchema(parse(readFileSync(SPEC_FILE, 'utf8')));
    // The README's known differences: the reference server also emits the `mfa_trust`,
    // `mfa_login_webauthn` and `mfa_signup_webauthn` flows.
    const flow = (this.document as { components: { schemas: { Flow: { properties: { id: { enum: string[] } } } } } }).components.schemas.Flow;
    flow.properties.id.enum.push('mfa_trust', 'mfa_login_webauthn', 'mfa_signup_webauthn');
    this.ajv.addSchema(this.document, 'spec');
  }

  /** The spec's path template for a request path ('/_allauth/app/v1/auth/login' → '/_allauth/{client}/v1/auth/login'). */
  pathTemplate(method: string, path: string): string | undefined {
    const paths = this.document.paths as Json;
    const client = /^\/_allauth\/(browser|app)\//.exec(path)?.[1];
    if (client === undefined) return undefined;
    for (const template of [path.replace(`/_allauth/${client}/`, '/_allauth/{client}/'), path]) {
      const operation = (paths[template] as Json | undefined)?.[method.toLowerCase()];
      if (operation !== undefined) return template;
    }
    return undefined;
  }

  private responseRef(method: string, template: string, status: number): string | undefined {
    const corrected = CORRECTED[`${method} ${template} ${status}`];
    if (corrected !== undefined) return corrected;
    const operation = ((this.document.paths as Json)[template] as Json)[method.toLowerCase()] as { responses: Json };
    const listed = operation.responses[String(status)] as Json | undefined;
    if (listed !== undefined) {
      const ref = typeof listed.$ref === 'string' ? listed.$ref : `#/${pointer('paths', template, method.toLowerCase(), 'responses', String(status))}`;
      return ref;
    }
    return OMITTED_SUCCESS[`${method} ${template} ${status}`] ?? GENERAL_RESPONSES[status];
  }

  private validatorFor(method: string, template: string, status: number): ValidateFunction | undefined {
    const key = `${method} ${template} ${status}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const ref = this.responseRef(method, template, status);
    let validate: ValidateFunction | undefined;
    const listed = ref === undefined ? undefined : (this.at(ref) as Json | undefined);
    if (listed !== undefined && listed.content === undefined) {
      // A response without a body (the provider redirect's 302).
      validate = this.ajv.compile({ type: 'object', maxProperties: 0 });
    } else if (status === 401) {
      // Any request may find its session signed out or too old ("all authentication related
      // responses have status 401 or 410"), whichever 401 an operation lists. The contract's own
      // oneOf of the two cannot hold: a reauthentication body satisfies both schemas.
      validate = this.ajv.compile({ anyOf: ['AuthenticationResponse', 'ReauthenticationResponse'].map((name) => ({ $ref: `spec#/components/schemas/${name}` })) });
    } else if (ref !== undefined) {
      validate = this.ajv.compile({ $ref: `spec${ref}/${pointer('content', 'application/json', 'schema')}` });
    } else if (LATCHKEY_STATUSES[status]) {
      validate = this.ajv.compile(LATCHKEY_STATUSES[status]);
    }
    if (validate) this.compiled.set(key, validate);
    return validate;
  }

  private at(ref: string): unknown {
    let current: unknown = this.document;
    for (const segment of ref.replace(/^#\//, '').split('/')) current = (current as Json | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
    return current;
  }

  /** Why a response body does not satisfy the contract, or undefined when it does. */
  problems(method: string, path: string, status: number, body: unknown): string | undefined {
    const template = this.pathTemplate(method, path);
    if (template === undefined) {
      return status === 404 ? this.check(LATCHKEY_STATUSES[404]!, body) : `${method} ${path} is no operation of the contract`;
    }
    const validate = this.validatorFor(method, template, status);
    if (!validate) return `${method} ${template} has no response ${status} in the contract`;
    if (typeof body === 'object' && body !== null && Object.keys(body).length > 0 && (body as Json).status !== status) return `body status ${String((body as Json).status)} differs from HTTP ${status}`;
    if (validate(body)) return undefined;
    return this.ajv.errorsText(validate.errors, { separator: '; ' });
  }

  private check(schema: Json, body: unknown): string | undefined {
    const validate = this.ajv.compile(schema);
    return validate(body) ? undefined : this.ajv.errorsText(validate.errors);
  }
}

let sharedSpec: HeadlessSpec | undefined;
export function headlessSpec(): HeadlessSpec {
  sharedSpec ??= new HeadlessSpec();
  return sharedSpec;
}

export interface HeadlessResponse {
  status: number;
  /* eslint-disable @typescript-eslint/no-explicit-any -- tests read bodies freely; the contract check has vetted their shape */
  body: Json & { status?: number; data?: any; meta?: any; errors?: { message: string; code: string; param?: string }[] };
  /* eslint-enable @typescript-eslint/no-explicit-any */
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

export interface HeadlessRequestOptions {
  headers?: Record<string, string>;
  /** Browser client: send the CSRF token (default true). */
  csrf?: boolean;
  /** A raw body instead of JSON (tests of malformed input), with its content type. */
  payload?: string | Buffer;
  /**
   * A form post instead of JSON (the provider redirect): the fields, url-encoded; the browser
   * client's CSRF token goes in the csrfmiddlewaretoken field, as a real form carries it.
   */
  form?: Record<string, string>;
  /** Skip the contract check (for responses a test expects to be outside it). */
  validate?: boolean;
}

/**
 * One client of the headless API: a browser (cookie jar, CSRF token from the csrftoken cookie in
 * X-CSRFToken) or an app (the session token from `meta.session_token` in X-Session-Token, dropped
 * on 410, as allauth's documentation tells apps to do). Every response is checked against the
 * contract and the request fails the test when it does not satisfy it.
 */
export class HeadlessTestClient {
  readonly cookies = new Map<string, string>();
  sessionToken: string | undefined;

  constructor(
    readonly app: FastifyInstance,
    readonly kind: 'browser' | 'app',
    private readonly latchkey: TestLatchkey,
    /** The address this client connects from (inject's default, 127.0.0.1, when undefined). */
    private readonly remoteAddress?: string,
  ) {}

  /** A Fastify app with Latchkey and its headless API mounted, as a project with use_drf=y has. */
  static async createApp(latchkey: TestLatchkey): Promise<FastifyInstance> {
    const app = Fastify();
    app.addHook('onRequest', latchkey.allowedHostsGuard);
    await app.register(latchkey.plugin, { headless: true });
    await app.ready();
    return app;
  }

  /** Another client of the same kind on the same app, with its own cookies or token, at this one's address or at `ip`. */
  another(kind: 'browser' | 'app' = this.kind, options: { ip?: string } = {}): HeadlessTestClient {
    return new HeadlessTestClient(this.app, kind, this.latchkey, options.ip ?? this.remoteAddress);
  }

  url(path: string): string {
    return `/_allauth/${this.kind}/v1${path}`;
  }

  get = (path: string, options?: HeadlessRequestOptions) => this.request('GET', path, undefined, options);
  post = (path: string, body?: unknown, options?: HeadlessRequestOptions) => this.request('POST', path, body, options);
  put = (path: string, body?: unknown, options?: HeadlessRequestOptions) => this.request('PUT', path, body, options);
  patch = (path: string, body?: unknown, options?: HeadlessRequestOptions) => this.request('PATCH', path, body, options);
  delete = (path: string, body?: unknown, options?: HeadlessRequestOptions) => this.request('DELETE', path, body, options);

  async request(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, options: HeadlessRequestOptions = {}): Promise<HeadlessResponse> {
    const url = this.url(path);
    const headers: Record<string, string> = { host: 'testserver', ...options.headers };
    if (this.kind === 'app' && this.sessionToken !== undefined && !('x-session-token' in headers)) headers['x-session-token'] = this.sessionToken;
    let payload: string | Buffer | undefined = options.payload;
    if (this.kind === 'browser' && method !== 'GET' && options.csrf !== false) {
      if (!this.cookies.has('csrftoken')) await this.request('GET', '/auth/session');
      if (options.form === undefined) headers['x-csrftoken'] ??= this.cookies.get('csrftoken') ?? '';
    }
    if (options.form !== undefined) {
      const fields = this.kind === 'browser' && options.csrf !== false ? { csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '', ...options.form } : options.form;
      payload = new URLSearchParams(fields).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    if (payload === undefined && body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await this.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
      ...(this.kind === 'browser' ? { cookies: Object.fromEntries(this.cookies) } : {}),
      ...(this.remoteAddress === undefined ? {} : { remoteAddress: this.remoteAddress }),
    });
    await this.latchkey.deps.background.idle();
    if (this.kind === 'browser') this.remember(response);
    const parsed = response.body === '' ? {} : (JSON.parse(response.body) as HeadlessResponse['body']);
    if (this.kind === 'app') {
      const token: unknown = (parsed.meta as Json | undefined)?.session_token;
      if (typeof token === 'string') this.sessionToken = token;
      if (response.statusCode === 410) this.sessionToken = undefined;
    }
    if (options.validate !== false) {
      const problems = headlessSpec().problems(method, url.split('?')[0]!, response.statusCode, parsed);
      if (problems !== undefined) throw new Error(`${method} ${url} → ${response.statusCode} breaks the contract: ${problems}\n${response.body}`);
    }
    return { status: response.statusCode, body: parsed, headers: response.headers, raw: response };
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }
}
