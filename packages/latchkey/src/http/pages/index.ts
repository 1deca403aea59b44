import type { FastifyInstance } from 'fastify';
import { registerLoginPages } from './login.js';
import type { PageDeps } from './page.js';

/** Every account page under /accounts/ (paths as allauth's, CONTRACT.md). */
export function registerAccountPages(scope: FastifyInstance, page: PageDeps): void {
  registerLoginPages(scope, page);
}
