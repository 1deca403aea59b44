import type { FastifyInstance } from 'fastify';
import { endOtherSessions } from '../../sessions/flows/end-sessions.js';
import type { StoredSession } from '../../sessions/model.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf } from '../kit/request-info.js';
import { flash, redirect, renderPage, requireUser } from './page.js';

/** Browser families, most specific first: Edge and Opera also say "Chrome", and Chrome also says "Safari". */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/\bcurl\/(\d+)/, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

/**
 * A short description ("Firefox 128 on Linux") of a user agent, so a person can tell their own
 * devices apart. Only the family and the major version: enough to recognise a device, and a
 * user-agent library would be a dependency for a label. A message, translated where it is shown;
 * a browser's and a system's names are names, never message ids ("curl 8" alone is shown as it is).
 */
export function describeBrowser(userAgent: string): Message | string {
  const browser = BROWSERS.map(([pattern, name]) => [pattern.exec(userAgent), name] as const).find(([match]) => match !== null);
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (!browser) {
    if (userAgent === '') return msg('Unknown browser');
    return system ? msg('Other browser on {system}', { system }) : msg('Other browser');
  }
  const name = `${browser[1]} ${browser[0]?.[1] ?? ''}`.trim();
  return system ? msg('{browser} on {system}', { browser: name, system }) : name;
}

/**
 * A moment as the sessions page shows it: `iso` for the `datetime` attribute, `at` for the
 * template's `date` filter (the reader's language), and `text`, "2030-01-01 00:00 UTC".
 */
/** A time for the page: ISO for the `datetime` attribute, and the Date the template writes in the reader's language (`| date`). */
function formatTime(at: Date): { iso: string; at: Date } {
  return { iso: at.toISOString(), at };
}

function describeSession(session: StoredSession, currentIdHash: string | undefined) {
  return {
    created: formatTime(session.createdAt),
    last_seen: formatTime(session.lastSeenAt),
    ip: session.ipAddress,
    browser: describeBrowser(session.userAgent),
    // Compared by hash: the page never holds or shows another session's id.
    current: session.idHash === currentIdHash,
  };
}

/** The sessions page (usersessions_list): the user's live sessions, and a POST that ends all but this one. */
export function registerSessionPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  scope.get(urls.route('usersessions_list'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const current = await ctx.sessions.session(request);
    const sessions = await ctx.deps.sessions.listForUser(signedIn.user.id);
    const rows = sessions.map((session) => describeSession(session, current?.idHash));
    return renderPage(ctx, request, reply, 'account/sessions.html', { title: msg('Sessions'), sessions: rows, others: rows.filter((row) => !row.current).length });
  });

  scope.post(urls.route('usersessions_list'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const current = await ctx.sessions.session(request);
    const ended = await endOtherSessions(ctx.deps, signedIn.user, current);
    request.log.info({ userId: signedIn.user.id, ended, ip: clientOf(request).ip }, 'other sessions ended');
    await flash(ctx, request, reply, { level: 'success', text: nmsg('Signed out of {count} other session.', 'Signed out of {count} other sessions.', ended) });
    return redirect(reply, urls.urlFor('usersessions_list'));
  });
}
