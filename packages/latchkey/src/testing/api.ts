import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { LatchkeyError } from '../core/errors.js';
import { fieldErrors, notFound, type ApiRoutes } from '../http/api/views.js';
import { internalsOf } from '../latchkey.js';
import type { ProjectTestLatchkey } from './latchkey.js';

export interface ApiRequestOptions {
  /** Sent as `Authorization: Token <token>`. */
  token?: string;
  /** A JSON body (`application/json`). */
  json?: unknown;
  /** A form body (`application/x-www-form-urlencoded`). */
  form?: Record<string, string>;
  /** A raw body, with the content type given in `headers`. */
  body?: string;
  /** Sends this browser's CSRF token in X-CSRFToken (from its csrftoken cookie). */
  csrf?: boolean;
  headers?: Record<string, string | string[]>;
}

export interface ApiTestAppOptions {
  /** The project's views, as `latchkey.plugin`'s `api.routes`. */
  routes?: (api: ApiRoutes) => void;
  /** false leaves out the `api` option altogether: nothing under /api/ should exist. */
  api?: boolean;
  /** Also serve the headless API, as a generated project with use_drf=y does. */
  headless?: boolean;
  /** Collects the app's log lines (warnings and errors, as JSON text) for tests that read the log. */
  logLines?: string[];
}

/** A Fastify app with Latchkey mounted and the API layer turned on (unless `api: false`). */
export async function createApiTestApp(latchkey: ProjectTestLatchkey, options: ApiTestAppOptions = {}): Promise<FastifyInstance> {
  const { logLines } = options;
  const app = Fastify(logLines ? { logger: { level: 'warn', stream: { write: (line: string) => logLines.push(line) } } } : {});
  app.addHook('onRequest', latchkey.allowedHostsGuard);
  await app.register(latchkey.plugin, {
    ...(options.headless === true ? { headless: true } : {}),
    ...(options.api === false ? {} : { api: options.routes ? { routes: options.routes } : {} }),
  });
  await app.ready();
  return app;
}

/**
 * One client of the API layer through inject(): a script with a token, or a browser with a
 * cookie jar that can sign in through the login page first (for session authentication).
 */
export class ApiTestClient {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly app: FastifyInstance,
    private readonly latchkey: ProjectTestLatchkey,
    /** The address this client connects from (inject's default, 127.0.0.1, when undefined). */
    private readonly remoteAddress?: string,
  ) {}

  /** Another client of the same app, with no cookies, at this one's address or at `ip`. */
  another(options: { ip?: string } = {}): ApiTestClient {
    return new ApiTestClient(this.app, this.latchkey, options.ip ?? this.remoteAddress);
  }

  private get from(): { remoteAddress?: string } {
    return this.remoteAddress === undefined ? {} : { remoteAddress: this.remoteAddress };
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }

  async request(method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS', url: string, options: ApiRequestOptions = {}): Promise<LightMyRequestResponse> {
    const headers: Record<string, string | string[]> = { host: 'testserver' };
    let payload: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(options.form).toString();
    } else if (options.body !== undefined) {
      payload = options.body;
    }
    if (options.token !== undefined) headers.authorization = `Token ${options.token}`;
    if (options.csrf === true) headers['x-csrftoken'] = this.cookies.get('csrftoken') ?? '';
    Object.assign(headers, options.headers);
    const response = await this.app.inject({ method, url, headers, cookies: Object.fromEntries(this.cookies), ...(payload === undefined ? {} : { payload }), ...this.from });
    this.remember(response);
    await internalsOf(this.latchkey).deps.background.idle();
    return response;
  }

  /** Signs in through the login page, as a person in a browser would; returns the login's response. */
  async logIn(login: string, password: string): Promise<LightMyRequestResponse> {
    const page = await this.app.inject({ method: 'GET', url: '/accounts/login/', headers: { host: 'testserver' }, cookies: Object.fromEntries(this.cookies), ...this.from });
    this.remember(page);
    const form = new URLSearchParams({ csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '', login, password });
    const response = await this.app.inject({
      method: 'POST',
      url: '/accounts/login/',
      payload: form.toString(),
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
      cookies: Object.fromEntries(this.cookies),
      ...this.from,
    });
    this.remember(response);
    await internalsOf(this.latchkey).deps.background.idle();
    return response;
  }
}

/**
 * Views a test project registers through `api.routes`, to exercise authentication, permissions
 * and error shapes: what a project's own API looks like to Latchkey.
 */
export function registerTestApiViews(api: ApiRoutes): void {
  api.view('/api/whoami/', {
    tag: 'test',
    methods: {
      get: {
        summary: 'The requesting user',
        responses: { 200: { type: 'object', properties: { username: { type: 'string' }, email: { type: 'string' }, url: { type: 'string' } } } },
        // The whole user as well, password hash and all: only the declared fields may go out.
        handler: (_request, _reply, user) => Promise.resolve({ ...user, url: api.absoluteUrl(`/api/users/${user?.id}/`) }),
      },
      post: {
        summary: 'Echo the body',
        requestBody: { type: 'object' },
        responses: { 201: { type: 'object' } },
        handler: (request, reply, user) => {
          reply.code(201);
          return Promise.resolve({ username: user?.username, received: request.body ?? null });
        },
      },
    },
  });
  api.view('/api/open/', {
    permission: 'allow_any',
    tag: 'test',
    methods: {
      get: { summary: 'Anyone', responses: { 200: { type: 'object' } }, handler: (_request, _reply, user) => Promise.resolve({ username: user?.username ?? null }) },
      post: { summary: 'Anyone may post', responses: { 200: { type: 'object' } }, handler: (request, _reply, user) => Promise.resolve({ username: user?.username ?? null, received: request.body ?? null }) },
    },
  });
  api.view('/api/staff-only/', {
    permission: 'staff',
    tag: 'test',
    methods: { get: { summary: 'Staff only <script>alert(1)</script>', responses: { 200: { type: 'object' } }, handler: () => Promise.resolve({ ok: true }) } },
  });
  api.view('/api/items/:id/', {
    tag: 'items',
    methods: {
      get: {
        summary: 'One item',
        responses: { 200: { type: 'object' }, 404: { $ref: '#/components/schemas/Error' } },
        handler: (request) => {
          const { id } = request.params as { id: string };
          if (id !== '1') throw notFound();
          return Promise.resolve({ id: 1 });
        },
      },
      patch: {
        summary: 'Change an item',
        requestBody: { type: 'object', properties: { name: { type: 'string' } } },
        responses: { 200: { type: 'object' }, 400: { $ref: '#/components/schemas/ValidationError' } },
        handler: (request) => {
          const body = request.body as Record<string, unknown> | undefined;
          if (body?.flow === 'refuse') throw new LatchkeyError('invalid_input', 'The name is taken.', { param: 'name' });
          if (typeof body?.name !== 'string') throw fieldErrors({ name: ['This field is required.'] });
          return Promise.resolve({ id: 1, name: body.name });
        },
      },
      delete: { summary: 'Delete an item', responses: { 204: { description: 'Deleted.' } }, handler: () => Promise.resolve(undefined) },
    },
  });
  // A body declared field by field: the declaration refuses what does not fit (kit/declared-input.ts).
  api.view('/api/notes/', {
    tag: 'notes',
    methods: {
      post: {
        summary: 'Add a note',
        requestBody: {
          type: 'object',
          required: ['title', 'stars'],
          properties: {
            title: { type: 'string', maxLength: 20 },
            stars: { type: 'integer', minimum: 1, maximum: 5 },
            colour: { type: 'string', enum: ['red', 'green'] },
            pinned: { type: 'boolean' },
          },
        },
        responses: { 201: { type: 'object' }, 400: { $ref: '#/components/schemas/ValidationError' } },
        handler: (request, reply) => {
          reply.code(201);
          return Promise.resolve({ received: request.body });
        },
      },
    },
  });
  api.view('/api/broken/', {
    permission: 'allow_any',
    methods: {
      get: {
        summary: 'Fails',
        responses: { 200: { type: 'object' } },
        handler: () => Promise.reject(new Error('relation "secret_table" does not exist at db.internal:5432')),
      },
    },
  });
}
