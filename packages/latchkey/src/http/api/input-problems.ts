import { fieldOf, type InputProblem } from '../kit/declared-input.js';
import { expectDictionary, pythonTypeName } from './fields.js';

/**
 * What a view's declared body refused (kit/declared-input.ts), as Django REST framework's 400:
 * `{"field": ["message"]}` with DRF's serializer-field messages, every field's problem at once, and
 * `non_field_errors` for a body that is not an object of fields. Undefined when DRF would accept
 * the input after all: a number where text is declared is taken as its text, as DRF's CharField does.
 */
export function drfInputErrors(body: unknown, problems: readonly InputProblem[]): Record<string, string[]> | undefined {
  const whole = expectDictionary(body);
  if (!whole.ok) return { non_field_errors: [whole.error] };
  const errors: Record<string, string[]> = {};
  for (const problem of problems) {
    const field = fieldOf(problem);
    if (field === undefined || field in errors) continue;
    const message = problem.refusal?.message ?? drfMessage(problem);
    if (message !== undefined) errors[field] = [message];
  }
  return Object.keys(errors).length > 0 ? errors : undefined;
}

/** DRF's message for one problem, or undefined for one DRF does not have. */
function drfMessage(problem: InputProblem): string | undefined {
  const params = problem.params as Record<string, unknown>;
  const value: unknown = problem.data;
  switch (problem.keyword) {
    case 'required':
      return 'This field is required.';
    case 'type':
      return typeMessage(String(params.type), value);
    case 'enum':
      return `"${String(value)}" is not a valid choice.`;
    case 'maxLength':
      return `Ensure this field has no more than ${String(params.limit)} characters.`;
    case 'minLength':
      return `Ensure this field has at least ${String(params.limit)} characters.`;
    case 'maximum':
      return `Ensure this value is less than or equal to ${String(params.limit)}.`;
    case 'minimum':
      return `Ensure this value is greater than or equal to ${String(params.limit)}.`;
    default:
      return 'Invalid value.';
  }
}

function typeMessage(expected: string, value: unknown): string | undefined {
  if (value === null) return 'This field may not be null.';
  if (expected.split(',').includes('string')) return typeof value === 'number' && Number.isFinite(value) ? undefined : 'Not a valid string.';
  if (expected === 'boolean') return 'Must be a valid boolean.';
  if (expected === 'integer') return 'A valid integer is required.';
  if (expected === 'number') return 'A valid number is required.';
  if (expected === 'array') return `Expected a list of items but got type "${pythonTypeName(value)}".`;
  if (expected === 'object') return `Expected a dictionary of items but got type "${pythonTypeName(value)}".`;
  return 'Invalid value.';
}
