import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { markAddressesVerified, type AddressesVerified } from '../../account/flows/mark-addresses-verified.js';
import type { EmailAddressSearch } from '../../account/ports.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, nmsg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { flash, redirect, renderPage, type FlashMessage } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { actionChoices, NOTHING_SELECTED, readBulkRequest, warnAndReturn } from './bulk-actions.js';
import { forbidden, requireStaff } from './guard.js';
import { flag, idParam, PER_PAGE, queryText, withQuery, yesNoFilter } from './list-query.js';
import { modelPages } from './paths.js';

/** The list's actions, by the value the action select sends (allauth's EmailAddressAdmin has one). */
const ACTIONS = { mark_verified: { label: msg('Mark selected email addresses as verified') } } as const;

/** The list's filters as its query string carries them, read from a request (the list's links, and the action form that posts back to it). */
function listQuery(request: FastifyRequest): Record<string, string> {
  const text = queryText(request.query);
  return { q: text('q').slice(0, 254), primary: flag(text('primary')) === undefined ? '' : text('primary'), verified: flag(text('verified')) === undefined ? '' : text('verified') };
}

/** The flash messages a finished action leaves: what was done, and each kind of address left alone. */
function outcomeMessages(result: AddressesVerified): FlashMessage[] {
  const emails = (addresses: readonly { email: string }[]) => addresses.map((address) => address.email).join(', ');
  const messages: FlashMessage[] = [];
  const verified = result.verified.length;
  if (verified > 0) messages.push({ level: 'success', text: nmsg('Marked {count} email address as verified.', 'Marked {count} email addresses as verified.', verified) });
  if (result.taken.length > 0) {
    messages.push({ level: 'warning', text: msg('Not marked verified, because another user has verified the same address: {addresses}.', { addresses: emails(result.taken) }) });
  }
  if (result.outOfReach.length > 0) {
    messages.push({ level: 'warning', text: msg('Not marked verified, because you may not change their user: {addresses}.', { addresses: emails(result.outOfReach) }) });
  }
  if (result.alreadyVerified.length > 0) messages.push({ level: 'info', text: msg('Already verified: {addresses}.', { addresses: emails(result.alreadyVerified) }) });
  const missing = result.missing.length;
  if (missing > 0) messages.push({ level: 'info', text: nmsg('{count} selected address no longer exists.', '{count} selected addresses no longer exist.', missing) });
  return messages;
}

/**
 * `<admin>/account/emailaddress/`: allauth's EmailAddressAdmin. The addresses, 100 a page, newest
 * first, each with its user; searched by the start of an address or of the user's login, filtered
 * by primary and verified; paged by id (a keyset, no count). Staff who may change addresses get
 * the action "Mark selected email addresses as verified": the selection posts back to the list,
 * which answers with a confirmation page listing the addresses, and only its "Yes" runs the flow.
 */
export function registerEmailAddressAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { settings } = ctx.deps;
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'account.emailaddress');
  const listPath = pages.list;
  const loginByEmail = settings.USERNAME_TYPE === 'email';

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'account.emailaddress', action: 'view' });
    if ('response' in staff) return staff.response;
    const query = listQuery(request);
    const after = idParam(queryText(request.query)('after'));
    const primary = flag(query.primary!);
    const verified = flag(query.verified!);
    const search: EmailAddressSearch = {
      text: query.q,
      limit: PER_PAGE + 1,
      ...(primary === undefined ? {} : { primary }),
      ...(verified === undefined ? {} : { verified }),
      ...(after === undefined ? {} : { afterId: after }),
    };
    const found = await ctx.deps.store.emailAddresses.search(search);
    const addresses = found.slice(0, PER_PAGE);
    return renderPage(ctx, request, reply, 'admin/emailaddress_list.html', {
      title: msg('Email addresses'),
      admin_root: root,
      list_path: listPath,
      // The action form posts back to this very page, so that the list it returns to keeps its filters.
      action_url: `${listPath}${withQuery(query, { after: after === undefined ? undefined : String(after) })}`,
      query,
      login_by_email: loginByEmail,
      addresses,
      may_change: staff.grants.may('account.emailaddress', 'change'),
      users_path: staff.grants.may('users.user', 'view') ? modelPages(urls, 'users.user').list : undefined,
      actions: actionChoices(ACTIONS),
      filters: [yesNoFilter(listPath, query, 'primary', msg('Primary')), yesNoFilter(listPath, query, 'verified', msg('Verified'))],
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(addresses.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    });
  });

  scope.post(pages.routes.list, async (request: FastifyRequest, reply: FastifyReply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'account.emailaddress', action: 'change' });
    if ('response' in staff) return staff.response;
    const query = listQuery(request);
    const after = idParam(queryText(request.query)('after'));
    const back = `${listPath}${withQuery(query, { after: after === undefined ? undefined : String(after) })}`;
    const bulk = await readBulkRequest(ctx, request, reply, ACTIONS, back);
    if ('response' in bulk) return bulk.response;
    const { action, ids } = bulk;

    if (!bulk.confirmed) {
      const addresses = await ctx.deps.store.emailAddresses.search({ ids, limit: ids.length });
      if (addresses.length === 0) return warnAndReturn(ctx, request, reply, NOTHING_SELECTED, back);
      return renderPage(ctx, request, reply, 'admin/emailaddress_confirm.html', {
        title: msg('Are you sure?'),
        admin_root: root,
        list_path: listPath,
        action_url: back,
        back_url: back,
        action: { value: action, label: ACTIONS[action].label },
        login_by_email: loginByEmail,
        addresses,
      });
    }

    let result: AddressesVerified;
    try {
      result = await markAddressesVerified(ctx.deps, staff.user, ids, clientOf(request));
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
      throw error;
    }
    for (const message of outcomeMessages(result)) await flash(ctx, request, reply, message);
    return redirect(reply, back);
  });
}
