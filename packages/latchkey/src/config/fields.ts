import { z } from 'zod';

/**
 * A setting's type: how a value from the project's settings file is checked, how a value from an
 * environment variable (always a string) is read, and how the allowed values are described in
 * the one-line error that stops start-up.
 */
export interface SettingField<T> {
  schema: z.ZodType<T>;
  fromEnv(raw: string): unknown;
  allowed: string;
}

function field<T>(schema: z.ZodType<T>, allowed: string, fromEnv: (raw: string) => unknown = (raw) => raw): SettingField<T> {
  return { schema, allowed, fromEnv };
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return Symbol('invalid JSON');
  }
}

/** Comma-separated on the command line, or a JSON array for values that contain commas. */
function parseList(raw: string): unknown {
  const trimmed = raw.trim();
  if (trimmed.startsWith('[')) return parseJson(trimmed);
  return trimmed === '' ? [] : trimmed.split(',').map((item) => item.trim());
}

export const booleanField = (): SettingField<boolean> =>
  field(z.boolean(), 'true or false', (raw) => (raw === 'true' ? true : raw === 'false' ? false : raw));

export const integerField = (min: number, max = Number.MAX_SAFE_INTEGER): SettingField<number> =>
  field(z.number().int().min(min).max(max), `a whole number from ${min} to ${max}`, (raw) =>
    /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw,
  );

export const enumField = <const V extends readonly [string, ...string[]]>(values: V): SettingField<V[number]> =>
  field(z.enum(values), `one of ${values.join(', ')}`);

export const stringField = (allowed = 'a non-empty string', pattern?: RegExp): SettingField<string> =>
  field(pattern ? z.string().min(1).regex(pattern) : z.string().min(1), allowed);

/** A string matching `pattern`, which may allow the empty string (unlike stringField). */
export const patternField = (allowed: string, pattern: RegExp): SettingField<string> => field(z.string().regex(pattern), allowed);

export const optionalStringField = (allowed: string, pattern?: RegExp): SettingField<string | null> =>
  field((pattern ? z.string().regex(pattern) : z.string().min(1)).nullable(), allowed, (raw) => (raw === '' ? null : raw));

export const listField = <const V extends readonly [string, ...string[]]>(values: V, minItems = 0): SettingField<V[number][]> =>
  field(
    z
      .array(z.enum(values))
      .min(minItems)
      .refine((items) => new Set(items).size === items.length),
    `a comma-separated list of ${values.join(', ')}, each at most once`,
    parseList,
  );

export const stringListField = (allowed: string, item: z.ZodType<string> = z.string().min(1)): SettingField<string[]> =>
  field(z.array(item), allowed, parseList);

export const jsonObjectField = <T>(schema: z.ZodType<T>, allowed: string): SettingField<T> =>
  field(schema, allowed, parseJson);
