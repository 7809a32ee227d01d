export interface Credentials {
  email: string;
  password: string;
}

/**
 * A plain-JSON client of the API with a console session, as an integrator's script sends it: the
 * browser tests arrange and check state with it, the benchmarks load the server with it. A call that
 * does not answer 2xx throws with the path, the status and the start of the body.
 */
export class ApiClient {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  /** Signs in at `POST /api/login.php`; `headers` are added to that request (e.g. `x-login-client`). */
  static async login(
    base: string,
    user: Credentials,
    headers: Record<string, string> = {},
  ): Promise<ApiClient> {
    const response = await fetch(`${base}/api/login.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    const body = (await response.json()) as { token?: string; message?: string };
    if (!response.ok || !body.token)
      throw new Error(`login failed: ${response.status} ${body.message ?? ''}`);
    return new ApiClient(base, body.token);
  }

  async post<T>(path: string, payload: unknown): Promise<T> {
    return this.parse<T>(
      path,
      await fetch(`${this.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.token },
        body: JSON.stringify(payload),
      }),
    );
  }

  async get<T>(path: string): Promise<T> {
    return this.parse<T>(path, await fetch(`${this.base}${path}`, { headers: { 'x-api-key': this.token } }));
  }

  /** Uploads a CSV to a bulk script (`/api/<script>`, multipart, as the console does). */
  async upload<T>(
    script: string,
    fileName: string,
    csv: string,
    fields: Record<string, string> = {},
  ): Promise<T> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([csv], { type: 'text/csv' }), fileName);
    return this.parse<T>(
      script,
      await fetch(`${this.base}/api/${script}`, {
        method: 'POST',
        headers: { 'x-api-key': this.token },
        body: form,
      }),
    );
  }

  private async parse<T>(path: string, response: Response): Promise<T> {
    const text = await response.text();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}
