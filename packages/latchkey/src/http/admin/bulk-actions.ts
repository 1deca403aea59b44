import type { FastifyReply, FastifyRequest } from 'fastify';
import { msg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { flash, redirect } from '../kit/html-page.js';
import { bodyObject, textField } from '../kit/input.js';
import { idParam, PER_PAGE } from './list-query.js';

/**
 * What the admin's lists with bulk actions share (Django's admin actions): a select of actions and
 * a checkbox per row named `_selected_action`, posted back to the list itself; the list answers
 * with a confirmation page listing the rows, whose "Yes, I'm sure" posts again with `post=yes`.
 */

/** Django's messages for an action sent without one chosen, or without anything selected. */
export const NO_ACTION = msg('No action selected.');
export const NOTHING_SELECTED = msg('Items must be selected in order to perform actions on them. No items have been changed.');

/** The ids a bulk action was sent for (checkboxes named _selected_action, as Django's admin names them), each once; undefined for anything a list never sends. */
export function selectedIds(body: unknown): number[] | undefined {
  const value = bodyObject(body)._selected_action;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  const ids = new Set<number>();
  for (const item of values) {
    const id = typeof item === 'string' ? idParam(item) : undefined;
    if (id === undefined) return undefined;
    ids.add(id);
  }
  return ids.size > PER_PAGE ? undefined : [...ids];
}

export interface BulkRequest<A extends string> {
  action: A;
  ids: number[];
  /** Whether this is the confirmation page's "Yes" (else the list's Go, which asks first). */
  confirmed: boolean;
}

/**
 * The action and the selection a list's form posted, or `{ response }`: back to the list (`back`)
 * with Django's warning when no known action was chosen or nothing was selected.
 */
export async function readBulkRequest<A extends string>(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  actions: Readonly<Record<A, unknown>>,
  back: string,
): Promise<BulkRequest<A> | { response: FastifyReply }> {
  const action = textField(request.body, 'action') ?? '';
  if (!Object.hasOwn(actions, action)) return { response: await warnAndReturn(ctx, request, reply, NO_ACTION, back) };
  const ids = selectedIds(request.body);
  if (ids === undefined || ids.length === 0) return { response: await warnAndReturn(ctx, request, reply, NOTHING_SELECTED, back) };
  return { action: action as A, ids, confirmed: textField(request.body, 'post') === 'yes' };
}

/** Back to the list with a warning (an action that found nothing to act on, among others). */
export async function warnAndReturn(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, text: Message, back: string): Promise<FastifyReply> {
  await flash(ctx, request, reply, { level: 'warning', text });
  return redirect(reply, back);
}

/** The options of a list's action select, each label a message (msg()) the template translates. */
export function actionChoices<A extends string>(actions: Readonly<Record<A, { label: Message }>>, shown: (action: A) => boolean = () => true): { value: A; label: Message }[] {
  return (Object.entries(actions) as [A, { label: Message }][]).filter(([value]) => shown(value)).map(([value, action]) => ({ value, label: action.label }));
}
