/** How the import-django benchmark reads its clock and writes its figures. */
import { loadavg } from 'node:os';

export const MiB = 1024 * 1024;
export const count = (value: number): string => value.toLocaleString('en');
export const secondsSince = (started: number): number => (performance.now() - started) / 1000;
/** The load average over the last minute, as printed beside the figures. */
export const load = (): string => loadavg()[0]!.toFixed(1);

export const seconds = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
export const duration = (value: number): string => (value >= 60 ? `${Math.floor(value / 60)} min ${(value % 60).toFixed(0)} s` : `${value.toFixed(1)} s`);
export const gigabytes = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(2)} GB`;
