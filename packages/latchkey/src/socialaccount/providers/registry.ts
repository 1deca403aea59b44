/**
 * The registry (allauth's ProviderRegistry): the kinds of provider Latchkey signs in
 * with, by id. The library's own kinds are listed here; a project adds its own through
 * createLatchkey's `socialProviderKinds` (a provider built on the OAuth 2.0 base is one call of
 * oauth2ProviderKind, in one file), and the named kinds (catalogue/) join this list. Nothing
 * else names kinds: the directory, start-up's checks and the stored apps' flow all ask
 * the registry.
 */
import { LatchkeyError } from '../../core/errors.js';
import type { ProviderApp } from '../apps.js';
import { NAMED_PROVIDER_KINDS } from './catalogue/index.js';
import { dummyProviderKind } from './dummy.js';
import type { ProviderKind } from './kind.js';
import { openIdConnectProviderKind } from './openid-connect.js';
import { samlProviderKind } from './saml/provider.js';

/** The kinds every Latchkey knows, in the order an operator's form offers them. */
export const BUILT_IN_PROVIDER_KINDS: readonly ProviderKind[] = [openIdConnectProviderKind, samlProviderKind, ...NAMED_PROVIDER_KINDS, dummyProviderKind];

/** A kind's id: it is a URL segment (/accounts/<id>/login/) and a SocialApp.provider (30 characters at most). */
const KIND_ID = /^[a-z][a-z0-9_]{0,29}$/;

/** A kind's slug, the URL segment it is served at instead of its id: as an id, and "-" too. */
const KIND_SLUG = /^[a-z][a-z0-9_-]{0,29}$/;

export interface ProviderRegistry {
  /** The kind with this id; undefined for an id no one registered. */
  kind(id: string): ProviderKind | undefined;
  /** The kind served at a URL segment other than its id (ProviderKind.slug: `amazon-cognito`); undefined when none is. */
  kindWithSlug(slug: string): ProviderKind | undefined;
  /** Every kind, built-in ones first, in the order registered. */
  kinds(): readonly ProviderKind[];
  /** The kinds an operator may store an app of (ProviderKind.storable). */
  storableKinds(): readonly ProviderKind[];
}

/**
 * The registry of the built-in kinds and `extra` ones (a project's). Throws
 * LatchkeyError('configuration_invalid') for an id that is not a valid kind id, or that two
 * kinds claim: the later one would silently replace the earlier.
 */
export function createProviderRegistry(extra: readonly ProviderKind[] = []): ProviderRegistry {
  const byId = new Map<string, ProviderKind>();
  for (const kind of [...BUILT_IN_PROVIDER_KINDS, ...extra]) {
    if (!KIND_ID.test(kind.id)) {
      throw new LatchkeyError('configuration_invalid', `The social provider kind ${JSON.stringify(kind.id)} needs another id: lower-case letters, digits and "_", starting with a letter, at most 30 characters.`);
    }
    if (byId.has(kind.id)) throw new LatchkeyError('configuration_invalid', `Two social provider kinds are registered as "${kind.id}": give each its own id.`);
    byId.set(kind.id, kind);
  }
  const kinds = [...byId.values()];
  const bySlug = slugsOf(kinds);
  const storable = kinds.filter((kind) => kind.storable !== false);
  return {
    kind: (id) => byId.get(id),
    kindWithSlug: (slug) => bySlug.get(slug),
    kinds: () => kinds,
    storableKinds: () => storable,
  };
}

/**
 * The kinds with a slug, by it. Throws LatchkeyError('configuration_invalid') for a slug that is not
 * a URL segment, or that another kind is served at (as its id or its slug): its URLs would be ambiguous.
 */
function slugsOf(kinds: readonly ProviderKind[]): Map<string, ProviderKind> {
  const bySlug = new Map<string, ProviderKind>();
  for (const kind of kinds) {
    if (kind.slug === undefined || kind.slug === kind.id) continue;
    if (!KIND_SLUG.test(kind.slug)) {
      throw new LatchkeyError('configuration_invalid', `The social provider kind "${kind.id}" needs another slug than ${JSON.stringify(kind.slug)}: lower-case letters, digits, "-" and "_", starting with a letter, at most 30 characters.`);
    }
    const other = kinds.find((candidate) => candidate !== kind && (candidate.id === kind.slug || candidate.slug === kind.slug));
    if (other) throw new LatchkeyError('configuration_invalid', `The social provider kinds "${kind.id}" and "${other.id}" are both served at /accounts/${kind.slug}/: give each its own slug.`);
    bySlug.set(kind.slug, kind);
  }
  return bySlug;
}

/**
 * The app as every list and button shows it: with its own name, else its kind's ("GitHub", not
 * "github"), as allauth's provider.name is the app's name or the provider class's. An app of a kind
 * no one registered (a database row of a removed provider) keeps its id.
 */
export function withShownName(registry: Pick<ProviderRegistry, 'kind'>, app: ProviderApp): ProviderApp {
  return app.name !== '' ? app : { ...app, name: registry.kind(app.provider)?.name ?? app.id };
}

/**
 * The segment an app's URLs carry after /accounts/ (or /accounts/oidc/): its kind's slug when the
 * kind has one and the app goes by the kind's id (no provider_id of its own), else the app's id.
 */
export function urlSlugOf(registry: Pick<ProviderRegistry, 'kind'>, app: Pick<ProviderApp, 'provider' | 'id'>): string {
  const slug = registry.kind(app.provider)?.slug;
  return slug !== undefined && app.id === app.provider ? slug : app.id;
}
