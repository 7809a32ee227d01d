/**
 * API_DOCS=off: Swagger UI's paths answer 404 like any unknown call, rather than falling through to the
 * console's index.html.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../core/errors';

const DOCS_PATHS = ['/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/*'];

export function registerDocsOff(app: FastifyInstance): void {
  const refuse = async (request: FastifyRequest) => {
    throw notFound(`No such call: ${request.method} ${request.url.split('?')[0]}`);
  };
  for (const url of DOCS_PATHS) app.get(url, { schema: { hide: true } }, refuse);
}
