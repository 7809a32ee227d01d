import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateOpenApi, OPENAPI_FILE } from './openapi';

describe('integrator documentation', () => {
  it('docs/openapi.json matches the code (run `npm run openapi` after changing a route)', async () => {
    const generated = JSON.parse(await generateOpenApi());
    const committed = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(committed).toEqual(generated);
  });

  it('documents every spec call, the envelope and X-API-Key with a worked example', async () => {
    const document = JSON.parse(await generateOpenApi());
    for (const path of [
      '/api/login.php',
      '/api/getUsers.php',
      '/api/addUser.php',
      '/keyapi/generate_key.php',
      '/api/reset_password.php',
    ]) {
      expect(Object.keys(document.paths)).toContain(path);
    }
    expect(document.components.securitySchemes.apiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(document.info.description).toContain('transactionId');
    expect(document.info.description).toContain('createCipheriv');
    expect(
      document.paths['/api/addUser.php'].post.requestBody.content['application/json'].schema.properties,
    ).toHaveProperty('permissions');
  });
});
