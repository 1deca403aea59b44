/**
 * The OAuth 2.0 base's requests to a provider: one at a time, through the injected fetch, with the
 * timeout, no redirect followed, and at most MAX_ANSWER_BYTES read; and the token endpoint's
 * answer read as JSON or form-encoded, as providers differ.
 */
import { describeNetworkFailure } from './network-errors.js';
import { ProviderError, type ProviderHttp } from './provider.js';

/** The most any answer from a provider may weigh: tokens and profiles are a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Provider-sent text in a log line: short, so a hostile provider cannot flood the logs. */
export function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A provider's answer, read whole (within MAX_ANSWER_BYTES); `where` names the endpoint without its query. */
export interface Answer {
  status: number;
  contentType: string;
  text: string;
  where: string;
}

/**
 * One request to the provider: through the injected fetch, no redirect followed (a token or a
 * bearer header must not travel to wherever a 302 points), the whole answer read within the
 * timeout. Any failure to get an answer is ProviderError('failed') naming the step.
 */
export async function requestOnce(id: string, step: string, url: URL, init: RequestInit, http: ProviderHttp): Promise<Answer> {
  const where = `${url.origin}${url.pathname}`;
  try {
    // The timeout's signal also governs reading the body: a server that sends headers and then stalls is cut off too.
    const response = await (http.fetch ?? globalThis.fetch)(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(http.timeoutSeconds * 1000) });
    const text = await readLimited(response);
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, where };
  } catch (error) {
    throw new ProviderError('failed', `${id}: ${step} to ${where} failed: ${describeNetworkFailure(error, http)}`);
  }
}

async function readLimited(response: Response): Promise<string> {
  if (Number(response.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  }
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    size += chunk.value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The token endpoint's answer (RFC 6749 §5.1) as parameters: JSON, or form-encoded as GitHub
 * answers unless asked for JSON. An error (§5.2, or GitHub's error in a 200), a non-2xx status,
 * an unreadable body or a missing access_token is ProviderError('failed').
 */
export function readTokenAnswer(id: string, answer: Answer): Record<string, unknown> {
  const fail = (message: string) => new ProviderError('failed', `${id}: the token endpoint ${answer.where} ${message}`);
  const parameters = parseParameters(answer);
  const error = typeof parameters?.error === 'string' ? parameters.error : undefined;
  const reported = error === undefined ? '' : ` error=${clip(error)} (${typeof parameters?.error_description === 'string' ? clip(parameters.error_description) : 'no description'})`;
  if (answer.status < 200 || answer.status > 299) throw fail(`answered HTTP ${answer.status}${reported}`);
  if (parameters === undefined) throw fail('answered neither JSON nor form-encoded parameters');
  if (error !== undefined) throw fail(`answered${reported}`);
  if (typeof parameters.access_token !== 'string' || parameters.access_token === '') throw fail('answered no access_token');
  return parameters;
}

function parseParameters(answer: Answer): Record<string, unknown> | undefined {
  const json = parseJsonObject(answer.text);
  if (json !== undefined || /json/i.test(answer.contentType)) return json;
  if (/^(application\/x-www-form-urlencoded|text\/plain)\b/i.test(answer.contentType)) return Object.fromEntries(new URLSearchParams(answer.text));
  return undefined;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `value` when it is a JSON object; else ProviderError('failed') saying what was expected. */
export function readJsonObject(id: string, what: string, value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new ProviderError('failed', `${id}: ${what} is not a JSON object`);
}
