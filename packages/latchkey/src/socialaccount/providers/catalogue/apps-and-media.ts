/**
 * Apps and media services: chat, streaming, music, files, meetings, workspaces, design, creators and
 * sport. Each is an OAuth 2.0 provider described in its own file.
 */
import type { ProviderKind } from '../kind.js';
import { discordProviderKind } from './discord.js';
import { dropboxProviderKind } from './dropbox.js';
import { figmaProviderKind } from './figma.js';
import { notionProviderKind } from './notion.js';
import { patreonProviderKind } from './patreon.js';
import { spotifyProviderKind } from './spotify.js';
import { stravaProviderKind } from './strava.js';
import { twitchProviderKind } from './twitch.js';
import { zoomProviderKind } from './zoom.js';

export const APPS_AND_MEDIA_PROVIDER_KINDS: readonly ProviderKind[] = [
  discordProviderKind,
  twitchProviderKind,
  spotifyProviderKind,
  dropboxProviderKind,
  zoomProviderKind,
  notionProviderKind,
  figmaProviderKind,
  patreonProviderKind,
  stravaProviderKind,
];
