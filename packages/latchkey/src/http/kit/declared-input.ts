import { Ajv, type ErrorObject } from 'ajv';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';

/**
 * Validating a route's input against what its `schema` declares: the body and the query, the same
 * declaration the OpenAPI documents are made from (so what the docs say is required is what the
 * server requires). The declaration checks the input's shape: that it is an object, which fields
 * it must have, each field's type and allowed values. What a field means (a valid address, a
 * strong password, a live key) is the flow's to check, with the messages allauth and DRF give.
 *
 * A refused input does not end the request at once: each route is given `attachValidation`, and
 * its scope answers the problems in its own shape (the headless envelope, DRF's field errors) at
 * the point its contract refuses input: after the CSRF check and, in the token API, after
 * authentication and permissions, so that nothing is learned from a body before then.
 */

type Json = Record<string, unknown>;

/**
 * The answer a field's declaration gives when the field is missing or not of its declared shape,
 * where the contract names one of its own (allauth answers a missing reset key as an invalid
 * link, not as a missing field): `'x-refusal': { message, code }` beside the field's schema. The
 * OpenAPI documents carry it as the specification extension it is.
 */
export interface DeclaredRefusal {
  message: string;
  code: string;
}
export const REFUSAL_KEYWORD = 'x-refusal';

/** What the declaration found wrong with one part of the input: ajv's error, with the field's declared refusal. */
export type InputProblem = ErrorObject & { refusal?: DeclaredRefusal };

/** The parts of a request a declaration is checked against; headers and path parameters are the flows' to read. */
const VALIDATED_PARTS = new Set(['body', 'querystring']);

/**
 * A validator compiler for one scope, knowing its named shapes (the `$id`s its routes refer to).
 * Types are not coerced (`"1"` is not a number, `1` not a string), defaults are not filled in and
 * nothing is removed: the handler reads the input as it was sent. Formats are documentation only.
 * A schema that ajv cannot compile (a project's view declaring a malformed body) fails at start-up.
 */
export function declaredInputCompiler(shapes: readonly Json[]): FastifySchemaCompiler<unknown> {
  // verbose: each problem carries the value it is about, for messages that name its type.
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, coerceTypes: false, useDefaults: false, removeAdditional: false, validateFormats: false });
  for (const shape of shapes) ajv.addSchema(shape);
  const resolved = (schema: unknown): Json | undefined => {
    if (schema === null || typeof schema !== 'object') return undefined;
    const ref = (schema as Json).$ref;
    return typeof ref === 'string' ? (ajv.getSchema(ref)?.schema as Json | undefined) : (schema as Json);
  };
  /** The refusal declared deepest along a path of field names (a nested field's own, else its parent's). */
  const refusalAt = (root: Json, path: readonly string[]): DeclaredRefusal | undefined => {
    let refusal: DeclaredRefusal | undefined;
    let node = resolved(root);
    for (const name of path) {
      const property = (node?.properties as Json | undefined)?.[name] as Json | undefined;
      if (property === undefined) break;
      refusal = (property[REFUSAL_KEYWORD] as DeclaredRefusal | undefined) ?? refusal;
      node = resolved(property);
    }
    return refusal;
  };
  return ({ schema, httpPart }) => {
    if (!VALIDATED_PARTS.has(httpPart ?? '')) return () => true;
    const validate = ajv.compile(schema as Json);
    // Fastify reads the problems from the function's `errors`, as from ajv's own.
    const check = (data: unknown): boolean => {
      // No body at all is read as no fields (as DRF and Django's forms read it): each required one is missing.
      if (validate(httpPart === 'body' && data === undefined ? {} : data)) {
        check.errors = null;
        return true;
      }
      const problems = (validate.errors ?? []).filter((problem) => !isAboutAlternatives(problem));
      check.errors = problems.length === 0 ? null : problems.map((problem): InputProblem => {
        const refusal = refusalAt(schema as Json, pathOf(problem));
        return refusal ? { ...problem, refusal } : problem;
      });
      return check.errors === null;
    };
    check.errors = null as InputProblem[] | null;
    return check;
  };
}

/**
 * Alternatives (`anyOf: [{required: ['username']}, {required: ['email']}]`) document which of
 * several fields will do; which one the input meant, and what to say when none is there, is the
 * flow's to decide, in its own words.
 */
function isAboutAlternatives(problem: ErrorObject): boolean {
  return /\/(anyOf|oneOf)(\/|$)/.test(problem.schemaPath);
}

/** The field names a problem is about, outermost first: its place in the input, and the missing field of a `required`. */
function pathOf(problem: ErrorObject): string[] {
  const steps = problem.instancePath.split('/').slice(1).map(decodePointer);
  if (problem.keyword === 'required') steps.push(String((problem.params as { missingProperty: string }).missingProperty));
  return steps;
}

/** Gives every route of the scope `attachValidation`: its refusals are answered by the scope (see above). */
export function answerInputProblemsInScope(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    route.attachValidation = true;
  });
}

/** The problems the declaration found with the request's input, if any. */
export function inputProblemsOf(request: { validationError?: Error & { validation?: unknown } }): InputProblem[] | undefined {
  const problems = request.validationError?.validation;
  return Array.isArray(problems) && problems.length > 0 ? (problems as InputProblem[]) : undefined;
}

/** The top-level field a problem is about (`/token/client_id` is about `token`); undefined for the input as a whole. */
export function fieldOf(problem: InputProblem): string | undefined {
  return pathOf(problem)[0];
}

/** A JSON pointer's step as the key it names (`~1` is `/`, `~0` is `~`). */
function decodePointer(step: string): string {
  return step.replace(/~1/g, '/').replace(/~0/g, '~');
}
