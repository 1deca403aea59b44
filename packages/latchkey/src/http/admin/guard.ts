import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { adminGrantsOf, mayEnterAdmin, type AdminGrants } from '../../admin/access.js';
import type { AdminAction, AdminModel } from '../../admin/model.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { redirect, renderPage } from '../kit/html-page.js';

export interface StaffMember {
  user: User;
  grants: AdminGrants;
  /** When they last signed in or reauthenticated in this session: the admin flows ask it of sensitive changes. */
  lastAuthenticatedAt: Date | undefined;
}

/**
 * Who may see an admin page: a visitor who is not signed in is sent to the admin's login, which
 * returns here; a signed-in user who is not active staff, or lacks the page's permission, gets
 * 403 (Django's admin answers the same). Returns `{ response }` to send, or the staff member.
 */
export async function requireStaff(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  needs?: { model: AdminModel; action: AdminAction },
): Promise<StaffMember | { response: FastifyReply }> {
  const user = await ctx.sessions.currentUser(request);
  if (!user) return { response: redirect(reply, ctx.deps.urls.urlFor('admin:login', {}, { next: request.url })) };
  if (!mayEnterAdmin(user)) return { response: await forbidden(ctx, request, reply) };
  const grants = await adminGrantsOf(ctx.deps, user);
  if (needs && !grants.may(needs.model, needs.action)) return { response: await forbidden(ctx, request, reply) };
  return { user, grants, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
}

/**
 * The admin's 403 page; with `reason` when a flow said why (a superuser's account, staff who hold
 * more, one's own access), so that a refusal is never a mystery. The reason is a flow's message
 * (a LatchkeyError's `text`), translated by the page.
 */
export function forbidden(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, reason?: Message): Promise<FastifyReply> {
  return renderPage(ctx, request, reply, 'admin/forbidden.html', { title: msg('Permission denied'), admin_root: ctx.deps.urls.urlFor('admin:index'), reason }, 403);
}
