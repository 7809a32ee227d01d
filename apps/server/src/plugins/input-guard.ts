/**
 * Text the database cannot store is refused at the door. A NUL character in any string of a request
 * made PostgreSQL fail the query, and the call answered 500. A lone surrogate would have been stored
 * silently altered. One hook checks every route's body, query string and path parameters, after the
 * envelope is opened and before validation, so no route needs its own check, and future routes are
 * covered too. The check itself is the contract's `unstorableTextProblem`.
 */
import { unstorableTextProblem } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../core/errors';

export function registerInputGuard(app: FastifyInstance): void {
  // Registered after the envelope plugin: its preValidation hook runs first and opens the body.
  app.addHook('preValidation', async (request) => {
    const problem =
      unstorableTextProblem(request.params, 'params') ??
      unstorableTextProblem(request.query, 'query') ??
      unstorableTextProblem(request.body, 'body');
    if (problem) throw badRequest(problem);
  });
}
