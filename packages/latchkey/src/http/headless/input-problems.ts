import { fieldOf, type InputProblem } from '../kit/declared-input.js';
import type { HeadlessError } from './respond.js';
import { msg } from '../../core/i18n/message.js';

/**
 * What a route's declaration refused (kit/declared-input.ts), as the errors of allauth's envelope:
 * the field's declared refusal where it has one, else Django's form messages and codes; one error
 * for each field, naming it in `param`. A body that is not an object at all is one error about the
 * whole input, without a `param`.
 */
export function headlessInputErrors(problems: readonly InputProblem[]): HeadlessError[] {
  const errors: HeadlessError[] = [];
  const seen = new Set<string>();
  for (const problem of problems) {
    const param = fieldOf(problem);
    if (param === undefined) return [problem.keyword === 'type' ? { message: msg('Send a JSON object of fields.'), code: 'invalid' } : errorFor(problem)];
    if (seen.has(param)) continue;
    seen.add(param);
    errors.push({ ...errorFor(problem), param });
  }
  return errors;
}

function errorFor(problem: InputProblem): Omit<HeadlessError, 'param'> {
  if (problem.refusal) return problem.refusal;
  // A missing field is missing wherever it sits; nested in another field, that field is not valid.
  if (problem.keyword === 'required' && problem.instancePath === '') return { message: msg('This field is required.'), code: 'required' };
  if (problem.keyword === 'enum' && problem.instancePath.split('/').length === 2) return { message: msg('Select a valid choice.'), code: 'invalid_choice' };
  return { message: msg('Enter a valid value.'), code: 'invalid' };
}
