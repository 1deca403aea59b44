import type { FastifyInstance } from 'fastify';
import { endOtherSessions } from '../../sessions/flows/end-sessions.js';
import type { StoredSession } from '../../sessions/model.js';
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
 * user-agent library would be a dependency for a label.
 */
export function describeBrowser(userAgent: string): string {
  const browser = BROWSERS.map(([pattern, name]) => [pattern.exec(userAgent), name] as const).find(([match]) => match !== null);
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const name = browser ? `${browser[1]} ${browser[0]?.[1] ?? ''}`.trim() : userAgent === '' ? 'Unknown browser' : 'Other browser';
  return system ? `${name} on ${system}` : name;
}

function formatTime(at: Date): { iso: string; text: string } {
  return { iso: at.toISOString(), text: `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC` };
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
    return renderPage(ctx, request, reply, 'account/sessions.html', { title: 'Sessions', sessions: rows, others: rows.filter((row) => !row.current).length });
  });

  scope.post(urls.route('usersessions_list'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const current = await ctx.sessions.session(request);
    const ended = await endOtherSessions(ctx.deps, signedIn.user, current);
    request.log.info({ userId: signedIn.user.id, ended, ip: clientOf(request).ip }, 'other sessions ended');
    const text = ended === 1 ? 'Signed out of 1 other session.' : `Signed out of ${ended} other sessions.`;
    await flash(ctx, request, reply, { level: 'success', text });
    return redirect(reply, urls.urlFor('usersessions_list'));
  });
}
